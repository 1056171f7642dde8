#!/usr/bin/env python3
"""The Ray launcher under faults, on a local two-node Ray cluster (tests/cli_ray.rs).

The head node (1 CPU) holds the learner (pinned there: --learner-node); the second node
(4 CPUs) the two self-play actors, whose directories are disjoint from the run
directory. The cluster runs with token authentication, as scripts/ray/cluster.py starts
one, and the launcher joins it only because it refuses clients without the token. The smoke config runs
until its learner reaches run.max_steps; meanwhile, at seeded random instants, one
self-play actor's process is killed (SIGKILL), and later the learner actor's. Checked:

- chunks reached the learner and candidates were made; self-play moved to a newer network;
- the killed self-play actor was restarted (a new process, a new seed stream), and every
  chunk its directory held at the kill reached the learner, exactly once, none cut short;
- the learner actor was restarted, its learner process died with it, and the run resumed
  from its last candidate with the optimiser state restored;
- no game appears twice in the run's replay/ (the seed streams are disjoint);
- the cluster refuses a client without its token;
- a node whose shogi-zero build differs from the learner's is named and refused, a
  node that joins the running cluster included;
- the learner runs on the node named by --learner-node;
- a stalled learner (its actor frozen) pauses self-play once --max-backlog chunks wait on
  an actor's disk, and self-play resumes when they drain;
- Ctrl-C (SIGINT to the launcher's whole process group, as a terminal sends it) stops the
  launcher with the learner's export, and the same command resumes the run from that
  candidate;
- a launch that finds no run where this launcher started one stops with an error
  instead of starting a new run.

Prints one line per check and exits 1 on the first failure.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import shogi_zero_ray as launcher  # noqa: E402


def fail(message: str) -> None:
    print(f"FAIL: {message}", flush=True)
    raise SystemExit(1)


def ok(message: str) -> None:
    print(f"ok: {message}", flush=True)


def read_chunk(path: Path) -> list[tuple[str, tuple[int, ...], bytes]]:
    """(start SFEN, moves, the whole record) of every game of a chunk; refuses a chunk cut
    short or corrupted (the format of crates/records/src/record.rs)."""
    data = path.read_bytes()
    if data[:4] != b"SZGR" or data[-4:] != b"SZEN":
        raise ValueError(f"{path.name}: bad magic or trailer (cut short?)")
    (count,) = struct.unpack_from("<I", data, 8)
    at, games = 12, []
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, at)
        payload = data[at + 4 : at + 4 + length]
        (crc,) = struct.unpack_from("<I", data, at + 4 + length)
        if zlib.crc32(payload) != crc:
            raise ValueError(f"{path.name}: a game fails its checksum")
        at += 8 + length
        p = payload[0] + 1  # variant:str8
        (sfen_len,) = struct.unpack_from("<H", payload, p)
        sfen = payload[p + 2 : p + 2 + sfen_len].decode()
        p += 2 + sfen_len + 4 + 4  # max_plies, impasse, winner, reason, flags
        (moves,) = struct.unpack_from("<I", payload, p)
        p += 4
        played = []
        for _ in range(moves):
            mv, _value, _flags, searched = struct.unpack_from("<IfBH", payload, p)
            played.append(mv)
            p += 11 + 12 * searched
        games.append((sfen, tuple(played), payload))
    if at + 4 != len(data):
        raise ValueError(f"{path.name}: {len(data) - at - 4} stray bytes")
    return games


def wait_for(what: str, predicate, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    fail(f"timed out after {timeout:.0f} s waiting for {what}")


MAX_BACKLOG = 3


def wait_exit(driver: subprocess.Popen, timeout: float, what: str) -> str:
    """The launcher's output once it exits; fails (printing it) if it does not `what`."""
    try:
        return driver.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        driver.kill()
        print(driver.communicate()[0])
        fail(f"the launcher did not {what}")


