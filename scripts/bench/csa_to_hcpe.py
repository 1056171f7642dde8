"""Writes CSA games as dlshogi's hcpe with cshogi, the independent writer shogi-zero's
hcpe reader is measured against (scripts/bench/teacher_set.sh).

    python scripts/bench/csa_to_hcpe.py OUT.hcpe FILE.csa...

Every position of every game that has a winner or a draw becomes one
`HuffmanCodedPosAndEval` entry through cshogi's own `to_hcp`: the position, an evaluation
of 0 (the games carry none), the move played there as move16 and the game's result
(1 Black wins, 2 White wins, 0 draw). Games without a result are left out. Prints
"games G, positions P".
"""

import sys

import cshogi
import cshogi.CSA
import numpy as np


def main():
    out, files = sys.argv[1], sys.argv[2:]
    hcps, moves, results = [], [], []
    games = 0
    for path in files:
        for game in cshogi.CSA.Parser.parse_file(path):
            result = {cshogi.BLACK_WIN: 1, cshogi.WHITE_WIN: 2, cshogi.DRAW: 0}.get(game.win)
            if result is None:
                continue
            board = cshogi.Board(game.sfen)
            hcp = np.empty(1, cshogi.HuffmanCodedPos)
            for move in game.moves:
                board.to_hcp(hcp)
                hcps.append(hcp["hcp"][0].copy())
                moves.append(cshogi.move16(move))
                results.append(result)
                board.push(move)
            games += 1
    entries = np.zeros(len(hcps), cshogi.HuffmanCodedPosAndEval)
    for i, (hcp, move16, result) in enumerate(zip(hcps, moves, results)):
        entries[i]["hcp"] = hcp
        entries[i]["bestMove16"] = move16
        entries[i]["gameResult"] = result
    entries.tofile(out)
    print(f"games {games}, positions {len(entries)}")


if __name__ == "__main__":
    main()
