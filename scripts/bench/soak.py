"""The soak bench: a smoke-sized run driven for MINUTES under random faults, then checked.

Faults, at random instants drawn from --seed: kill -9 and SIGINT of the trainer (it is
restarted with --resume each time), a replay chunk cut short (a half-copied file), the
newest pending candidate's weights cut short, network batches that fail and answer NaN
(SHOGI_ZERO_INJECT_FAULTS, on some invocations), and a second self-play process on the
same run directory (on some invocations). Then one clean invocation must reach a step
budget, and the invariants are checked:

  - the run reaches its step budget and exits 0;
  - no game was played twice (every generation's seeds are claimed once);
  - no weight anywhere is a NaN or an infinity (candidates set aside as not loading aside);
  - every fault is named in train.log.

It prints the faults injected and survived and exits non-zero if an invariant fails.
Not part of the test suite: `--minutes 2` takes about three minutes, the figures in
docs/ARCHITECTURE.md ("Failure policy") come from `--minutes 30`.

  .venv/bin/python scripts/bench/soak.py --minutes 2 --seed 1
"""

import argparse
import collections
import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def trainer(binary, run_dir, roles, faults, log):
    env = dict(os.environ)
    if faults:
        env["SHOGI_ZERO_INJECT_FAULTS"] = faults
    args = [
        binary, "train", str(ROOT / "configs/smoke.toml"), "--resume",
        "--set", f'run.dir="{run_dir}"',
        "--set", "run.max_steps=1000000",
        "--set", "run.minutes=30",
        # The gate's matches are not what is soaked (tests/cli_train.rs gates): with it
        # on, candidates every few steps pile up faster than it plays them, and the
        # run's end waits for every one. Off, each is still checked to load and set
        # aside if it does not.
        "--set", "gate.enabled=false",
        "--set", "learner.steps_per_candidate=20",
        "--roles", roles,
    ]
    return subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def cut_short(path: pathlib.Path):
    data = path.read_bytes()
    path.write_bytes(data[: max(1, len(data) // 2)])


def inject_file_fault(kind, run_dir: pathlib.Path, rng, counts):
    if kind == "chunk":
        chunks = sorted((run_dir / "replay").glob("*.szgr"))
        if not chunks:
            return
        source = rng.choice(chunks)
        damaged = run_dir / "replay" / f"soak-damaged-{counts['chunk']:04}.szgr"
        damaged.write_bytes(source.read_bytes()[: max(1, source.stat().st_size // 2)])
        counts["chunk"] += 1
    elif kind == "candidate":
        pending = sorted((run_dir / "candidates").glob("step-*/weights.safetensors"))
        if not pending:
            return
        cut_short(pending[-1])
        counts["candidate"] += 1


def newest_step(run_dir: pathlib.Path) -> int:
    steps = [0]
    for sub in ("candidates", "accepted", "rejected"):
        for d in (run_dir / sub).glob("step-*"):
            # step-N.superseded-K: a damaged network kept beside the one trained again.
            if re.fullmatch(r"step-\d+", d.name):
                steps.append(int(d.name.split("-")[1]))
    return max(steps)


def check_weights(run_dir: pathlib.Path):
    """Every checkpoint's weights that read are finite. Weights that do not read at all
    (cut short by the bench, set aside or passed over by the run) are listed apart: a
    damaged file is a fault injected, a non-finite weight is the run's."""
    import torch
    from safetensors.torch import load_file

    bad, damaged, checked = [], [], 0
    for sub in ("candidates", "accepted", "rejected"):
        for d in sorted((run_dir / sub).glob("step-*")):
            try:
                tensors = load_file(str(d / "weights.safetensors"))
            except Exception as e:  # noqa: BLE001 - safetensors raises several kinds
                damaged.append(f"{sub}/{d.name}: {e}")
                continue
            for name, t in tensors.items():
                if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                    bad.append(f"{sub}/{d.name}:{name}")
            checked += 1
    return checked, bad, damaged


# A generation played twice repeats every one of its games, long ones too; a strong
# network also plays some short forced games the same way from different seeds (a
# 74,000-step run's longest such coincidence was 20 plies in 14,234 games). So a game
# counts as played twice only from this length on; shorter coincidences are reported.
LONG_GAME_PLIES = 40


def duplicate_games(binary, run_dir: pathlib.Path, work: pathlib.Path):
    out = work / "games"
    subprocess.run([binary, "export", str(run_dir / "replay"), "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    games = collections.Counter(p.read_text().strip() for p in out.glob("*.usi"))
    def plies(line):
        return len(line.split(" moves ", 1)[1].split()) if " moves " in line else 0
    long_twice = sum(n - 1 for g, n in games.items() if n > 1 and plies(g) >= LONG_GAME_PLIES)
    short_twice = sum(n - 1 for g, n in games.items() if n > 1 and plies(g) < LONG_GAME_PLIES)
    return sum(games.values()), long_twice, short_twice


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--binary", default=str(ROOT / "target/release/shogi-zero"))
    parser.add_argument("--dir", help="run directory (default: a temporary one)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = pathlib.Path(tempfile.mkdtemp(prefix="soak-"))
    run_dir = pathlib.Path(args.dir) if args.dir else work / "run"
    counts = collections.Counter()
    log = open(work / "trainer.out", "ab")
    deadline = time.monotonic() + args.minutes * 60
    while time.monotonic() < deadline:
        faults = ""
        if rng.random() < 0.4:
            faults = f"fail_every={rng.randint(20, 60)},nan_every={rng.randint(40, 120)}"
            counts["network faults"] += 1
        main_proc = trainer(args.binary, run_dir, "all", faults, log)
        second = None
        if rng.random() < 0.3 and (run_dir / "config.toml").exists():
            second = trainer(args.binary, run_dir, "selfplay", "", log)
            counts["second self-play process"] += 1
        # Some file faults while it runs, then a kill or an interrupt.
        life = rng.uniform(3.0, 12.0)
        began = time.monotonic()
        while time.monotonic() - began < life and main_proc.poll() is None:
            time.sleep(rng.uniform(0.5, 3.0))
            kind = rng.choice(["chunk", "candidate", None, None])
            if kind and (run_dir / "replay").exists():
                inject_file_fault(kind, run_dir, rng, counts)
        how = rng.choice(["kill", "int"])
        for proc in (main_proc, second):
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGINT)
        for proc in (main_proc, second):
            if proc is not None:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                    counts["SIGINT not honoured in 60 s"] += 1
        counts["kill -9" if how == "kill" else "SIGINT"] += 1
        # Kept as it goes: a checker that fails later does not lose what was injected.
        (work / "faults.json").write_text(json.dumps(counts, indent=1))
        if how == "int" and main_proc.returncode not in (0, None):
            counts["non-zero exit after SIGINT"] += 1

    # The run goes on to a step budget without faults.
    budget = newest_step(run_dir) + 20
    final = subprocess.run(
        [args.binary, "train", str(ROOT / "configs/smoke.toml"), "--resume",
         "--set", f'run.dir="{run_dir}"', "--set", f"run.max_steps={budget}",
         "--set", "run.minutes=10", "--set", "gate.enabled=false"],
        capture_output=True, text=True)
    train_log = (run_dir / "train.log").read_text()
    checked, non_finite, damaged = check_weights(run_dir)
    games, duplicates, short_alike = duplicate_games(args.binary, run_dir, work)

    named = {
        "kill -9": "resuming run" in train_log,
        "SIGINT": "interrupted" in train_log,
        "chunk": counts["chunk"] == 0 or "replay: skipping" in train_log,
        "candidate": counts["candidate"] == 0
        or "does not load" in train_log
        or "not restored" in train_log,
        "network faults": counts["network faults"] == 0
        or "network call failed" in train_log,
    }
    invariants = {
        "reached its step budget": final.returncode == 0
        and "step budget reached" in final.stdout,
        "no game played twice": duplicates == 0,
        "no non-finite weight": not non_finite,
        "every fault named in train.log": all(named.values()),
        "every SIGINT exited 0 in time": counts["non-zero exit after SIGINT"] == 0
        and counts["SIGINT not honoured in 60 s"] == 0,
    }
    set_aside = len(re.findall(r"set aside in rejected/", train_log))
    print(f"soak: {args.minutes:g} minutes, seed {args.seed}, run {run_dir}")
    print("faults injected: " + ", ".join(
        f"{k} {v}" for k, v in sorted(counts.items())
        if k in ("kill -9", "SIGINT", "chunk", "candidate", "network faults",
                 "second self-play process")))
    print(f"  (chunks cut short {counts['chunk']}, candidates cut short "
          f"{counts['candidate']}, of those set aside by the gate {set_aside}; "
          f"network calls retried {train_log.count('network call failed')})")
    print(f"games in replay {games}, played twice {duplicates} (games of "
          f"{LONG_GAME_PLIES}+ plies; shorter games alike by chance {short_alike}); checkpoints checked "
          f"{checked}, non-finite {len(non_finite)}, unreadable {len(damaged)}; "
          f"final step budget {budget}")
    for line in damaged:
        print(f"  unreadable: {line}")
    for line in non_finite:
        print(f"  non-finite: {line}")
    for name, ok in invariants.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    if not all(invariants.values()):
        print(final.stdout[-2000:], final.stderr[-2000:], file=sys.stderr)
        print({k: v for k, v in named.items()}, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
