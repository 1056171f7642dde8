#!/usr/bin/env python3
"""Independent oracle for standard shogi: random positions labelled by cshogi.

Plays biased random playouts with cshogi (https://pypi.org/project/cshogi/) from the
standard start, from the usual handicap starts, from a few well-known tricky perft
positions, from random legal positions with many promoted pieces and full hands, and
from tsume-like "mating net" positions picked for containing a pawn-drop mate, and
writes one line per distinct position (tab-separated):

    pos <TAB> SFEN <TAB> sorted legal moves in USI, space-separated <TAB> in_check 0/1
        <TAB> checkmate 0/1 <TAB> move played from here (USI) <TAB> SFEN after it

(the last two fields are empty at the end of a playout), plus, with --perft N, N lines

    perft <TAB> SFEN <TAB> depth <TAB> nodes

for N of the generated positions (perft counts every legal move, leaves counted in
bulk; a position without legal moves contributes no children).  Lines starting with
'#' are comments (a summary of what was generated).

The SFEN is cshogi's Board.sfen(): standard USI SFEN (hands in the order RBGSNLP, Black
first, counts before the letter, '-' when empty; move number = plies + the start's).
The checkmate flag is computed here as "in check and no legal move", not taken from
cshogi's is_mate(), so that it means exactly that.

Usage: cshogi_positions.py --count 100000 --seed 1 [--perft 20 --perft-depth 3] [--out FILE]
"""
import argparse
import random
import sys
import time

import cshogi

STARTPOS = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
_BLACK_HALF = "ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
# Handicap starts: White (gote) gives the handicap and moves first.
HANDICAPS = [
    "lnsgkgsn1/1r5b1/" + _BLACK_HALF,  # lance (1a)
    "lnsgkgsnl/1r7/" + _BLACK_HALF,  # bishop
    "lnsgkgsnl/7b1/" + _BLACK_HALF,  # rook
    "lnsgkgsn1/7b1/" + _BLACK_HALF,  # rook + lance
    "lnsgkgsnl/9/" + _BLACK_HALF,  # 2-piece
    "1nsgkgsn1/9/" + _BLACK_HALF,  # 4-piece
    "2sgkgs2/9/" + _BLACK_HALF,  # 6-piece
    "3gkg3/9/" + _BLACK_HALF,  # 8-piece
    "4k4/9/" + _BLACK_HALF,  # 10-piece
]

# Known tricky positions (public perft test positions), used as extra playout starts.
TRICKY = [
    "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",
    "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
    "ln2+r1r2/5s+Pkl/3+B1p1p1/p4B2p/2P6/P6PP/1PNP1P3/2G3SK1/L4G1NL w 2GSN3Ps3p 76",
    "ln3gsn1/7kl/3+B1p1p1/p4s2p/2P6/P2B3PP/1PNP+rPP2/2G3SK1/L4G1NL b G3Prs3p 65",
    "7nk/9/7G1/9/9/9/9/9/K8 b P 1",
    "7nk/9/6G2/9/9/9/9/9/K8 b P 1",
    "4R2sk/9/7G1/9/9/9/9/9/4K4 b P 1",
    "4k4/9/9/9/9/9/P8/9/4K4 b P 1",
    "4k4/9/9/9/9/9/+P8/9/4K4 b P 1",
    "4k4/9/9/9/9/9/9/9/4K4 b NLP 1",
    # Regression: a rook pinned on a diagonal (bishop 4h, king 7e) may not leave it; an
    # early rules crate generated 5g5c / 5g5c+ here (wrong diagonal LINE table).
    "4+N+Rs2/9/9/7n1/2k3l2/9/+p1P1r4/2K2B2s/4P4 w BGSNL7P2gnl5p 14",
]

# Pieces other than the kings: (letter, count, promotable).
PIECES = [("R", 2, True), ("B", 2, True), ("G", 4, False), ("S", 4, True),
          ("N", 4, True), ("L", 4, True), ("P", 18, True)]
HAND_ORDER = "RBGSNLP"


