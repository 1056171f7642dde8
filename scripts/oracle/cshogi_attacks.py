#!/usr/bin/env python3
"""Independent oracle for the attack input planes: dlshogi's feature builder in cshogi.

Reads SFENs (standard shogi, one per line) and writes one line per position,
tab-separated:

    SFEN <TAB> check 0/1 <TAB> 34 attack masks, space-separated

taken from cshogi.dlshogi.make_input_features, which sees the board from the side to
move (turned 180 degrees when White is to move, as this project's planes are). The
masks are, in order: the side to move's attacked squares for each piece type in
cshogi's order (pawn, lance, knight, silver, bishop, rook, gold, king, +pawn, +lance,
+knight, +silver, horse, dragon), its squares attacked at least 1, 2 and 3 times, then
the same 17 for the opponent. A mask is an integer with bit (file * 9 + rank) set for
each attacked square (file 0 = file 1, rank 0 = rank a, both as the side to move sees
the board). The check flag is features2's last plane.

Usage: cshogi_attacks.py < sfens.txt
"""
import sys

import numpy as np
import cshogi
from cshogi import dlshogi

PIECE_TYPES = 14
COUNT_PLANES = 3
# features1 per side: 14 piece planes, 14 attack planes, 3 attacker-count planes.
PER_SIDE = 2 * PIECE_TYPES + COUNT_PLANES


def masks(plane_stack):
    flat = plane_stack.reshape(plane_stack.shape[0], 81)
    return [sum(1 << int(i) for i in np.flatnonzero(row)) for row in flat]


def main():
    assert dlshogi.FEATURES1_NUM == 2 * PER_SIDE, dlshogi.FEATURES1_NUM
    board = cshogi.Board()
    f1 = np.zeros((dlshogi.FEATURES1_NUM, 9, 9), dtype=np.float32)
    f2 = np.zeros((dlshogi.FEATURES2_NUM, 9, 9), dtype=np.float32)
    out = sys.stdout
    for line in sys.stdin:
        sfen = line.strip()
        if not sfen:
            continue
        board.set_sfen(sfen)
        f1.fill(0)
        f2.fill(0)
        dlshogi.make_input_features(board, f1, f2)
        planes = []
        for side in range(2):
            base = side * PER_SIDE + PIECE_TYPES
            planes.extend(masks(f1[base:base + PIECE_TYPES + COUNT_PLANES]))
        check = int(f2[-1].any())
        assert check == int(board.is_check()), sfen
        out.write(f"{sfen}\t{check}\t{' '.join(map(str, planes))}\n")


if __name__ == "__main__":
    main()
