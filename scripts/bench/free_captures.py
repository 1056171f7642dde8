"""Free captures in standard-shogi games: how often the side to move can take a piece
without being recaptured on that square, and how often it does.

    .venv/bin/python scripts/bench/free_captures.py DIR_OF_USI_FILES [--limit N]
    .venv/bin/python scripts/bench/free_captures.py MATCH_DIR/summary.json

A directory holds `shogi-zero export` output (one `position ... moves ...` line per
`.usi` file: self-play of a run); a match's summary.json is split by player (A's moves,
B's moves). A capture is "free" when, after it, the opponent has no legal capture on the
capturing square; taking a free capture is the least a capture search does, so a player
that leaves most of them on the board is not punishing hanging pieces. Uses cshogi (in
the venv) for the rules: an independent check of what the games show.
"""
import argparse
import glob
import json
import os

import cshogi


def free_captures(board):
    """The legal captures after which the capturing piece cannot be taken back."""
    out = []
    for move in board.legal_moves:
        if cshogi.move_is_drop(move):
            continue
        to = cshogi.move_to(move)
        if not board.piece(to):
            continue
        board.push(move)
        safe = not any(cshogi.move_to(reply) == to for reply in board.legal_moves)
        board.pop()
        if safe:
            out.append(move)
    return out


class Count:
    def __init__(self):
        self.positions = self.offered = self.taken = 0

    def add(self, board, usi):
        self.positions += 1
        free = free_captures(board)
        if free:
            self.offered += 1
            if board.move_from_usi(usi) in free:
                self.taken += 1

    def line(self, name):
        return (f"{name}: {self.positions} positions; a free capture in {self.offered} "
                f"({self.offered / max(self.positions, 1):.1%}), one taken in {self.taken} "
                f"({self.taken / max(self.offered, 1):.1%})")


def replay(start_sfen, moves, count_for):
    board = cshogi.Board()
    if start_sfen:
        board.set_sfen(start_sfen)
    for usi in moves:
        count = count_for(board)
        if count is not None:
            count.add(board, usi)
        board.push_usi(usi)


def usi_line(path):
    """(start SFEN or None, moves) of a `position sfen|startpos ... moves ...` line."""
    parts = open(path).read().split()
    moves = parts[parts.index("moves") + 1:] if "moves" in parts else []
    sfen = " ".join(parts[2:6]) if len(parts) > 1 and parts[1] == "sfen" else None
    return sfen, moves


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", help="a directory of .usi files, or a match's summary.json")
    ap.add_argument("--limit", type=int, default=None, help="at most this many games")
    args = ap.parse_args()
    if os.path.isdir(args.games):
        files = sorted(glob.glob(os.path.join(args.games, "*.usi")))[: args.limit]
        count = Count()
        for path in files:
            sfen, moves = usi_line(path)
            replay(sfen, moves, lambda board: count)
        print(count.line(f"{args.games} ({len(files)} games)"))
    else:
        games = json.load(open(args.games))["games"][: args.limit]
        counts = {"A": Count(), "B": Count()}
        for g in games:
            def count_for(board, a_black=g["a_black"]):
                return counts["A" if (board.turn == cshogi.BLACK) == a_black else "B"]
            replay(g.get("start_sfen"), g["moves"], count_for)
        for who, count in counts.items():
            print(count.line(f"{args.games} ({len(games)} games), {who}'s moves"))


if __name__ == "__main__":
    main()