def random_sfen(rng):
    """A random position: both kings, a random subset of the other 38 pieces on the board
    (often promoted, either colour) or in either hand, no dead pieces, no two pawns."""
    board = [[None] * 9 for _ in range(9)]  # board[rank 0..8 = a..i][col 0..8 = file 9..1]
    empty = [(r, c) for r in range(9) for c in range(9)]
    rng.shuffle(empty)
    # Kings apart: cshogi's check detection ignores the king as an attacker (it cannot
    # give check in a legal game), so adjacent kings would slip through the
    # side-not-to-move-in-check filter below.
    while True:
        (r1, c1), (r2, c2) = rng.sample(empty, 2)
        if abs(r1 - r2) > 1 or abs(c1 - c2) > 1:
            break
    board[r1][c1] = "K"
    board[r2][c2] = "k"
    empty.remove((r1, c1))
    empty.remove((r2, c2))
    hands = [dict(), dict()]
    p_board = rng.uniform(0.2, 0.8)
    p_keep = rng.uniform(0.3, 1.0)
    p_prom = rng.uniform(0.0, 0.7)
    pawn_files = [set(), set()]
    for letter, count, promotable in PIECES:
        for _ in range(count):
            if rng.random() > p_keep:
                continue  # piece left out entirely (not every piece has to exist)
            colour = rng.randrange(2)
            placed = False
            if rng.random() < p_board:
                for _try in range(6):
                    if not empty:
                        break
                    r, c = empty[-1]
                    prom = promotable and rng.random() < p_prom
                    # Ranks counted from the owner's side: fwd = 0 is the farthest rank.
                    fwd = r if colour == 0 else 8 - r
                    if not prom:
                        if letter in "PL" and fwd == 0:
                            rng.shuffle(empty)
                            continue
                        if letter == "N" and fwd <= 1:
                            rng.shuffle(empty)
                            continue
                        if letter == "P" and c in pawn_files[colour]:
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
    for r in range(9):
        row, run = "", 0
        for c in range(9):
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
    side = rng.choice("bw")
    return "/".join(rows) + " " + side + " " + (hand or "-") + " 1"


def board_to_sfen(board, hands, side):
    rows = []
    for r in range(9):
        row, run = "", 0
        for c in range(9):
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
    return "/".join(rows) + " " + side + " " + (hand or "-") + " 1"


def mating_net_sfen(rng):
    """A tsume-like position: the side to move (the attacker) has pawns and a few other
    pieces in hand and some pieces near the defending king, which stands near its own
    edge of the board with a few defenders; the remaining pieces go to the defender's
    hand or are left out.  Rich in checks, mates, pawn-drop mates (including ones where a
    defender is pinned or the king could take an undefended pawn) and pawn drops that
    check without mating."""
    att = rng.randrange(2)  # attacker colour, also the side to move
    board = [[None] * 9 for _ in range(9)]
    # Defender king near its own back edge (rank a for White, rank i for Black).
    dr = rng.choice([0, 0, 1, 1, 2]) if att == 0 else rng.choice([8, 8, 7, 7, 6])
    dc = rng.randrange(9)
    board[dr][dc] = "k" if att == 0 else "K"
    while True:
        ar, ac = rng.randrange(9), rng.randrange(9)
        if abs(ar - dr) > 2 or abs(ac - dc) > 2:
            break
    board[ar][ac] = "K" if att == 0 else "k"
    supply = {}
    for letter, count, _ in PIECES:
        supply[letter] = count
    hands = [dict(), dict()]

    def take(letter):
        if supply[letter] == 0:
            return False
        supply[letter] -= 1
        return True

    pawns_in_hand = rng.randint(1, 3)
    for _ in range(pawns_in_hand):
        if take("P"):
            hands[att]["P"] = hands[att].get("P", 0) + 1
    pawn_files = [set(), set()]
    near = [(r, c) for r in range(max(0, dr - 3), min(9, dr + 4))
            for c in range(max(0, dc - 3), min(9, dc + 4)) if board[r][c] is None]
    rng.shuffle(near)
    # Attacking pieces on the board near the king, and defenders.
    for colour, n in ((att, rng.randint(1, 5)), (1 - att, rng.randint(0, 4))):
        for _ in range(n):
            if not near:
                break
            letter = rng.choice("RBGSNLPGS")
            if not take(letter):
                continue
            r, c = near.pop()
            promotable = letter not in "GK"
            prom = promotable and rng.random() < 0.35
            fwd = r if colour == 0 else 8 - r
            if not prom and ((letter in "PL" and fwd == 0) or (letter == "N" and fwd <= 1)
                             or (letter == "P" and c in pawn_files[colour])):
                supply[letter] += 1
                continue
            if letter == "P" and not prom:
                pawn_files[colour].add(c)
            sym = letter if colour == 0 else letter.lower()
            board[r][c] = ("+" + sym) if prom else sym
    for _ in range(rng.randint(0, 3)):
        letter = rng.choice("RBGSNL")
        if take(letter):
            hands[att][letter] = hands[att].get(letter, 0) + 1
    # The rest: defender's hand (as in tsume shogi) or left out.
    to_defender = rng.random() < 0.5
    for letter, n in supply.items():
        if to_defender and n:
            hands[1 - att][letter] = hands[1 - att].get(letter, 0) + n
    return board_to_sfen(board, hands, "b" if att == 0 else "w")


