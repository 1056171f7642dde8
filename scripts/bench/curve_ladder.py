"""A run's curves on the ladder in one fit: every network a curve measured (each learner
step, with the play search and with the plain one) rated with the ladder's rungs in one
joint Bradley-Terry fit (ladder_fit.fit), so the points of curves against different
depths land on one Elo scale.

    python curve_ladder.py RUN [LADDER_DIR]

reads every RUN/proof/curve-*/curve.json whose opponent is a rung (`random` or
`alphabeta:depth=N`, network-free and the same on every machine): a point there is a
pairing of the network at that step against the opponent (its wins, draws and losses; a
curve directory whose name holds `-plain` measured the plain search, `curve --plain`).
The rungs' games against each other come from LADDER_DIR/pairs.tsv (default RUN/ladder,
what `ladder.sh RUN` writes; its own network rows, `net` and `net-plain`, join the fit as
the step of the run's best network). Without a rung-against-rung pairing joining two
depths (or a network that played both), their networks' ratings are not on one scale:
the script then says which rungs are apart and exits 2.

Prints a table (step, minutes, Elo of each search with its 95% interval) and writes
RUN/proof/curve-ladder.json. Anchor: alphabeta:depth=1 = 0 Elo where it is a rung.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ladder_fit  # noqa: E402

RUNG = re.compile(r"^(random|alphabeta:depth=\d+)$")


def player_name(step, plain):
    return f"step {step}" + (" plain" if plain else "")


def curve_pairs(run):
    """(pairs, minutes by step) from RUN/proof/curve-*/curve.json: a pairing per point
    against a rung, named by step and search."""
    proof = os.path.join(run, "proof")
    pairs, minutes = [], {}
    names = sorted(os.listdir(proof)) if os.path.isdir(proof) else []
    for name in names:
        path = os.path.join(proof, name, "curve.json")
        if not name.startswith("curve-") or not os.path.isfile(path):
            continue
        curve = json.load(open(path))
        opponent = curve.get("opponent", "")
        if not RUNG.match(opponent):
            continue
        plain = "-plain" in name
        for point in curve.get("points", []):
            step = int(point["step"])
            minutes.setdefault(step, point.get("minutes"))
            pairs.append((player_name(step, plain), opponent,
                          point["wins"], point["draws"], point["losses"]))
    return pairs, minutes


def best_step(run):
    """The learner step of RUN's best network (RUN/BEST), or None."""
    try:
        best = open(os.path.join(run, "BEST")).read().strip()
    except OSError:
        return None
    m = re.search(r"step-0*(\d+)", best)
    return int(m.group(1)) if m else None


def ladder_pairs(ladder_dir, run):
    """The pairings of a ladder.sh directory: its rung-against-rung matches, and its
    network's (`net`, `net-plain`) renamed to the run's best step."""
    if not os.path.isfile(os.path.join(ladder_dir, "pairs.tsv")):
        return []
    pairs, _ = ladder_fit.read_pairs(ladder_dir)
    step = best_step(run)
    renamed = []
    for a, b, w, d, l in pairs:
        if a in ("net", "net-plain"):
            if step is None:
                continue
            a = player_name(step, a == "net-plain")
        renamed.append((a, b, w, d, l))
    return renamed


def connected(players, pairs):
    """The players' groups joined by pairings (one group: one scale)."""
    group = {p: {p} for p in players}
    for a, b, *_ in pairs:
        if group[a] is not group[b]:
            merged = group[a] | group[b]
            for p in merged:
                group[p] = merged
    return list({id(g): g for g in group.values()}.values())


def main(argv):
    if not argv or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    run = argv[0]
    ladder_dir = argv[1] if len(argv) > 1 else os.path.join(run, "ladder")
    pairs, minutes = curve_pairs(run)
    if not pairs:
        print(f"curve_ladder: no curve against a rung in {run}/proof", file=sys.stderr)
        return 2
    pairs += ladder_pairs(ladder_dir, run)
    players = list(dict.fromkeys(p for a, b, *_ in pairs for p in (a, b)))
    rungs = sorted({p for p in players if RUNG.match(p)})
    groups = connected(players, pairs)
    if len(groups) > 1:
        apart = [sorted(p for p in g if RUNG.match(p)) for g in groups]
        print(f"curve_ladder: no games join these rungs into one scale "
              f"({' | '.join(', '.join(a) for a in apart)}); the rung-against-rung "
              f"matches of `ladder.sh {run}` in {ladder_dir} would", file=sys.stderr)
        return 2
    anchor = "alphabeta:depth=1" if "alphabeta:depth=1" in rungs else rungs[0]
    r, sd = ladder_fit.fit(players, pairs, anchor)

    def cell(name):
        if name not in r:
            return f"{'-':>20}"
        return f"{r[name]:>+6.0f} [{r[name] - 1.96 * sd[name]:+.0f}, {r[name] + 1.96 * sd[name]:+.0f}]".rjust(20)

    print(f"{run}: its curves on the ladder (anchor {anchor} = 0 Elo; one Bradley-Terry fit, 95% intervals)")
    print(f"{'step':>7} {'minutes':>8} {'play search':>20} {'plain search':>20}")
    steps = sorted({int(p.split()[1]) for p in players if p.startswith("step ")})
    for step in steps:
        m = minutes.get(step)
        shown = f"{m:.0f}" if m is not None else "-"
        print(f"{step:>7} {shown:>8} {cell(player_name(step, False))} {cell(player_name(step, True))}")
    for rung in sorted(rungs, key=lambda p: r[p]):
        print(f"{rung:>20} {r[rung]:>+6.0f} [{r[rung] - 1.96 * sd[rung]:+.0f}, {r[rung] + 1.96 * sd[rung]:+.0f}]")
    out = os.path.join(run, "proof", "curve-ladder.json")
    json.dump({"anchor": anchor,
               "ratings": {p: {"elo": r[p], "low": r[p] - 1.96 * sd[p], "high": r[p] + 1.96 * sd[p]}
                           for p in players},
               "minutes": {str(s): minutes.get(s) for s in steps},
               "pairs": [{"a": a, "b": b, "wins": w, "draws": d, "losses": l}
                         for a, b, w, d, l in pairs]},
              open(out, "w"), indent=2)
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
