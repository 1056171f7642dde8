"""Cross-checks shogi-zero's hcpe3 export with cshogi (dlshogi's own board library).

    python scripts/oracle/hcpe3_check.py GAMES.hcpe3 EXPECTED.json

EXPECTED.json is a list of games: {"start": SFEN, "moves": [USI...], "result": int,
"evals": [int...], "candidates": [[[USI, visits]...] per move]}. For every game the file
is read with dlshogi's numpy dtypes; cshogi decodes the HuffmanCodedPos (which must equal
cshogi's own encoding of the same SFEN, byte for byte) and every move16 (each must be a
legal move equal to the expected one, candidates included). Prints "ok GAMES MOVES".
"""

import json
import sys

import cshogi
import numpy as np

HCPE3 = np.dtype(
    [
        ("hcp", cshogi.HuffmanCodedPos.fields["hcp"][0]),
        ("moveNum", np.uint16),
        ("result", np.uint8),
        ("opponent", np.uint8),
    ]
)
MOVE_INFO = np.dtype([("selectedMove16", np.uint16), ("eval", np.int16), ("candidateNum", np.uint16)])
MOVE_VISITS = np.dtype([("move16", np.uint16), ("visitNum", np.uint16)])


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def main():
    data = open(sys.argv[1], "rb").read()
    expected = json.load(open(sys.argv[2]))
    offset = 0
    moves_checked = 0
    for gi, exp in enumerate(expected):
        head = np.frombuffer(data, HCPE3, 1, offset)[0]
        offset += HCPE3.itemsize
        board = cshogi.Board()
        board.set_hcp(np.asarray(head["hcp"]))
        want = cshogi.Board(exp["start"])
        if board.sfen().split()[:3] != want.sfen().split()[:3]:
            fail(f"game {gi}: start decodes to {board.sfen()}, expected {want.sfen()}")
        ours = np.asarray(head["hcp"]).tobytes()
        theirs = np.empty(1, cshogi.HuffmanCodedPos)
        want.to_hcp(theirs)
        if ours != theirs["hcp"][0].tobytes():
            fail(f"game {gi}: hcp bytes differ from cshogi's for {exp['start']}")
        if head["moveNum"] != len(exp["moves"]):
            fail(f"game {gi}: {head['moveNum']} moves, expected {len(exp['moves'])}")
        if head["result"] != exp["result"] or head["opponent"] != 0:
            fail(f"game {gi}: result {head['result']} opponent {head['opponent']}, expected {exp['result']} 0")
        for mi, usi in enumerate(exp["moves"]):
            info = np.frombuffer(data, MOVE_INFO, 1, offset)[0]
            offset += MOVE_INFO.itemsize
            move = board.move_from_move16(int(info["selectedMove16"]))
            if cshogi.move_to_usi(move) != usi or not board.is_legal(move):
                fail(f"game {gi} move {mi}: move16 decodes to {cshogi.move_to_usi(move)}, expected {usi}")
            if info["eval"] != exp["evals"][mi]:
                fail(f"game {gi} move {mi}: eval {info['eval']}, expected {exp['evals'][mi]}")
            cands = exp["candidates"][mi]
            if info["candidateNum"] != len(cands):
                fail(f"game {gi} move {mi}: {info['candidateNum']} candidates, expected {len(cands)}")
            for cu, cv in cands:
                mv = np.frombuffer(data, MOVE_VISITS, 1, offset)[0]
                offset += MOVE_VISITS.itemsize
                cm = board.move_from_move16(int(mv["move16"]))
                if cshogi.move_to_usi(cm) != cu or not board.is_legal(cm) or mv["visitNum"] != cv:
                    fail(f"game {gi} move {mi}: candidate {cshogi.move_to_usi(cm)}/{mv['visitNum']}, expected {cu}/{cv}")
            board.push(move)
            moves_checked += 1
    if offset != len(data):
        fail(f"{len(data) - offset} bytes left over")
    print(f"ok {len(expected)} {moves_checked}")


if __name__ == "__main__":
    main()