def other_side_in_check(sfen):
    """True when the side NOT to move is in check (an illegal position)."""
    parts = sfen.split(" ")
    parts[1] = "w" if parts[1] == "b" else "b"
    b = cshogi.Board(" ".join(parts))
    return b.is_check()


SQUARE_NAMES = cshogi.SQUARE_NAMES


def uchifuzume_square(board):
    """For the statistics only: the square in front of the enemy king where the side to
    move could drop a checking pawn (pawn in hand, square empty, no own pawn on the file),
    or None.  When the side to move is not in check and cshogi does not list that drop,
    the drop is a pawn-drop mate."""
    c = board.turn
    if board.pieces_in_hand[c][0] == 0:  # HAND_PIECES[0] is the pawn
        return None
    k = board.king_square(1 - c)
    f, r = divmod(k, 9)
    r += 1 if c == 0 else -1
    if not 0 <= r <= 8:
        return None
    t = f * 9 + r
    if board.piece(t) != 0:
        return None
    own_pawn = cshogi.BPAWN if c == 0 else cshogi.WPAWN
    if any(board.piece(f * 9 + i) == own_pawn for i in range(9)):
        return None
    return t


def perft(board, depth):
    moves = board.legal_moves
    if depth == 1:
        return len(moves)
    n = 0
    for m in list(moves):
        board.push(m)
        n += perft(board, depth - 1)
        board.pop()
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100000, help="distinct positions to write")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--perft", type=int, default=0, help="also write perft for this many positions")
    ap.add_argument("--perft-depth", type=int, default=3)
    ap.add_argument("--perft-max-moves", type=int, default=120,
                    help="pick perft positions among those with at most this many legal moves")
    ap.add_argument("--out", default="-", help="output file ('-' = stdout)")
    args = ap.parse_args()

    t0 = time.time()
    rng = random.Random(args.seed)
    out = sys.stdout if args.out == "-" else open(args.out, "w")
    move_to_usi = cshogi.move_to_usi
    move_is_drop = cshogi.move_is_drop
    move_is_promotion = cshogi.move_is_promotion
    move_cap = cshogi.move_cap

    seen = set()
    written = 0
    stats = {"games": 0, "checks": 0, "mates": 0, "nomove_not_check": 0, "start_std": 0,
             "start_handicap": 0, "start_random": 0, "start_mating_net": 0, "start_tricky": 0, "max_moves": 0, "uchifuzume": 0}
    perft_pool = []
    lines = []
    board = cshogi.Board()
    while written < args.count:
        stats["games"] += 1
        kind = rng.random()
        if kind < 0.45:
            start = STARTPOS
            stats["start_std"] += 1
            max_plies = rng.randint(40, 400)
        elif kind < 0.57:
            start = rng.choice(HANDICAPS)
            stats["start_handicap"] += 1
            max_plies = rng.randint(40, 300)
        elif kind < 0.6:
            start = rng.choice(TRICKY)
            stats["start_tricky"] += 1
            max_plies = rng.randint(0, 30)
        elif kind < 0.85:
            while True:
                start = random_sfen(rng)
                if not other_side_in_check(start):
                    break
            stats["start_random"] += 1
            max_plies = rng.randint(0, 40)
        else:
            # Rejection sampling: prefer a start where a pawn-drop mate is excluded.
            start = None
            for _try in range(300):
                cand = mating_net_sfen(rng)
                if other_side_in_check(cand):
                    continue
                start = cand
                board.set_sfen(cand)
                t = uchifuzume_square(board)
                if t is not None and not board.is_check():
                    if board.is_legal(board.move_from_usi("P*" + SQUARE_NAMES[t])) is False:
                        break
            if start is None:
                start = STARTPOS
            stats["start_mating_net"] += 1
            max_plies = rng.randint(0, 12)
        board.set_sfen(start)
        # Per-game style: how strongly to prefer captures / promotions / drops / mates.
        p_cap = rng.uniform(0.0, 0.6)
        p_prom = rng.uniform(0.0, 0.4)
        p_drop = rng.uniform(0.0, 0.4)
        p_mate = rng.uniform(0.0, 0.8)
        pending = None  # index of the line whose played move / child SFEN are due
        for ply in range(max_plies + 1):
            moves = list(board.legal_moves)
            sfen = board.sfen()
            if pending is not None:
                lines[pending] += "\t%s\t%s\n" % (played, sfen)
                pending = None
            key = sfen[: sfen.rfind(" ")]
            if key not in seen and written < args.count:
                seen.add(key)
                check = board.is_check()
                usi = sorted(move_to_usi(m) for m in moves)
                mate = check and not moves
                stats["checks"] += check
                stats["mates"] += mate
                stats["nomove_not_check"] += (not check) and (not moves)
                stats["max_moves"] = max(stats["max_moves"], len(moves))
                if not check and uchifuzume_square(board) is not None:
                    if "P*" + SQUARE_NAMES[uchifuzume_square(board)] not in usi:
                        stats["uchifuzume"] += 1
                lines.append("pos\t%s\t%s\t%d\t%d" % (sfen, " ".join(usi), check, mate))
                if 0 < len(moves) <= args.perft_max_moves:
                    perft_pool.append(sfen)
                written += 1
                pending = len(lines) - 1
            if not moves or ply == max_plies or written >= args.count:
                break
            m = None
            r = rng.random()
            if r < p_mate and not board.is_check():
                # cshogi's 1-ply mate search assumes the side to move is not in check (in
                # check it can return an illegal move), so only ask it then, and only
                # trust a move that is in the legal list.
                mm = board.mate_move_in_1ply()
                if mm and mm in moves:
                    m = mm
            if m is None:
                r = rng.random()
                if r < p_cap:
                    c = [x for x in moves if move_cap(x)]
                    if c:
                        m = rng.choice(c)
                elif r < p_cap + p_prom:
                    c = [x for x in moves if move_is_promotion(x)]
                    if c:
                        m = rng.choice(c)
                elif r < p_cap + p_prom + p_drop:
                    c = [x for x in moves if move_is_drop(x)]
                    if c:
                        m = rng.choice(c)
            if m is None:
                m = rng.choice(moves)
            played = move_to_usi(m)
            board.push(m)
        if pending is not None:
            lines[pending] += "\t\t\n"
        if len(lines) >= 4096:
            out.writelines(lines)
            lines.clear()
    out.writelines(lines)
    t_gen = time.time() - t0

    if args.perft:
        picks = rng.sample(perft_pool, min(args.perft, len(perft_pool)))
        for sfen in picks:
            board.set_sfen(sfen)
            out.write("perft\t%s\t%d\t%d\n" % (sfen, args.perft_depth, perft(board, args.perft_depth)))
    stats_s = " ".join("%s=%d" % kv for kv in stats.items())
    out.write("# cshogi_positions: %d positions (seed %d) in %.1f s, total %.1f s; %s\n"
              % (written, args.seed, t_gen, time.time() - t0, stats_s))
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
