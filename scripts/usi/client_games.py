#!/usr/bin/env python3
"""Plays complete games against a USI engine through cshogi's USI client (cshogi.usi.Engine),
as a GUI or match runner would, and checks what a tournament director checks.

The engine plays itself: one process per colour, both launched from the same executable
path (cshogi starts the command with no arguments, exactly like a GUI does). Every move is
checked for legality by an implementation that is not ours: cshogi's Board for shogi,
pyffish (Fairy-Stockfish) for minishogi. Every `go` is timed from the moment the command is
written to the moment `bestmove` arrives; exceeding the byoyomi is a time loss. After each
game both engines get `gameover win|lose|draw` and must answer `isready` again before the
next `usinewgame`.

Usage: client_games.py --engine PATH [--variant shogi|minishogi] [--games N]
           [--byoyomi MS] [--max-plies N] [--option NAME=VALUE ...] [--json OUT]
Exit status 0 only when there were no illegal moves, no time losses and no protocol errors.
"""
import argparse
import json
import os
import random
import sys
import time

from cshogi.usi import Engine

MINISHOGI_START = "rbsgk/4p/5/P4/KGSBR b - 1"


def usi_square_to_ffish(sq):
    # USI file 5..1 -> a..e, rank a..e -> 5..1 (pyffish's minishogi coordinates).
    return chr(97 + 5 - int(sq[0])) + str(5 - (ord(sq[1]) - 97))


def ffish_square_to_usi(sq):
    return str(5 - (ord(sq[0]) - 97)) + chr(97 + 5 - int(sq[1:]))


def ffish_to_usi(move):
    move = move.rstrip("=")
    if "@" in move:
        piece, sq = move.split("@")
        return piece.upper() + "*" + ffish_square_to_usi(sq)
    promo = move.endswith("+")
    body = move[:-1] if promo else move
    return ffish_square_to_usi(body[0:2]) + ffish_square_to_usi(body[2:4]) + ("+" if promo else "")


def usi_to_ffish(move):
    if move[1] == "*":
        return move[0] + "@" + usi_square_to_ffish(move[2:4])
    out = usi_square_to_ffish(move[0:2]) + usi_square_to_ffish(move[2:4])
    return out + ("+" if move.endswith("+") else "")


class ShogiReferee:
    """Standard shogi, judged by cshogi."""

    def __init__(self):
        import cshogi

        self.cshogi = cshogi
        self.board = cshogi.Board()
        self.counts = {}

    def legal(self, usi):
        move = self.board.move_from_usi(usi)
        return move != 0 and self.board.is_legal(move)

    def push(self, usi):
        self.board.push_usi(usi)
        key = self.board.zobrist_hash()
        self.counts[key] = self.counts.get(key, 0) + 1

    def can_declare(self):
        return self.board.is_nyugyoku()

    def legal_moves(self):
        return [self.cshogi.move_to_usi(m) for m in self.board.legal_moves]

    def result(self):
        """None while the game goes on, else (winner 0/1 or None for a draw, reason)."""
        side = self.board.turn
        if self.board.is_game_over():
            return (1 - side, "mate")
        if self.counts.get(self.board.zobrist_hash(), 0) >= 4:
            d = self.board.is_draw()
            if d == self.cshogi.REPETITION_WIN:
                return (side, "perpetual check")
            if d == self.cshogi.REPETITION_LOSE:
                return (1 - side, "perpetual check")
            return (None, "repetition")
        return None


class MinishogiReferee:
    """Minishogi, judged by pyffish; repetition counted on the position part of the FEN."""

    def __init__(self):
        import pyffish

        self.sf = pyffish
        self.start = pyffish.start_fen("minishogi")
        self.moves = []
        self.counts = {}

    def ffish_move(self, usi):
        """pyffish's spelling of a USI move (it writes `=` for a declined promotion), or
        None when the move is not in its legal list."""
        try:
            ff = usi_to_ffish(usi)
        except (ValueError, IndexError):
            return None
        for m in self.sf.legal_moves("minishogi", self.start, self.moves):
            if m == ff or m == ff + "=":
                return m
        return None

    def legal(self, usi):
        ff = self.ffish_move(usi)
        if ff is None:
            return False
        # pyffish lists a mating pawn drop (uchifuzume) as legal: it is not.
        if ff.startswith("P@"):
            after = self.sf.legal_moves("minishogi", self.start, self.moves + [ff])
            gives_check = self.sf.gives_check("minishogi", self.start, self.moves + [ff])
            if gives_check and not after:
                return False
        return True

    def push(self, usi):
        self.moves.append(self.ffish_move(usi))
        fen = self.sf.get_fen("minishogi", self.start, self.moves)
        key = " ".join(fen.split()[:2])
        self.counts[key] = self.counts.get(key, 0) + 1

    def can_declare(self):
        return False

    def legal_moves(self):
        return [ffish_to_usi(m) for m in self.sf.legal_moves("minishogi", self.start, self.moves)
                if self.legal(ffish_to_usi(m))]

    def result(self):
        side = len(self.moves) % 2
        if not self.sf.legal_moves("minishogi", self.start, self.moves):
            return (1 - side, "mate")
        fen = self.sf.get_fen("minishogi", self.start, self.moves)
        if self.counts.get(" ".join(fen.split()[:2]), 0) >= 4:
            # Minishogi's perpetual-check rule is rare enough at this length to call a draw
            # a draw; the engine's own repetition rules are tested elsewhere.
            return (None, "repetition")
        return None


