#!/usr/bin/env python3
"""Independent oracle for minishogi (5x5): random positions labelled by pyffish.

pyffish is the Python binding of Fairy-Stockfish (variant "minishogi").  Plays biased
random playouts from the start `rbsgk/4p/5/P4/KGSBR b - 1` and from random positions
with promoted pieces and full hands, and writes the same line format as
cshogi_positions.py:

    pos <TAB> SFEN <TAB> sorted legal moves in USI <TAB> in_check 0/1 <TAB> checkmate 0/1
        <TAB> move played from here (USI) <TAB> SFEN after it (both empty at the end)
    perft <TAB> SFEN <TAB> depth <TAB> nodes            (with --perft N)

Conversions (pyffish -> USI):
  * FEN `rbsgk/4p/5/P4/KGSBR[Gs] w - - 0 1`: the board part reads exactly like SFEN
    (top rank first = USI rank a; leftmost file = USI file 5); the hand in brackets has
    one letter per piece (upper case = Black/sente); pyffish calls the first player
    `w`, so `w` -> `b` and `b` -> `w`.  The SFEN move number is counted here (plies
    from the start + the start's number).
  * Squares: pyffish file letter a..e -> USI file 5..1, rank digit 1..5 -> USI rank
    e..a (`a1` = `5e`, Black's king in the start position).  Moves: `d1b3` -> `2e4c`,
    promotion suffix `+` is kept, drops `P@c3` -> `P*3c`.

Quirk handled: pyffish lists a pawn drop that gives mate (uchifuzume) as a legal move
(the dropper then loses) instead of treating it as illegal.  This script removes such
drops from the legal-move list: a pawn drop on the square in front of the enemy king
after which the opponent has no legal move is a pawn-drop mate.  The number of drops
removed is in the summary comment.  The checkmate flag is "in check and no legal move"
(after that filtering).  Every pyffish call costs about 1.2 ms (it re-initialises its
attack tables per call), so this oracle makes ~250-400 positions per second per job.

Usage: pyffish_minishogi.py --count 4000 --seed 1 [--jobs 2] [--perft 10] [--out FILE]
"""
import argparse
import multiprocessing as mp
import os
import random
import sys
import time

import pyffish as sf

V = "minishogi"
START_SFEN = "rbsgk/4p/5/P4/KGSBR b - 1"
HAND_ORDER = "RBGSNLP"
PIECES = [("R", 2, True), ("B", 2, True), ("G", 2, False), ("S", 2, True), ("P", 2, True)]


def sq_to_usi(sq):
    return str(5 - (ord(sq[0]) - 97)) + chr(97 + 5 - int(sq[1:]))


def move_to_usi(m):
    if "@" in m:
        piece, sq = m.split("@")
        return piece.upper() + "*" + sq_to_usi(sq)
    promo = m.endswith("+")
    body = m[:-1] if promo else m
    if body.endswith("="):
        body = body[:-1]
    return sq_to_usi(body[0:2]) + sq_to_usi(body[2:4]) + ("+" if promo else "")


def fen_to_sfen(fen, move_number):
    parts = fen.split(" ")
    board, hand = parts[0].split("[")
    hand = hand.rstrip("]").replace("-", "")
    counts = {}
    for ch in hand:
        counts[ch] = counts.get(ch, 0) + 1
    h = ""
    for letter in HAND_ORDER + HAND_ORDER.lower():
        n = counts.get(letter, 0)
        if n:
            h += (str(n) if n > 1 else "") + letter
    side = "b" if parts[1] == "w" else "w"
    assert "~" not in board, fen
    return "%s %s %s %d" % (board, side, h or "-", move_number)


def sfen_to_fen(sfen):
    board, side, hand, _num = sfen.split(" ")
    h = ""
    if hand != "-":
        n = ""
        for ch in hand:
            if ch.isdigit():
                n += ch
            else:
                h += ch * (int(n) if n else 1)
                n = ""
    return "%s[%s] %s - - 0 1" % (board, h, "w" if side == "b" else "b")


def parse_board(fen):
    """{(file letter, rank digit): piece} from a pyffish FEN."""
    rows = fen.split("[")[0].split("/")
    out = {}
    for i, row in enumerate(rows):
        rank = 5 - i
        col = 0
        j = 0
        while j < len(row):
            ch = row[j]
            if ch.isdigit():
                col += int(ch)
            else:
                if ch == "+":
                    j += 1
                    ch = "+" + row[j]
                out[(chr(97 + col), rank)] = ch
                col += 1
            j += 1
    return out