def process_state(pid: int) -> str | None:
    """The process's state letter from /proc (T: stopped), None once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie counts as dead.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--config", default=str(HERE.parents[1] / "configs/smoke.toml"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    # The launcher must get the test's Ctrl-C as a terminal's foreground job would, even
    # when this test was started with SIGINT ignored (a background job of a non-interactive
    # shell, as scripts start CI): an ignored signal stays ignored across exec, and Python
    # then never raises KeyboardInterrupt; a handled one is reset to the default.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if launcher.ray is None:
        fail(f"Ray is not installed in {sys.executable} (bash scripts/bootstrap.sh)")
    ray = launcher.ray
    from ray.cluster_utils import Cluster

    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="shogi-zero-ray-test-"))
    run_dir = tmp / "learner-node" / "run"
    local_root = tmp / "selfplay-node"
    # Token authentication for the cluster, the test and the launcher it starts; the
    # launcher's record of its runs stays in the temporary directory.
    token = tmp / "auth_token"
    token.write_text(os.urandom(32).hex())
    token.chmod(0o600)
    os.environ.update(RAY_AUTH_TOKEN_PATH=str(token), XDG_STATE_HOME=str(tmp / "state"))
    launcher.use_token_auth()
    began = time.monotonic()
    # Small object stores: the test moves a few megabytes.
    store = 100 * 1024 * 1024
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "object_store_memory": store},
    )
    cluster.add_node(num_cpus=4, object_store_memory=store)
    cluster.wait_for_nodes()
    driver = None
    try:
        ray.init(address=cluster.address, namespace=launcher.NAMESPACE, log_to_driver=False)
        answered, said = launcher.answers_without_token(cluster.address)
        if answered is not False:
            fail(f"the cluster did not refuse a client without its token: {said}")
        ok(f"the cluster refuses a client without its token ({said[:80]}...)")
        # --- a node with another build is named before any actor starts
        reference = launcher.binary_identity(args.binary)
        if not re.fullmatch(r"build: sha256 [0-9a-f]{64}", reference["build"]):
            fail(f"shogi-zero info reports no build hash: {reference['build']!r}")
        other_build = {**reference, "build": "build: sha256 " + "0" * 64}
        refused = launcher.check_nodes(args.binary, other_build)
        if len(refused) != 2 or not all("node " in r and "install the same shogi-zero" in r for r in refused):
            fail(f"the nodes of another build are not each named: {refused}")
        ok(f"a differing build is refused by name: {refused[0][:120]}...")
        if launcher.check_nodes(args.binary, reference):
            fail("check_nodes refused nodes of the same build")
        head_node = cluster.head_node.node_id

        def launch(max_steps: int) -> subprocess.Popen:
            command = [
                sys.executable, str(HERE / "shogi_zero_ray.py"), args.config, "--address", cluster.address,
                "--selfplay-actors", "2", "--selfplay-cpus", "2", "--binary", args.binary,
                "--run-dir", str(run_dir), "--local-root", str(local_root), "--status-every", "10",
                "--learner-node", head_node,
                "--set", f"run.max_steps={max_steps}", "--set", "run.minutes=4", "--set", "learner.min_positions=200",
                "--max-backlog", str(MAX_BACKLOG),
            ]
            # Its own session: Ctrl-C goes to its process group, as from a terminal.
            return subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
            )

        # The first launch runs until Ctrl-C; the rerun ends two candidates after it.
        driver = launch(100_000)
        print(f"cluster up and launcher started after {time.monotonic() - began:.0f} s", flush=True)

        def actor(name):
            try:
                return ray.get_actor(name)
            except ValueError:
                return None

        learner = wait_for("the learner actor", lambda: actor(launcher.learner_name(str(run_dir))), 120)
        placed = ray.get(learner.placement.remote())
        if placed["node_id"] != head_node:
            fail(f"the learner runs on node {placed['node_id'][:12]}, not on --learner-node {head_node[:12]}")
        ok(f"the learner runs on the node named by --learner-node ({head_node[:12]}), run id {placed['run_id'][:12]}")
        selfplay = [
            wait_for(f"self-play actor {i}", lambda i=i: actor(launcher.selfplay_name(str(run_dir), i)), 120)
            for i in range(2)
        ]
        wait_for("chunks from both actors", lambda: len(ray.get(learner.status.remote())["actors"]) == 2
                 and all(a["chunks"] > 0 for a in ray.get(learner.status.remote())["actors"].values()), 240)
        ok(f"chunks from both self-play actors reached the learner after {time.monotonic() - began:.0f} s")

        # --- a node that joins the running cluster is checked too, and only it
        first_nodes = {n["NodeID"] for n in ray.nodes() if n.get("Alive")}
        late = cluster.add_node(num_cpus=0, object_store_memory=store)
        cluster.wait_for_nodes()
        seen = set(first_nodes)
        refused = launcher.check_nodes(args.binary, other_build, seen)
        if len(refused) != 1 or late.node_id[:12] not in refused[0]:
            fail(f"the late node {late.node_id[:12]} was not the one named: {refused}")
        if launcher.check_nodes(args.binary, other_build, seen):
            fail("a node already checked was checked again")
        if launcher.check_nodes(args.binary, reference, set(first_nodes)):
            fail("a late node of the same build was refused")
        cluster.remove_node(late)
        ok(f"a node that joined later is checked alone: {refused[0][:100]}...")
        # The launcher's own look at the nodes (each status line) may have found the late
        # node and lost it before it answered: it goes on (it owns every actor).
        if driver.poll() is not None:
            fail(f"the launcher exited ({driver.returncode}) once a node left:\n{driver.communicate()[0][-3000:]}")

        # --- a self-play actor dies at a seeded random instant
        time.sleep(rng.uniform(0.0, 5.0))
        victim = selfplay[0]
        old_pid, old_child = ray.get(victim.pid.remote()), ray.get(victim.child_pid.remote())
        old_stream = ray.get(victim.status.remote())["stream"]
        local_replay = Path(ray.get(victim.local_dir.remote())) / "replay"
        # Freeze the actor (its uploads stop) until its self-play process has published
        # a chunk it could not send, freeze that too, note what the directory holds, kill.
        os.kill(old_pid, signal.SIGSTOP)
        wait_for("an unsent chunk", lambda: launcher.finished_chunks(local_replay), 120, 0.05)
        os.kill(old_child, signal.SIGSTOP)
        held = sorted(p.name for p in launcher.finished_chunks(local_replay))
        os.kill(old_pid, signal.SIGKILL)
        wait_for("the killed actor's self-play process to die with it", lambda: not process_alive(old_child), 30, 0.05)
        new_pid = wait_for("the self-play actor's restart", lambda: (lambda p: p if p != old_pid else None)(
            ray.get(victim.pid.remote())), 120)
        new_stream = ray.get(victim.status.remote())["stream"]
        if new_stream == old_stream:
            fail(f"the restarted actor reuses seed stream {old_stream}")
        ok(f"self-play actor 0 restarted (pid {old_pid} -> {new_pid}, seed stream {old_stream} -> {new_stream}); "
           f"its directory held {len(held)} unsent chunks at the kill")

        # --- backpressure: the learner's actor stalls; self-play pauses at the backlog
        learner_pid = ray.get(learner.pid.remote())
        other = selfplay[1]
        other_child = ray.get(other.child_pid.remote())
        other_replay = Path(ray.get(other.local_dir.remote())) / "replay"
        os.kill(learner_pid, signal.SIGSTOP)
        try:
            wait_for("self-play paused by its backlog", lambda: process_state(other_child) == "T", 240, 0.1)
            backlog = len(launcher.finished_chunks(other_replay))
            # The actor looks twice a second; the smoke config's tiny games can finish a
            # few chunks in between, so the pause lands a few chunks past the limit.
            if not MAX_BACKLOG < backlog <= MAX_BACKLOG + 8:
                fail(f"paused with {backlog} chunks waiting (--max-backlog {MAX_BACKLOG})")
            time.sleep(3)
            later = len(launcher.finished_chunks(other_replay))
            if later != backlog:
                fail(f"the backlog grew from {backlog} to {later} chunks while self-play was paused")
            ok(f"a stalled learner paused self-play with {backlog} chunks waiting (--max-backlog {MAX_BACKLOG}), "
               "and the backlog stayed there")
        finally:
            os.kill(learner_pid, signal.SIGCONT)
        wait_for("self-play resumed once the backlog drained", lambda: process_state(other_child) not in ("T", None), 120, 0.1)
        ok("the backlog drained and self-play resumed")

        # --- the learner actor dies after its first candidate
        wait_for("a first candidate", lambda: (ray.get(learner.status.remote())["newest"] or "step-00000000") > "step-00000000", 240)
        time.sleep(rng.uniform(0.0, 3.0))
        learner_pid, learner_child = ray.get(learner.pid.remote()), ray.get(learner.learner_pid.remote())
        before = ray.get(learner.status.remote())["newest"]
        os.kill(learner_pid, signal.SIGKILL)
        wait_for("the learner process to die with its actor", lambda: not process_alive(learner_child), 30, 0.05)
        restarted = wait_for("the learner actor's restart", lambda: (lambda p: p if p != learner_pid else None)(
            ray.get(learner.pid.remote())), 120)
        ok(f"learner actor restarted (pid {learner_pid} -> {restarted}) after its newest network was {before}")

        # --- Ctrl-C once the restarted learner made a candidate; the same command resumes
        wait_for("a candidate after the learner's restart",
                 lambda: (ray.get(learner.status.remote())["newest"] or "") > before, 240)
        os.killpg(driver.pid, signal.SIGINT)
        out = wait_exit(driver, 400, "stop within 400 s of Ctrl-C")
        if driver.returncode != 130 or "interrupted" not in out:
            print(out)
            fail(f"Ctrl-C: the launcher exited {driver.returncode}, not 130 with 'interrupted'")
        # The learner exports on stop what it trained since its last candidate (nothing,
        # if Ctrl-C came right after one): the rerun must resume from the newest.
        candidates = sorted(p.name for p in (run_dir / "candidates").glob("step-*") if launcher.STEP_RE.match(p.name))
        if not candidates:
            fail("Ctrl-C: no candidate in the run directory")
        interrupted_at = candidates[-1]
        on_stop = re.findall(r"learner exported \S*/(step-\d+) on stop", (run_dir / "learn+gate.log").read_text())
        how = "exported on stop" if on_stop and on_stop[-1] == interrupted_at else "nothing trained since it"
        ok(f"Ctrl-C stopped the launcher (exit 130); newest candidate {interrupted_at} ({how})")
        # The same command resumes the run; its step budget now ends it soon.
        driver = launch(int(interrupted_at.removeprefix("step-")) + 40)

        # --- the rerun ends on its own (run.max_steps)
        out = wait_exit(driver, 600, "finish the resumed run within 600 s")
        print(out.rstrip())
        if driver.returncode != 0:
            fail(f"the launcher exited {driver.returncode}")
        ok(f"the launcher finished the run after {time.monotonic() - began:.0f} s")

        # --- what reached the learner
        replay = run_dir / "replay"
        names = sorted(p.name for p in replay.glob("*.szgr"))
        if not names:
            fail("no chunk in the learner's replay/")
        games, owners = {}, {}
        for name in names:
            try:
                # A game played twice (same seed, same network) is the same record byte for
                # byte, search figures included; two short games of an untrained network
                # may share their moves by chance, never their searches.
                for _sfen, moves, record in read_chunk(replay / name):
                    if record in games:
                        fail(f"a game of {len(moves)} plies appears twice: in {games[record]} and {name}")
                    games[record] = name
            except ValueError as e:
                fail(str(e))
        # Seeds are a function of the generation number in each chunk's name: no two
        # self-play processes (actors or incarnations) may share one.
        by_generation: dict[str, set[str]] = {}
        for name in names:
            m = re.match(r"(selfplay-ray\d{3}-[0-9a-f]+)-g(\d+)-a\d\d-\d+\.szgr$", name)
            if not m:
                fail(f"unexpected chunk name {name}")
            by_generation.setdefault(m.group(2), set()).add(m.group(1))
        shared = {g: p for g, p in by_generation.items() if len(p) > 1}
        if shared:
            fail(f"generations (seeds) played by more than one process: {shared}")
        ok(f"{len(names)} chunks, {len(games)} games in replay/, all whole, no game twice, "
           f"{len(by_generation)} generations each played by one process")
        for name in held:
            sent = launcher.upload_name(0, name)
            if sent not in names:
                fail(f"{name} (in actor 0's directory at the kill) never reached the learner as {sent}")
        ledger = (run_dir / launcher.LEDGER_FILE).read_text().split()
        if len(ledger) != len(set(ledger)):
            fail("a chunk was published twice (ray-received.txt has a name twice)")
        if sorted(ledger) != names:
            fail(f"ray-received.txt ({len(ledger)}) and replay/ ({len(names)}) disagree")
        for i in range(2):
            tags = {re.sub(r"-g\d+-a\d\d-\d+\.szgr$", "", n) for n in names if n.startswith(f"selfplay-ray{i:03d}-")}
            owners[i] = tags
        if len(owners[0]) < 2:
            fail(f"actor 0's chunks come from {len(owners[0])} self-play process(es): none after its restart")
        ok(f"the {len(held)} chunks held at the kill arrived exactly once; actor 0 wrote from {len(owners[0])} processes")

        accepted = sorted(p.name for p in (run_dir / "accepted").glob("step-*"))
        if len(accepted) < 2:
            fail(f"no candidate was accepted: {accepted}")
        local_nets = {
            i: sorted(p.name for p in (local_root / f"actor-{i:03d}" / "accepted").glob("step-*")) for i in range(2)
        }
        if not all(nets and nets[-1] > "step-00000000" for nets in local_nets.values()):
            fail(f"self-play did not move to a newer network: {local_nets}")
        ok(f"accepted {accepted[1:]}; self-play followed to {[n[-1] for n in local_nets.values()]}")

        log = (run_dir / "learn+gate.log").read_text()
        starts = re.findall(r"learner (?:starts|resumes) from (step-\d+) at step (\d+)", log)
        if len(starts) < 3:
            fail(f"the learner did not start three times (start, restart, rerun): {starts}")
        if starts[2][0] != interrupted_at:
            fail(f"the rerun resumed from {starts[2][0]}, not from {interrupted_at} exported at Ctrl-C")
        ok(f"the rerun resumed from {interrupted_at}")
        resumed_from, step = starts[1]
        if int(step) == 0 or resumed_from < before:
            fail(f"the restarted learner began at {resumed_from} (step {step}), not at its last candidate {before}")
        after = log[log.rindex(f"learner resumes from {resumed_from}"):]
        if f"optimiser state restored from {resumed_from}" not in after:
            fail(f"no 'optimiser state restored from {resumed_from}' after the restart")
        ok(f"the learner resumed from {resumed_from} at step {step} with its optimiser state")

        # --- the run directory is gone (another disk, another node): no new run
        run_dir.rename(run_dir.with_name("moved"))
        driver = launch(100_000)
        out = wait_exit(driver, 300, "stop within 300 s when the run is missing")
        if driver.returncode == 0 or "no run at" not in out or run_dir.exists():
            print(out)
            fail(f"a launch with its run missing exited {driver.returncode} (or made a new run)")
        ok(f"a launch whose run is missing stops: {out.strip().splitlines()[-1][:160]}")
        print(f"all checks passed in {time.monotonic() - began:.0f} s", flush=True)
        return 0
    finally:
        if driver and driver.poll() is None:
            driver.kill()
        ray.shutdown()
        cluster.shutdown()
        if not args.keep:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}")


if __name__ == "__main__":
    sys.exit(main())
