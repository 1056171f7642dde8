"""A picture of runs' curves: each curve (RUN/proof/curve-*/curve.json, `shogi-zero
curve`) as a line of its score against the learner step, and beside it against the run
clock's minutes, in one SVG file that needs nothing to draw it.

    python curve_plot.py --out curves.svg RUN [RUN ...]

A line is named by its run, its opponent and its search (the plain search where the
curve's directory name holds `-plain`); its points are the curve's, in step order. One
colour an opponent and search, one dash a run; the grey dashed line marks an even score. Only the curves of RUN/proof are read; a run without
any is an error.
"""

import argparse
import json
import pathlib
import sys

WIDTH, HEIGHT = 460, 300
MARGIN = dict(left=50, right=15, top=30, bottom=40)
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
DASHES = ["", "6,3", "2,3", "8,3,2,3"]


def score(point: dict) -> float:
    """A point's score: wins and half the draws over its games."""
    games = point["wins"] + point["draws"] + point["losses"]
    return (point["wins"] + 0.5 * point["draws"]) / games if games else 0.5


def read_curves(run: pathlib.Path) -> list[dict]:
    curves = []
    for path in sorted(run.glob("proof/curve-*/curve.json")):
        data = json.loads(path.read_text())
        points = sorted(data.get("points", []), key=lambda p: p["step"])
        if not points:
            continue
        search = "plain" if "-plain" in path.parent.name else "play"
        curves.append(
            dict(
                label=f"{run.name}: {data['opponent']}, {search}",
                run=run.name,
                kind=(data["opponent"], search),
                points=[(p["step"], p["minutes"], score(p)) for p in points],
            )
        )
    return curves


def panel(curves, axis: int, x0: float, title: str, unit: str, styles) -> list[str]:
    """One plot of the curves' scores against point field `axis` (0 step, 1 minutes),
    its left edge at x0."""
    xs = [p[axis] for c in curves for p in c["points"]]
    hi = max(xs) * 1.05 or 1.0
    left, top = x0 + MARGIN["left"], MARGIN["top"]
    w = WIDTH - MARGIN["left"] - MARGIN["right"]
    h = HEIGHT - MARGIN["top"] - MARGIN["bottom"]

    def px(v):
        return left + w * v / hi

    def py(score):
        return top + h * (1.0 - score)

    out = [
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#444"/>',
        f'<text x="{left + w / 2}" y="{top - 10}" text-anchor="middle" font-weight="bold">{title}</text>',
        f'<text x="{left + w / 2}" y="{HEIGHT - 5}" text-anchor="middle">{unit}</text>',
        f'<line x1="{left}" y1="{py(0.5)}" x2="{left + w}" y2="{py(0.5)}" stroke="#999" stroke-dasharray="4,4"/>',
    ]
    for k in range(0, 11, 2):
        y = py(k / 10)
        out.append(f'<text x="{left - 6}" y="{y + 4}" text-anchor="end">{k * 10}%</text>')
    step = nice_step(hi)
    v = 0.0
    while v <= hi:
        out.append(f'<text x="{px(v)}" y="{top + h + 15}" text-anchor="middle">{v:g}</text>')
        v += step
    for curve in curves:
        colour, dash = styles[curve["label"]]
        pts = " ".join(f"{px(p[axis]):.1f},{py(p[2]):.1f}" for p in curve["points"])
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.8"{dashed}/>')
        for p in curve["points"]:
            out.append(f'<circle cx="{px(p[axis]):.1f}" cy="{py(p[2]):.1f}" r="2.5" fill="{colour}"/>')
    return out


def nice_step(span: float) -> float:
    """A round tick spacing giving about five ticks over `span`."""
    raw = span / 5
    scale = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * scale:
            return m * scale
    return 10 * scale


def svg(curves: list[dict]) -> str:
    kinds = sorted({c["kind"] for c in curves})
    runs = sorted({c["run"] for c in curves})
    styles = {
        c["label"]: (
            COLOURS[kinds.index(c["kind"]) % len(COLOURS)],
            DASHES[runs.index(c["run"]) % len(DASHES)],
        )
        for c in curves
    }
    legend_h = 16 * len(curves) + 10
    total_h = HEIGHT + legend_h
    body = panel(curves, 0, 0, "score against learner steps", "learner step", styles)
    body += panel(curves, 1, WIDTH, "score against the run's minutes", "minutes of run clock", styles)
    for k, c in enumerate(curves):
        colour, dash = styles[c["label"]]
        y = HEIGHT + 12 + 16 * k
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(f'<line x1="60" y1="{y - 4}" x2="90" y2="{y - 4}" stroke="{colour}" stroke-width="1.8"{dashed}/>')
        body.append(f'<text x="96" y="{y}">{c["label"]}</text>')
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * WIDTH}" height="{total_h}" '
        f'font-family="sans-serif" font-size="11">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=pathlib.Path)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()
    curves = []
    for run in args.runs:
        found = read_curves(run)
        if not found:
            print(f"error: {run} has no curve (no {run}/proof/curve-*/curve.json with points)", file=sys.stderr)
            return 2
        curves += found
    args.out.write_text(svg(curves))
    print(f"{len(curves)} curves drawn to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