def legal(fen, stats=None):
    """pyffish's legal moves minus pawn-drop mates (pyffish's own notation)."""
    moves = sf.legal_moves(V, fen, [])
    black = fen.split(" ")[1] == "w"  # pyffish 'w' = first player = Black (sente)
    board = None
    out = []
    for m in moves:
        if m.startswith("P@"):
            if board is None:
                board = parse_board(fen)
                enemy_king = "k" if black else "K"
                ksq = next((s for s, p in board.items() if p == enemy_king), None)
                front = None
                if ksq is not None:
                    r = ksq[1] - 1 if black else ksq[1] + 1
                    if 1 <= r <= 5:
                        front = "P@%s%d" % (ksq[0], r)
            if m == front and not sf.legal_moves(V, fen, [m]):
                if stats is not None:
                    stats["uchifuzume_removed"] += 1
                continue
        out.append(m)
    return out


def in_check(fen):
    return bool(sf.gives_check(V, fen, []))


def random_sfen(rng):
    board = [[None] * 5 for _ in range(5)]
    empty = [(r, c) for r in range(5) for c in range(5)]
    rng.shuffle(empty)
    for k in ("K", "k"):
        r, c = empty.pop()
        board[r][c] = k
    hands = [dict(), dict()]
    p_board = rng.uniform(0.2, 0.9)
    p_prom = rng.uniform(0.0, 0.7)
    pawn_files = [set(), set()]
    for letter, count, promotable in PIECES:
        for _ in range(count):
            if rng.random() < 0.15:
                continue
            colour = rng.randrange(2)
            placed = False
            if rng.random() < p_board:
                for _try in range(6):
                    if not empty:
                        break
                    r, c = empty[-1]
                    prom = promotable and rng.random() < p_prom
                    fwd = r if colour == 0 else 4 - r
                    if not prom and letter == "P" and (fwd == 0 or c in pawn_files[colour]):
                        rng.shuffle(empty)
                        continue
                    empty.pop()
                    if letter == "P" and not prom:
                        pawn_files[colour].add(c)
                    s = letter if colour == 0 else letter.lower()
                    board[r][c] = ("+" + s) if prom else s
                    placed = True
                    break
            if not placed:
                hands[colour][letter] = hands[colour].get(letter, 0) + 1
    rows = []
    for r in range(5):
        row, run = "", 0
        for c in range(5):
            if board[r][c] is None:
                run += 1
            else:
                if run:
                    row += str(run)
                    run = 0
                row += board[r][c]
        if run:
            row += str(run)
        rows.append(row)
    hand = ""
    for colour in range(2):
        for letter in HAND_ORDER:
            n = hands[colour].get(letter, 0)
            if n:
                hand += (str(n) if n > 1 else "") + (letter if colour == 0 else letter.lower())
    return "/".join(rows) + " " + rng.choice("bw") + " " + (hand or "-") + " 1"


def kings_adjacent(sfen):
    rows = sfen.split(" ")[0].split("/")
    where = {}
    for r, row in enumerate(rows):
        c = 0
        for ch in row:
            if ch.isdigit():
                c += int(ch)
            elif ch != "+":
                if ch in "Kk":
                    where[ch] = (r, c)
                c += 1
    (r1, c1), (r2, c2) = where["K"], where["k"]
    return abs(r1 - r2) <= 1 and abs(c1 - c2) <= 1


def usable_random_sfen(rng):
    while True:
        sfen = random_sfen(rng)
        if kings_adjacent(sfen):
            continue
        fen = sfen_to_fen(sfen)
        if sf.validate_fen(fen, V) != sf.FEN_OK:
            continue
        parts = fen.split(" ")
        parts[1] = "b" if parts[1] == "w" else "w"
        if in_check(" ".join(parts)):
            continue  # the side not to move would be in check
        return sfen


def perft(fen, depth, stats):
    moves = legal(fen, stats)
    if depth == 1:
        return len(moves)
    return sum(perft(sf.get_fen(V, fen, [m]), depth - 1, stats) for m in moves)


# Extra playout starts.  Regression: the white rook on 4c is pinned on the diagonal by
# the bishop on 3d against the king on 5b; an early rules crate generated 4c4a here.
FIXED_STARTS = ["2b2/k2SK/1r1P1/1gB2/5 w Gsp 5"]


