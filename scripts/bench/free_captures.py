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

The other side of it, defence: a piece of the mover's worth a lance or more (mobility
values: lance 4, silver 5, gold and promoted minors 6, rook and bishop 16, dragon and
horse 20) is threatened when the opponent, were it to move, would have a free capture of
it; the move answers the threat when afterwards the opponent's best free capture is worth
less, or when it takes a piece worth at least as much. Positions in check are not
counted for threats.
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


# Mobility values by cshogi piece type (colour bits masked off); the king is not counted.
VALUE = {
    cshogi.PAWN: 1, cshogi.LANCE: 4, cshogi.KNIGHT: 2, cshogi.SILVER: 5, cshogi.GOLD: 6,
    cshogi.BISHOP: 16, cshogi.ROOK: 16, cshogi.PROM_PAWN: 6, cshogi.PROM_LANCE: 6,
    cshogi.PROM_KNIGHT: 6, cshogi.PROM_SILVER: 6, cshogi.PROM_BISHOP: 20, cshogi.PROM_ROOK: 20,
}
# The smallest piece whose threat is counted: a lance.
THREAT_VALUE = 4


def piece_value(board, square):
    return VALUE.get(board.piece(square) & 15, 0)


def best_free_capture(board):
    """The value of the most valuable piece the side to move can take for free."""
    return max((piece_value(board, cshogi.move_to(m)) for m in free_captures(board)), default=0)


class Count:
    def __init__(self):
        self.positions = self.offered = self.taken = 0
        self.threatened = self.answered = 0

    def add(self, board, usi):
        self.positions += 1
        free = free_captures(board)
        move = board.move_from_usi(usi)
        if free:
            self.offered += 1
            if move in free:
                self.taken += 1
        if board.is_check():
            return
        board.push_pass()
        threat = best_free_capture(board)
        board.pop_pass()
        if threat < THREAT_VALUE:
            return
        self.threatened += 1
        took = 0 if cshogi.move_is_drop(move) else piece_value(board, cshogi.move_to(move))
        board.push(move)
        left = best_free_capture(board)
        board.pop()
        if left < threat or took >= threat:
            self.answered += 1

    def line(self, name):
        return (f"{name}: {self.positions} positions; a free capture in {self.offered} "
                f"({self.offered / max(self.positions, 1):.1%}), one taken in {self.taken} "
                f"({self.taken / max(self.offered, 1):.1%}); a piece of the mover's (lance or "
                f"more) threatened in {self.threatened} "
                f"({self.threatened / max(self.positions, 1):.1%}), answered in {self.answered} "
                f"({self.answered / max(self.threatened, 1):.1%})")


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
