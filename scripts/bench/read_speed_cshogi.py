"""cshogi's readers on the files shogi-zero's import reads, for scripts/bench/read_speed.sh.

    python scripts/bench/read_speed_cshogi.py ROUNDS FILE...

A `.csa` file (one game or a floodgate archive) goes through `cshogi.CSA.Parser.parse_file`
(its moves are read, not replayed on a board); an `.hcpe` file through `numpy.fromfile`
with cshogi's dtype and then, entry by entry, `Board.set_hcp` and `Board.is_legal` of the
entry's move: the work shogi-zero's reader does (decode and check every move); positions
counts the entries whose move is legal. Prints one line a file and round.
"""

import sys
import time

import cshogi
import cshogi.CSA
import numpy as np


def read_csa(path):
    games = cshogi.CSA.Parser.parse_file(path)
    return len(games), sum(len(g.moves) for g in games)


def read_hcpe(path):
    entries = np.fromfile(path, dtype=cshogi.HuffmanCodedPosAndEval)
    board = cshogi.Board()
    legal = 0
    for hcp, move16 in zip(entries["hcp"], entries["bestMove16"]):
        board.set_hcp(hcp)
        legal += board.is_legal(board.move_from_move16(int(move16)))
    return len(entries), legal


def main():
    rounds = int(sys.argv[1])
    for path in sys.argv[2:]:
        read = read_hcpe if path.endswith(".hcpe") else read_csa
        for round_ in range(1, rounds + 1):
            began = time.perf_counter()
            records, positions = read(path)
            secs = time.perf_counter() - began
            print(
                f"cshogi {path} round {round_}: {records} records, {positions} positions in "
                f"{secs:.3f} s: {records / secs:.0f} records/s, {positions / secs:.0f} positions/s"
            )


if __name__ == "__main__":
    main()