def worker(job):
    count, seed = job
    rng = random.Random(seed)
    stats = {"games": 0, "checks": 0, "mates": 0, "uchifuzume_removed": 0,
             "start_std": 0, "start_random": 0, "start_fixed": 0}
    seen = set()
    lines = []
    while len(lines) < count:
        stats["games"] += 1
        if rng.random() < 0.03:
            sfen0 = rng.choice(FIXED_STARTS)
            stats["start_fixed"] += 1
            max_plies = rng.randint(0, 30)
        elif rng.random() < 0.6:
            sfen0 = START_SFEN
            stats["start_std"] += 1
            max_plies = rng.randint(10, 150)
        else:
            sfen0 = usable_random_sfen(rng)
            stats["start_random"] += 1
            max_plies = rng.randint(0, 30)
        fen = sfen_to_fen(sfen0)
        number = int(sfen0.split(" ")[3])
        p_cap = rng.uniform(0.0, 0.6)
        p_drop = rng.uniform(0.0, 0.4)
        pending = None
        for ply in range(max_plies + 1):
            moves = legal(fen, stats)
            sfen = fen_to_sfen(fen, number + ply)
            if pending is not None:
                lines[pending] += "\t%s\t%s\n" % (move_to_usi(m), sfen)
                pending = None
            key = sfen[: sfen.rfind(" ")]
            if key not in seen and len(lines) < count:
                seen.add(key)
                check = in_check(fen)
                mate = check and not moves
                stats["checks"] += check
                stats["mates"] += mate
                usi = sorted(move_to_usi(x) for x in moves)
                lines.append("pos\t%s\t%s\t%d\t%d" % (sfen, " ".join(usi), check, mate))
                pending = len(lines) - 1
            if not moves or ply == max_plies or len(lines) >= count:
                break
            m = None
            r = rng.random()
            if r < p_cap:
                board = parse_board(fen)
                c = [x for x in moves if "@" not in x and (x[2], int(x[3:4])) in board]
                if c:
                    m = rng.choice(c)
            elif r < p_cap + p_drop:
                c = [x for x in moves if "@" in x]
                if c:
                    m = rng.choice(c)
            if m is None:
                m = rng.choice(moves)
            fen = sf.get_fen(V, fen, [m])
        if pending is not None:
            lines[pending] += "\t\t\n"
    return lines, stats


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=4000, help="positions to write (about)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--perft", type=int, default=0, help="also write perft for this many positions")
    ap.add_argument("--perft-depth", type=int, default=2)
    ap.add_argument("--out", default="-")
    args = ap.parse_args()
    t0 = time.time()
    # Fairy-Stockfish prints diagnostics (e.g. from validate_fen) on the C++ stdout; keep
    # them out of the output: our lines go to a duplicate of fd 1, fd 1 goes to stderr.
    sys.stdout.flush()
    real_stdout = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    jobs = max(1, args.jobs)
    per = [args.count // jobs + (1 if i < args.count % jobs else 0) for i in range(jobs)]
    work = [(n, args.seed * 1000 + i) for i, n in enumerate(per)]
    if jobs == 1:
        results = [worker(work[0])]
    else:
        with mp.Pool(jobs) as pool:
            results = pool.map(worker, work)
    out = real_stdout if args.out == "-" else open(args.out, "w")
    seen = set()
    total = {}
    written = 0
    pool_sfens = []
    for lines, stats in results:
        for k, v in stats.items():
            total[k] = total.get(k, 0) + v
        for line in lines:
            sfen = line.split("\t", 2)[1]
            key = sfen[: sfen.rfind(" ")]
            if key in seen:
                continue
            seen.add(key)
            out.write(line)
            written += 1
            if line.split("\t")[2]:
                pool_sfens.append(sfen)
    t_gen = time.time() - t0
    if args.perft:
        rng = random.Random(args.seed)
        pst = {"uchifuzume_removed": 0}
        for sfen in rng.sample(pool_sfens, min(args.perft, len(pool_sfens))):
            n = perft(sfen_to_fen(sfen), args.perft_depth, pst)
            out.write("perft\t%s\t%d\t%d\n" % (sfen, args.perft_depth, n))
    stats_s = " ".join("%s=%d" % kv for kv in total.items())
    out.write("# pyffish_minishogi: %d positions (seed %d, %d jobs) in %.1f s, total %.1f s; %s\n"
              % (written, args.seed, jobs, t_gen, time.time() - t0, stats_s))
    out.close()


if __name__ == "__main__":
    main()
