#!/usr/bin/env python3
"""A USI test-double engine for the arena's tests (standard shogi, needs cshogi).

Usage: engine.py MODE [SEED [LOG [VARIANT_OPTION]]]
  With LOG, every line received is appended to the file LOG (the tests check the order
  of `setoption`, `isready` and `go`). The double advertises USI_Hash and its variant
  option, VARIANT_OPTION: UCI_Variant by default, USI_Variant as Fairy-Stockfish names it
  in USI mode, or `none` for an engine that cannot be told the variant.
  normal   plays a uniformly random legal move (resigns when it has none)
  crash    completes the handshake, then exits with status 3 at its first `go`
  illegal  answers every `go` with `bestmove 5i5a` (never a legal move)
  hang     never answers `go` (the arena must time it out)
  mute     never answers `usi` (the handshake must time out)
"""
import random
import sys
import time


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    log = open(sys.argv[3], "a") if len(sys.argv) > 3 else None
    variant_option = sys.argv[4] if len(sys.argv) > 4 else "UCI_Variant"
    board = None
    if mode == "normal":
        import cshogi  # imported lazily so the other modes need no cshogi

        board = cshogi.Board()
    for line in sys.stdin:
        if log is not None:
            log.write(line)
            log.flush()
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        if cmd == "usi":
            if mode == "mute":
                continue
            print(f"id name double-{mode}")
            print("id author shogi-zero tests")
            print("option name USI_Hash type spin default 16 min 1 max 1024")
            if variant_option != "none":
                print(f"option name {variant_option} type combo default shogi var shogi var minishogi")
            print("usiok", flush=True)
        elif cmd == "isready":
            print("readyok", flush=True)
        elif cmd == "position" and board is not None:
            if words[1] == "startpos":
                board.reset()
                rest = words[2:]
            else:
                board.set_sfen(" ".join(words[2:6]))
                rest = words[6:]
            if rest and rest[0] == "moves":
                for m in rest[1:]:
                    board.push_usi(m)
        elif cmd == "go":
            if mode == "crash":
                return 3
            if mode == "illegal":
                print("bestmove 5i5a", flush=True)
            elif mode == "hang":
                time.sleep(3600)
            else:
                moves = list(board.legal_moves)
                if not moves:
                    print("bestmove resign", flush=True)
                else:
                    mv = cshogi.move_to_usi(rng.choice(moves))
                    # A count the match reads: 12 nodes searched (nps x time).
                    print(f"info depth 1 nodes 99 nps 1200 time 10 pv {mv}")
                    print(f"bestmove {mv}", flush=True)
        elif cmd == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
