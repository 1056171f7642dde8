"""Nodes per second of the USI engine by search threads: each build and Threads value in
turn, alternated over ROUNDS, `go byoyomi MS` from every position of a positions file;
prints each run's mean nodes per second over the positions and each one's ratio to the
first. Run it alone on the machine (a build beside it halves the figures).

A positions file holds one `position ...` line per position (`position startpos moves
...` or `position sfen ...`); `--from-games DIR` writes one instead from the `.usi` games
of `shogi-zero export` (the position after every PLY-th ply of each game, at most
`--positions` of them) and exits.

  .venv/bin/python scripts/bench/usi_threads.py --from-games runs/x/games --out pos.txt
  .venv/bin/python scripts/bench/usi_threads.py --engine target/release/shogi-zero \\
      --model runs/shogi-cpu --positions-file pos.txt --threads 1,2 --rounds 2

An engine given as BIN:OPTION=VALUE,... sets those options too.

`--games DIR` measures as a game does instead: each of the first `--positions` `.usi`
games of DIR is walked from ply `--start-ply`, every second ply (one side's moves, so the
engine's tree is carried over from its last search as in a match), `go byoyomi MS` at
each, at most `--moves` moves a game; a run's figure is the median over the moves of
each search's simulations a second (the `nps` of its last `info` line), beside the
nodes a second of thinking over them all (as `match` reports it: the simulations over
the time, which moves of cheap proven simulations late in a game can dominate) and the
thinking time a move used (its last `info` line's `time`).
"""

import argparse
import pathlib
import statistics
import subprocess
import sys
import time


def positions_from_games(games: pathlib.Path, every: int, limit: int) -> list[str]:
    out = []
    for path in sorted(games.glob("*.usi")):
        for line in path.read_text().splitlines():
            words = line.split()
            if len(words) < 2 or words[0] != "position":
                continue
            if "moves" not in words:
                continue
            cut = words.index("moves") + 1
            moves = words[cut:]
            for ply in range(every, len(moves) - 1, every):
                out.append(" ".join(words[:cut] + moves[:ply]))
                if len(out) >= limit:
                    return out
    return out


class Engine:
    def __init__(self, command: str, options: dict[str, str]):
        self.proc = subprocess.Popen(
            [command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self.send("usi")
        self.wait_for("usiok")
        for name, value in options.items():
            self.send(f"setoption name {name} value {value}")
        self.send("isready")
        self.wait_for("readyok", timeout=600)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, word: str, timeout: float = 60) -> list[str]:
        assert self.proc.stdout is not None
        lines = []
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"engine ended waiting for {word}")
            line = line.strip()
            lines.append(line)
            if line.split()[:1] == [word]:
                return lines
        raise RuntimeError(f"no {word} in {timeout} s")

    def search(self, position: str, byoyomi_ms: int) -> tuple[list[list[str]], float]:
        """Searches `position` for `byoyomi_ms`: the words of its scored info lines and
        the wall seconds until `bestmove`."""
        self.send(position)
        self.send(f"go btime 0 wtime 0 byoyomi {byoyomi_ms}")
        began = time.time()
        lines = self.wait_for("bestmove", timeout=byoyomi_ms / 1000 + 30)
        seconds = time.time() - began
        infos = [l.split() for l in lines if l.startswith("info") and " score " in l and " nodes " in l]
        return infos, seconds

    def nodes_per_second(self, position: str, byoyomi_ms: int) -> float:
        self.send("usinewgame")
        infos, seconds = self.search(position, byoyomi_ms)
        nodes = int(infos[-1][infos[-1].index("nodes") + 1]) if infos else 0
        return nodes / seconds

    def game_searches(self, game: str, start_ply: int, moves: int, byoyomi_ms: int) -> list[tuple[float, float]]:
        """(simulations, milliseconds) of each of one side's searches along `game`, the
        tree carried over."""
        words = game.split()
        cut = words.index("moves") + 1
        played = words[cut:]
        self.send("usinewgame")
        searches = []
        for ply in range(start_ply, len(played), 2):
            if len(searches) >= moves:
                break
            infos, _ = self.search(" ".join(words[:cut] + played[:ply]), byoyomi_ms)
            infos = [info for info in infos if "nps" in info]
            # A mate proved (by the probe or the search) ends the move early: not counted.
            if infos and "mate" not in infos[-1]:
                last = infos[-1]
                ms = float(last[last.index("time") + 1])
                searches.append((float(last[last.index("nps") + 1]) * ms / 1000, ms))
        return searches

    def close(self) -> None:
        self.send("quit")
        self.proc.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from-games", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--every", type=int, default=20, help="plies between positions of a game")
    ap.add_argument("--positions", type=int, default=20)
    ap.add_argument("--engine", action="append", default=[])
    ap.add_argument("--model", default="")
    ap.add_argument("--positions-file", type=pathlib.Path)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--byoyomi", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--games", type=pathlib.Path, help="walk these games' plies instead (see above)")
    ap.add_argument("--start-ply", type=int, default=10)
    ap.add_argument("--moves", type=int, default=30)
    args = ap.parse_args()
    if args.from_games:
        positions = positions_from_games(args.from_games, args.every, args.positions)
        if not positions or args.out is None:
            print("no positions (or no --out)", file=sys.stderr)
            return 2
        args.out.write_text("\n".join(positions) + "\n")
        print(f"{len(positions)} positions -> {args.out}")
        return 0
    if not args.engine or (args.positions_file is None) == (args.games is None):
        ap.error("--engine and one of --positions-file and --games are required")
    if args.games:
        games = [
            line
            for path in sorted(args.games.glob("*.usi"))
            for line in path.read_text().splitlines()
            if line.startswith("position") and " moves " in line
        ][: args.positions]
    else:
        positions = [l for l in args.positions_file.read_text().splitlines() if l.startswith("position")]
        positions = positions[: args.positions]
    runs = []
    for engine in args.engine:
        command, _, extra = engine.partition(":")
        options = dict(o.split("=", 1) for o in extra.split(",") if o)
        for threads in args.threads.split(","):
            label = "".join(f" {k}={v}" for k, v in options.items())
            runs.append((f"{pathlib.Path(command).name}{label} Threads {threads}", command, {**options, "Threads": threads}))
    figures: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for round_ in range(1, args.rounds + 1):
        for name, command, options in runs:
            engine = Engine(command, {"ModelPath": args.model, "USI_Hash": "1024", **options})
            if args.games:
                searches = [
                    s for g in games for s in engine.game_searches(g, args.start_ply, args.moves, args.byoyomi)
                ]
                rate = statistics.median(n * 1000 / max(ms, 1) for n, ms in searches)
                thinking = sum(n for n, _ in searches) * 1000 / max(sum(ms for _, ms in searches), 1)
                used = statistics.mean(ms for _, ms in searches)
                what = (
                    f"{len(searches)} moves of {len(games)} games (median; {thinking:.0f} over the thinking"
                    f" time; {used:.0f} ms a move of {args.byoyomi})"
                )
            else:
                rate = statistics.mean(engine.nodes_per_second(p, args.byoyomi) for p in positions)
                what = f"{len(positions)} positions"
            engine.close()
            figures[name].append(rate)
            print(f"round {round_}: {name}: {rate:.0f} nodes/s over {what}", flush=True)
    first = statistics.mean(figures[runs[0][0]])
    for name, values in figures.items():
        mean = statistics.mean(values)
        print(f"{name}: {mean:.0f} nodes/s (rounds {', '.join(f'{v:.0f}' for v in values)}), {mean / first:.2f}x the first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
