"""The ladder's joint Bradley-Terry (Elo) fit, run by ladder.sh and importable by tests.

    python ladder_fit.py OUT NET SIMULATIONS RUNG...

reads OUT/pairs.tsv (player A, player B, match directory per line; the match's
summary.json gives A's wins, draws and losses), fits every player's Elo at once with
the anchor (alphabeta:depth=1 when it is a rung, else the first rung) fixed at 0, and
prints the table and writes OUT/ladder.json.

The model: A scores against B with expectation e = 1 / (1 + 10^(-(r_A - r_B) / 400)).
Each pairing gets one virtual draw (n + 1 games, score w + d/2 + 1/2) so that 0% and
100% stay finite. The ratings maximise the likelihood (Newton steps); the 95% intervals
are +-1.96 standard deviations from the inverse of the Fisher information with the
anchor fixed, each pairing contributing k^2 (n + 1) e (1 - e), k = ln(10) / 400.

For two players this is closed form: s = (w + d/2 + 1/2) / (n + 1),
Elo = 400 log10(s / (1 - s)), sd = 1 / sqrt(k^2 (n + 1) s (1 - s)).
"""

import json
import math
import os
import sys

K = math.log(10) / 400


def expected(diff):
    """Expected score of a player `diff` Elo above its opponent."""
    return 1 / (1 + math.exp(-K * diff))