def set_options(engine, options, variant):
    if variant != "shogi":
        engine.setoption("UCI_Variant", variant)
    for name, value in options:
        engine.setoption(name, value)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--variant", default="shogi", choices=["shogi", "minishogi"])
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--byoyomi", type=int, default=200)
    ap.add_argument("--max-plies", type=int, default=80)
    ap.add_argument("--opening-plies", type=int, default=6,
                    help="random legal plies (chosen here, seeded) before the engines play")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--json")
    args = ap.parse_args()
    options = [tuple(o.split("=", 1)) for o in args.option]
    # cshogi starts the engine in its own directory, so a relative path would not resolve.
    args.engine = os.path.abspath(args.engine)

    engines = [Engine(args.engine), Engine(args.engine)]
    startup = []
    for e in engines:
        set_options(e, options, args.variant)
        e.isready(listener=startup.append)
    if any(name == "ModelPath" for name, _ in options):
        # The engine falls back to uniform priors when a model does not load; here that is
        # a failure, so say so rather than test the wrong thing.
        if sum(1 for line in startup if line.startswith("info string model loaded")) != 2:
            print("the model did not load:\n" + "\n".join(startup), file=sys.stderr)
            return 1

    summary = {
        "variant": args.variant,
        "byoyomi_ms": args.byoyomi,
        "games": [],
        "moves": 0,
        "illegal_moves": 0,
        "time_losses": 0,
        "max_move_ms": 0.0,
        "errors": [],
    }
    for game in range(args.games):
        # Colours alternate between the two processes.
        order = engines if game % 2 == 0 else engines[::-1]
        referee = ShogiReferee() if args.variant == "shogi" else MinishogiReferee()
        for e in order:
            e.usinewgame()
        moves = []
        outcome = None
        # A random opening per game, so games differ even with a deterministic engine.
        rng = random.Random(args.seed * 1000 + game // 2)
        for _ in range(args.opening_plies):
            legal = referee.legal_moves()
            if not legal or referee.result() is not None:
                break
            move = rng.choice(sorted(legal))
            referee.push(move)
            moves.append(move)
        outcome = referee.result()
        while outcome is None:
            if len(moves) >= args.max_plies:
                outcome = (None, "max plies")
                break
            side = len(moves) % 2
            engine = order[side]
            engine.position(moves)
            start = time.perf_counter()
            best, _ponder = engine.go(btime=0, wtime=0, byoyomi=args.byoyomi)
            took_ms = (time.perf_counter() - start) * 1000.0
            summary["max_move_ms"] = max(summary["max_move_ms"], took_ms)
            if took_ms > args.byoyomi:
                summary["time_losses"] += 1
                outcome = (1 - side, f"time ({took_ms:.0f} ms > {args.byoyomi} ms)")
                break
            if best == "resign":
                outcome = (1 - side, "resign")
                break
            if best == "win":
                if referee.can_declare():
                    outcome = (side, "declaration")
                else:
                    summary["illegal_moves"] += 1
                    outcome = (1 - side, "false declaration")
                break
            if not referee.legal(best):
                summary["illegal_moves"] += 1
                summary["errors"].append(f"game {game}: illegal {best} after {' '.join(moves)}")
                outcome = (1 - side, f"illegal move {best}")
                break
            referee.push(best)
            moves.append(best)
            summary["moves"] += 1
            outcome = referee.result()
        winner, reason = outcome
        for side, e in enumerate(order):
            e.gameover("draw" if winner is None else ("win" if winner == side else "lose"))
        # gameover handled: the engine must be ready for the next game.
        for e in order:
            e.isready()
        summary["games"].append(
            {"plies": len(moves), "opening_plies": args.opening_plies, "winner": winner,
             "reason": reason, "moves": " ".join(moves)}
        )
        print(f"game {game + 1}: {len(moves)} plies, {reason}, winner "
              f"{'-' if winner is None else 'black' if winner == 0 else 'white'}", flush=True)
    for e in engines:
        e.quit()
    print(f"{summary['moves']} moves, {summary['illegal_moves']} illegal, "
          f"{summary['time_losses']} time losses, slowest move {summary['max_move_ms']:.0f} ms "
          f"at byoyomi {args.byoyomi} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    ok = summary["illegal_moves"] == 0 and summary["time_losses"] == 0 and not summary["errors"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
