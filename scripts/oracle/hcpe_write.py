"""Writes an hcpe file with cshogi (dlshogi's board library), for shogi-zero's reader.

    python scripts/oracle/hcpe_write.py OUT.hcpe OUT.json GAMES SEED

Plays GAMES random games with cshogi (up to 160 plies, captures and drops included) and
writes every position as one `HuffmanCodedPosAndEval` record through cshogi's own
`to_hcp` and numpy dtype: the position, a made-up evaluation, the move played next as
move16, and the game's result (1 Black wins, 2 White wins, 0 draw; drawn at the ply cap).
OUT.json lists, per record, the SFEN (board, side, hands), the USI move, the evaluation
and the result. Prints "ok RECORDS".
"""

import json
import random
import sys

import cshogi
import numpy as np


def main():
    out, expected_path, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    entries = []
    expected = []
    for _ in range(games):
        board = cshogi.Board()
        game = []
        result = cshogi.DRAW
        for _ in range(160):
            moves = list(board.legal_moves)
            if not moves:
                # The side to move is mated: the other side won.
                result = cshogi.WHITE_WIN if board.turn == cshogi.BLACK else cshogi.BLACK_WIN
                break
            move = rng.choice(moves)
            game.append((board.sfen(), move, rng.randint(-3000, 3000)))
            hcp = np.empty(1, cshogi.HuffmanCodedPos)
            board.to_hcp(hcp)
            entries.append((hcp["hcp"][0].copy(), game[-1][2], cshogi.move16(move)))
            board.push(move)
        start = len(entries) - len(game)
        for i, (sfen, move, ev) in enumerate(game):
            expected.append(
                {
                    "sfen": " ".join(sfen.split()[:3]),
                    "move": cshogi.move_to_usi(move),
                    "eval": ev,
                    "result": int(result),
                }
            )
            entries[start + i] = entries[start + i] + (int(result),)
    records = np.zeros(len(entries), cshogi.HuffmanCodedPosAndEval)
    for i, (hcp, ev, m16, result) in enumerate(entries):
        records[i]["hcp"] = hcp
        records[i]["eval"] = ev
        records[i]["bestMove16"] = m16
        records[i]["gameResult"] = result
    records.tofile(out)
    with open(expected_path, "w") as f:
        json.dump(expected, f)
    print(f"ok {len(records)}")


if __name__ == "__main__":
    main()