def _solve(matrix, rhs):
    """Solves matrix * x = rhs (small dense system, Gauss-Jordan with pivoting); a
    singular direction (a player with no games) gets 0."""
    size = len(rhs)
    m = [list(row) + [rhs[i]] for i, row in enumerate(matrix)]
    for c in range(size):
        piv = max(range(c, size), key=lambda i: abs(m[i][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for i in range(size):
            if i != c:
                f = m[i][c] / m[c][c]
                m[i] = [x - f * y for x, y in zip(m[i], m[c])]
    return [m[i][size] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(size)]


def _inverse(matrix):
    size = len(matrix)
    cols = [_solve(matrix, [1.0 if i == j else 0.0 for i in range(size)]) for j in range(size)]
    return [[cols[j][i] for j in range(size)] for i in range(size)]


def _information(free, pairs, r):
    """The log-likelihood's gradient and (negated) Hessian over the free players."""
    grad = {p: 0.0 for p in free}
    hess = {p: {q: 0.0 for q in free} for p in free}
    for a, b, w, d, l in pairs:
        n = w + d + l + 1
        s = w + 0.5 * d + 0.5
        e = expected(r[a] - r[b])
        g = K * (s - n * e)
        h = K * K * n * e * (1 - e)
        for p, sign in ((a, 1), (b, -1)):
            if p in grad:
                grad[p] += sign * g
        for p, sp in ((a, 1), (b, -1)):
            for q, sq in ((a, 1), (b, -1)):
                if p in hess and q in hess[p]:
                    hess[p][q] += sp * sq * h
    return grad, hess


def fit(players, pairs, anchor):
    """Joint Bradley-Terry fit. `pairs`: (A, B, A's wins, draws, losses) per pairing.
    Returns (ratings, standard deviations), dicts by player; the anchor is 0 +- 0."""
    free = [p for p in players if p != anchor]
    r = {p: 0.0 for p in players}
    for _ in range(200):
        grad, hess = _information(free, pairs, r)
        step = _solve([[hess[p][q] for q in free] for p in free], [grad[p] for p in free])
        for p, s in zip(free, step):
            r[p] += max(-400.0, min(400.0, s))
        if not step or max(abs(s) for s in step) < 1e-9:
            break
    _, hess = _information(free, pairs, r)
    inv = _inverse([[hess[p][q] for q in free] for p in free]) if free else []
    sd = {p: math.sqrt(max(inv[i][i], 0.0)) for i, p in enumerate(free)}
    sd[anchor] = 0.0
    return r, sd


def read_pairs(out):
    """The pairings listed in OUT/pairs.tsv: (A, B, W, D, L) and the forfeits of each
    match (`(pairing, count, reasons)` for those with any)."""
    pairs, forfeits = [], []
    for line in open(os.path.join(out, "pairs.tsv")):
        a, b, name = line.rstrip("\n").split("\t")
        summary = json.load(open(os.path.join(out, name, "summary.json")))
        t = summary["total"]
        pairs.append((a, b, t["wins"], t["draws"], t["losses"]))
        if summary.get("forfeits", 0):
            reasons = sorted({g["forfeit"] for g in summary.get("games", []) if g.get("forfeit")})
            forfeits.append((f"{a} vs {b}", summary["forfeits"], reasons))
    return pairs, forfeits


def main(argv):
    out, net, sims, rungs = argv[0], argv[1], argv[2], argv[3:]
    anchor = "alphabeta:depth=1" if "alphabeta:depth=1" in rungs else rungs[0]
    pairs, forfeits = read_pairs(out)
    # The network's players, in pairs.tsv's order: "net" (its search), and "net-plain"
    # (the same network with the plain search) when ladder.sh rated both.
    nets = list(dict.fromkeys(a for a, *_ in pairs if a not in rungs)) or ["net"]
    players = nets + rungs
    r, sd = fit(players, pairs, anchor)

    print(f"Ladder (anchor {anchor} = 0 Elo; joint Bradley-Terry fit, 95% intervals)")
    print(f"net: {net} with {sims} simulations per move")
    if "net-plain" in nets:
        print("  net: the run's play search; net-plain: the same network and root without the rules written by hand")
    print(f"{'player':<24} {'Elo':>7} {'95% interval':>18}")
    for p in sorted(players, key=lambda p: r[p], reverse=True):
        lo, hi = r[p] - 1.96 * sd[p], r[p] + 1.96 * sd[p]
        print(f"{p:<24} {r[p]:>+7.0f} {f'[{lo:+.0f}, {hi:+.0f}]':>18}")
    print(f"{'pairing':<46} {'W':>4} {'D':>4} {'L':>4} {'score':>7}")
    for a, b, w, d, l in pairs:
        n = max(w + d + l, 1)
        print(f"{a + ' vs ' + b:<46} {w:>4} {d:>4} {l:>4} {100 * (w + 0.5 * d) / n:>6.1f}%")
    for pairing, count, reasons in forfeits:
        # Counted as losses of the side that forfeited: the rating then measures a crash
        # or a timeout as much as play.
        msg = f"warning: {pairing}: {count} forfeit(s) counted as losses: {'; '.join(reasons)}"
        print(msg)
        print(f"ladder: {msg}", file=sys.stderr)
    def beaten_by(player):
        return [p for p in rungs if p.startswith("alphabeta:")
                and any(a == player and b == p and (w + 0.5 * d) / max(w + d + l, 1) >= 0.5
                        for a, b, w, d, l in pairs)]

    beaten = beaten_by(nets[0])
    for player in nets:
        won = beaten_by(player)
        print(f"strongest rung {player} scores >= 50% against: " + (won[-1] if won else "none"))
    json.dump({"anchor": anchor, "net": net, "simulations": int(sims),
               "ratings": {p: {"elo": r[p], "low": r[p] - 1.96 * sd[p], "high": r[p] + 1.96 * sd[p]}
                           for p in players},
               "pairs": [{"a": a, "b": b, "wins": w, "draws": d, "losses": l}
                         for a, b, w, d, l in pairs],
               "forfeits": [{"pairing": p, "count": c, "reasons": rs} for p, c, rs in forfeits],
               "strongest_rung_beaten": beaten[-1] if beaten else None,
               "strongest_rung_beaten_by": {p: (beaten_by(p) or [None])[-1] for p in nets}},
              open(os.path.join(out, "ladder.json"), "w"), indent=2)


if __name__ == "__main__":
    main(sys.argv[1:])
