#!/usr/bin/env python3
"""Runs a shogi-zero training run on a Ray cluster: one learner-and-gate actor that owns
the run directory and N self-play actors on node-local directories, with no shared
filesystem between them.

    python scripts/ray/shogi_zero_ray.py configs/shogi-gpu.toml --selfplay-actors 8
    python scripts/ray/shogi_zero_ray.py configs/shogi-gpu.toml --address 10.0.0.5:6379

The Rust binary does all the work; this file only moves bytes and restarts processes:

- The learner actor runs `shogi-zero train CONFIG --resume --roles learn,gate` on the run
  directory (durable storage on its node). Replay chunks arrive by actor calls and are
  published into RUN/replay/ with the run directory's write-then-rename rule; a chunk
  whose name was received before is dropped, so delivery is idempotent.
- Each self-play actor runs `shogi-zero selfplay --follow LOCAL` on a directory of its
  own node holding the run's config and the newest network. It uploads every finished
  chunk (and deletes it only once the learner has it), and publishes each new best
  network into LOCAL/accepted/ when the learner has one: a network is put into Ray's
  object store once and pulled once per node.
- Seeds: every actor incarnation gets a stream number from the learner (a counter kept
  in RUN/ray-streams) and starts its generation counter at stream << 32, so no two
  incarnations, on any node, play a generation with the same seeds.
- Faults: Ray restarts a dead actor (max_restarts=-1); a restarted self-play actor
  uploads what its directory still holds and goes on with the newest network; a
  restarted learner resumes the run from its last candidate, as `train RUN` does. The
  learner is pinned to the node that holds the run directory (--learner-node, default
  the driver's), and a learner that finds no run where one existed (RUN/ray-run-id, and
  the driver's record of it) stops instead of starting a new one. The children die with
  their actor (PR_SET_PDEATHSIG) and run in their own process group (a terminal's
  Ctrl-C reaches the driver, which stops them in order). A self-play process that keeps
  crashing is restarted with a growing delay, and the status line shows it down.
- Backpressure: a self-play actor has one upload in flight at a time; when more than
  --max-backlog chunks wait in its directory (a slow learner), its self-play process is
  paused (SIGSTOP) until they drain.

Ctrl-C stops the self-play processes (they flush their games), uploads what they wrote,
stops the learner (it exports a candidate) and exits; the same command resumes the run.

Security: with --address the launcher joins only a cluster that refuses clients without
its token (scripts/ray/cluster.py starts one); --trusted-network skips that check. Every
node must run the same shogi-zero build (`shogi-zero info`'s build line: the binary's
SHA-256), nodes that join later included. No dashboard is started.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

RAY_PIN = "ray==2.60.0"
# Every actor is named in this namespace (a test or a second driver finds them by name).
NAMESPACE = "shogi-zero"
STREAMS_FILE = "ray-streams"
LEDGER_FILE = "ray-received.txt"
CHUNK_SUFFIX = ".szgr"
RUN_ID_FILE = "ray-run-id"
STEP_RE = re.compile(r"^step-(\d{8})$")
# Files of a checkpoint that self-play needs (the optimiser state stays with the learner).
NETWORK_FILES = ("manifest.json", "weights.safetensors")

try:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
except ImportError:  # the rest of the project works without Ray
    ray = None


# ---------------------------------------------------------------- run directory rules


def temporary_path(dest: Path) -> Path:
    """The run directory's one temporary scheme, `.NAME.tmp-PID` beside the target."""
    return dest.parent / f".{dest.name}.tmp-{os.getpid()}"


def is_temporary_name(name: str) -> bool:
    if not name.startswith("."):
        return False
    stem, sep, pid = name[1:].rpartition(".tmp-")
    return bool(sep and stem and pid.isdigit())


def write_atomic(path: Path, data: bytes) -> None:
    """Write, fsync, rename, sync the directory: readers see the old file or the new."""
    tmp = temporary_path(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    sync_dir(path.parent)


def sync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def publish_network(accepted: Path, name: str, files: dict[str, bytes]) -> None:
    """Publish a checkpoint directory `accepted/NAME` by one rename of a full temporary."""
    dest = accepted / name
    if (dest / "manifest.json").is_file():
        return
    tmp = temporary_path(dest)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for file_name, data in files.items():
        with open(tmp / file_name, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    shutil.rmtree(dest, ignore_errors=True)
    os.rename(tmp, dest)
    sync_dir(accepted)


def newest_checkpoint(directory: Path) -> str | None:
    """The highest complete `step-N` in a directory (complete: it holds manifest.json)."""
    try:
        names = [
            e.name
            for e in os.scandir(directory)
            if STEP_RE.match(e.name) and os.path.isfile(os.path.join(e.path, "manifest.json"))
        ]
    except FileNotFoundError:
        return None
    return max(names) if names else None


def step_of(name: str | None) -> int | None:
    m = STEP_RE.match(name or "")
    return int(m.group(1)) if m else None


def finished_chunks(replay: Path) -> list[Path]:
    """Published chunks, oldest first (temporaries are dot-named and skipped)."""
    try:
        entries = [e for e in os.scandir(replay) if e.name.endswith(CHUNK_SUFFIX) and not e.name.startswith(".")]
    except FileNotFoundError:
        return []
    entries.sort(key=lambda e: (e.stat().st_mtime_ns, e.name))
    return [Path(e.path) for e in entries]


def remove_temporaries(directory: Path) -> None:
    if not directory.is_dir():
        return
    for entry in os.scandir(directory):
        if is_temporary_name(entry.name):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


def upload_name(actor_id: int, local_name: str) -> str:
    """The chunk's name in the learner's replay/: the actor's id, then the local name
    (itself unique within the actor's directory: process tag, thread, index)."""
    rest = local_name[len("selfplay-"):] if local_name.startswith("selfplay-") else local_name
    return f"selfplay-ray{actor_id:03d}-{rest}"


def die_with_parent():
    """A preexec_fn: the child gets SIGKILL when the thread that started it dies, so a
    killed actor leaves no orphan self-play or learner process behind (Linux), and it
    gets SIGINT and SIGTERM as a shell's child would: a Ray worker blocks or ignores
    them, and a child inherits both, so the Ctrl-C that makes `shogi-zero` flush would
    never arrive. libc is loaded here, in the parent: the forked child only calls it."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        libc = None

    def child() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        if libc is not None:
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return child


def spawn(command: list[str], log) -> subprocess.Popen:
    """Starts a child of an actor: it dies with the actor (die_with_parent) and runs in
    a process group of its own, so a Ctrl-C typed at the terminal of a local cluster
    reaches the driver alone, which stops the children in order (flush, upload, export),
    instead of every child at once, which the supervisors would take for crashes."""
    return subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent(), start_new_session=True
    )


IDENTITY_KEYS = ("version", "formats", "build")


def binary_identity(binary: str) -> dict:
    """What two nodes of one run must agree on: the version, the formats line
    (checkpoint, input planes, policy, replay chunk versions) and the build line (the
    binary's SHA-256: one build, byte for byte) of `shogi-zero info`."""
    try:
        out = subprocess.run(
            [binary, "info", "--device", "cpu"], capture_output=True, text=True, timeout=300, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": f"{binary}: {e}"}
    lines = out.splitlines()
    formats = next((l for l in lines if l.startswith("formats:")), "formats: (not reported: an older build)")
    build = next((l for l in lines if l.startswith("build:")), "build: (not reported: an older build)")
    return {"version": lines[0] if lines else "", "formats": formats, "build": build}


def identity_mismatch(found: dict, reference: dict) -> str | None:
    """What differs between a node's identity and the reference, in words, or None."""
    if "error" in found:
        return f"cannot run the binary: {found['error']}"
    for key in IDENTITY_KEYS:
        if found.get(key) != reference.get(key):
            return f"runs {found.get(key)!r} where the learner's node runs {reference.get(key)!r}"
    return None


def toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def read_config(config_text: str, overrides: list[str]) -> dict:
    """The config as TOML with the `--set` overrides of run.dir and run.device applied
    (the binary validates everything; the launcher needs only where and on what)."""
    import tomllib

    try:
        config = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError as e:
        raise SystemExit(f"shogi-zero-ray: the config is not valid TOML: {e}")
    run = config.setdefault("run", {})
    for o in overrides:
        key, sep, value = o.partition("=")
        if not sep:
            raise SystemExit(f"shogi-zero-ray: --set {o!r}: expected section.key=value")
        if key.strip() in ("run.dir", "run.device"):
            try:
                run[key.strip()[4:]] = tomllib.loads(f"v = {value}")["v"]
            except tomllib.TOMLDecodeError:
                run[key.strip()[4:]] = value.strip()
    run.setdefault("dir", "runs/default")
    run.setdefault("device", "auto")
    return config


# ---------------------------------------------------------------------- the learner


class RunMissing(RuntimeError):
    """A learner found no run where one is known to exist (another node, a lost disk)."""


def claim_run(run: Path, expected: str | None, new_id: str, reconstructed: bool) -> str:
    """The run id of RUN, creating the run's marker when this is a new run. A learner
    restarted by Ray (reconstructed) or a launch the driver knows a run for (expected)
    never starts a new run where it finds none: that would silently restart the ledger,
    the seed streams and the network from scratch."""
    marker = run / RUN_ID_FILE
    found = marker.read_text().strip() if marker.is_file() else None
    where = f"{run} on node {node_address()}"
    if found is not None:
        if expected is not None and found != expected:
            raise RunMissing(f"{where} holds run {found}, not the run {expected} this launcher started there")
        return found
    if expected is not None or reconstructed:
        why = "the learner actor was restarted" if reconstructed else f"the driver started run {expected} there"
        raise RunMissing(
            f"no run at {where}, but {why}: not starting a new run (is the run directory on "
            f"another node or lost? --learner-node pins the learner, --new-run starts afresh)"
        )
    run.mkdir(parents=True, exist_ok=True)
    write_atomic(marker, f"{new_id}\n".encode())
    return new_id


def node_address() -> str:
    try:
        return ray.util.get_node_ip_address()
    except Exception:  # outside Ray (the unit tests)
        return "this node"


class LearnerActor:
    """Owns the run directory: runs the learner and the gate, receives chunks, hands out
    seed streams and the newest network."""

    def __init__(
        self, binary: str, run_dir: str, config_text: str, overrides: list[str], device: str,
        expected_run: str | None = None, new_run: str = "",
    ):
        self.binary = binary
        self.run = Path(run_dir)
        reconstructed = ray.get_runtime_context().was_current_actor_reconstructed
        self.run_id = claim_run(self.run, expected_run, new_run, reconstructed)
        (self.run / "replay").mkdir(exist_ok=True)
        remove_temporaries(self.run / "replay")
        self.lock = threading.Lock()
        ledger = self.run / LEDGER_FILE
        self.received = set(ledger.read_text().split()) if ledger.exists() else set()
        self.ledger = open(ledger, "a")
        self.per_actor: dict[int, dict] = {}
        self.duplicates = 0
        self.network_cache: tuple[str, list] | None = None
        # The config the run was started with lives in the run directory once created;
        # before that, in a file beside it (this node's copy of the driver's config).
        self.config_file = self.run.parent / f".{self.run.name}.ray-config.toml"
        write_atomic(self.config_file, config_text.encode())
        self.command = [binary, "train", str(self.config_file), "--resume", "--roles", "learn,gate"]
        self.command += ["--set", f"run.dir={toml_string(str(self.run))}", "--set", f"run.device={toml_string(device)}"]
        for o in overrides:
            self.command += ["--set", o]
        self.process: subprocess.Popen | None = None
        self.exit_codes: list[int] = []
        self.stopping = False
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._supervise, daemon=True)
        self.thread.start()
        self.started.wait(30)

    def _supervise(self) -> None:
        """Runs the learner process, restarting it after a crash (it resumes); a clean
        exit (budget reached, or stopped) ends the role."""
        fast_failures = 0
        while not self.stopping:
            log = open(self.run.parent / f".{self.run.name}.ray-learner.out", "ab")
            began = time.monotonic()
            self.process = spawn(self.command, log)
            self.started.set()
            code = self.process.wait()
            log.close()
            self.exit_codes.append(code)
            if code == 0 or self.stopping:
                return
            fast_failures = fast_failures + 1 if time.monotonic() - began < 60 else 0
            if fast_failures >= 3:
                return
            time.sleep(2)

    # -- calls from the driver

    def pid(self) -> int:
        return os.getpid()

    def learner_pid(self) -> int | None:
        return self.process.pid if self.process else None

    def identity(self) -> dict:
        return {"node": ray.util.get_node_ip_address(), **binary_identity(self.binary)}

    def placement(self) -> dict:
        """Where this actor runs and which run it holds."""
        return {"node_id": ray.get_runtime_context().get_node_id(), "run_id": self.run_id}

    def running(self) -> bool:
        return self.thread.is_alive()

    def stop(self, timeout: float = 600) -> int | None:
        """Ctrl-C for the learner: it exports a candidate and gates what is pending."""
        self.stopping = True
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.thread.join(timeout=10)
        return self.process.returncode if self.process else None

    def status(self) -> dict:
        with self.lock:
            newest = max(
                (n for d in ("candidates", "accepted", "rejected") for n in [newest_checkpoint(self.run / d)] if n),
                default=None,
            )
            return {
                "best": newest_checkpoint(self.run / "accepted"),
                "newest": newest,
                "duplicates": self.duplicates,
                "received": len(self.received),
                "actors": {k: dict(v) for k, v in self.per_actor.items()},
                "running": self.thread.is_alive(),
                "exit_codes": list(self.exit_codes),
            }

    # -- calls from the self-play actors

    def _actor_entry(self, actor_id: int) -> dict:
        """What the status line shows of one actor (call with the lock held)."""
        return self.per_actor.setdefault(actor_id, {"chunks": 0, "network": None, "incarnations": 0, "times": []})

    def register(self, actor_id: int) -> int:
        """A fresh seed stream for an actor incarnation, counted across restarts and
        resumes (RUN/ray-streams)."""
        with self.lock:
            path = self.run / STREAMS_FILE
            stream = int(path.read_text()) if path.exists() else 1
            write_atomic(path, f"{stream + 1}\n".encode())
            entry = self._actor_entry(actor_id)
            entry["incarnations"] += 1
            entry["stream"] = stream
            return stream

    def config_toml(self) -> bytes | None:
        path = self.run / "config.toml"
        return path.read_bytes() if path.is_file() else None

    def best_name(self) -> str | None:
        return newest_checkpoint(self.run / "accepted")

    def best(self):
        """(name, [ref]) of the newest accepted network; the files are put into the
        object store once per network, so every node pulls them once."""
        name = newest_checkpoint(self.run / "accepted")
        if name is None:
            return None, []
        with self.lock:
            if self.network_cache is None or self.network_cache[0] != name:
                files = {f: (self.run / "accepted" / name / f).read_bytes() for f in NETWORK_FILES}
                self.network_cache = (name, [ray.put(files)])
            return self.network_cache

    def put_chunk(self, actor_id: int, name: str, data: bytes, network: str | None) -> bool:
        """Publishes a chunk into RUN/replay/ unless one of that name arrived before;
        returns whether it was new."""
        if not (name.startswith("selfplay-ray") and name.endswith(CHUNK_SUFFIX) and "/" not in name):
            raise ValueError(f"not a chunk name: {name!r}")
        with self.lock:
            entry = self._actor_entry(actor_id)
            entry["network"] = network
            if name in self.received:
                self.duplicates += 1
                return False
            if not (self.run / "replay" / name).exists():
                write_atomic(self.run / "replay" / name, data)
            else:
                # Published by an incarnation killed before its ledger line: a resend.
                self.duplicates += 1
            self.received.add(name)
            self.ledger.write(name + "\n")
            self.ledger.flush()
            os.fsync(self.ledger.fileno())
            entry["chunks"] += 1
            now = time.time()
            entry["times"] = [t for t in entry["times"] if now - t < 120] + [now]
            return True

    def heartbeat(self, actor_id: int, network: str | None, paused: bool, backlog: int, down: str | None = None) -> None:
        with self.lock:
            entry = self._actor_entry(actor_id)
            entry.update(network=network, paused=paused, backlog=backlog, down=down)


# -------------------------------------------------------------------- self-play


class RestartPolicy:
    """When to start a crashed child again: at once after its first crash, then after
    delays that double (2 s, 4 s, ... up to MAX_DELAY) while it keeps crashing within
    STABLE seconds of its start; a child that ran STABLE seconds starts the count
    afresh. It never gives up: a node that recovers (a full disk cleared, a driver
    reinstalled) goes back to work without anyone restarting the run."""

    FIRST_DELAY = 2.0
    MAX_DELAY = 300.0
    STABLE = 60.0

    def __init__(self) -> None:
        self.crashes = 0
        self.started_at: float | None = None

    def started(self, now: float) -> None:
        self.started_at = now

    def running(self, now: float) -> None:
        if self.started_at is None:
            self.started_at = now
        elif self.crashes and now - self.started_at >= self.STABLE:
            self.crashes = 0

    def crashed(self, now: float) -> float:
        """Counts a crash and returns the delay before the next start."""
        if self.started_at is not None and now - self.started_at >= self.STABLE:
            self.crashes = 0
        self.crashes += 1
        if self.crashes == 1:
            return 0.0
        return min(self.MAX_DELAY, self.FIRST_DELAY * 2 ** (self.crashes - 2))



class SelfplayActor:
    """Runs `shogi-zero selfplay --follow LOCAL` on a node-local directory and ships its
    chunks to the learner."""

    def __init__(
        self, actor_id: int, learner, binary: str, local_root: str, device: str, max_backlog: int,
        reference: dict | None = None,
    ):
        self.actor_id = actor_id
        self.learner = learner
        self.binary = binary
        self.device = device
        self.max_backlog = max_backlog
        # Everything _backpressure and status read is set before the first wait on the
        # learner: a slow learner must not make the constructor fail (and an actor whose
        # constructor fails is never restarted).
        self.process: subprocess.Popen | None = None
        self.paused = False
        self.uploaded = 0
        self.network: str | None = None
        self.down: str | None = None
        self.error: str | None = None
        self.stream: int | None = None
        self.stopping = threading.Event()
        self.done = threading.Event()
        if reference is not None:
            # `shogi-zero info` that fails (a loaded node can take minutes to start it) is
            # asked again; only a build that differs, or a binary that never runs, refuses
            # the node (by name: the driver reports the dead actor).
            for attempt in range(3):
                found = binary_identity(binary)
                if "error" not in found:
                    break
                time.sleep(5 * (attempt + 1))
            mismatch = identity_mismatch(found, reference)
            if mismatch:
                raise RuntimeError(f"node {node_address()} {mismatch}: install the same shogi-zero on every node")
        root = Path(local_root)
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        if root.stat().st_uid != os.getuid():
            raise RuntimeError(f"{root} belongs to another user: pass --local-root a directory of your own")
        self.local = root / f"actor-{actor_id:03d}"
        self.replay = self.local / "replay"
        self.accepted = self.local / "accepted"
        self.replay.mkdir(parents=True, exist_ok=True)
        self.accepted.mkdir(parents=True, exist_ok=True)
        for d in (self.local, self.replay, self.accepted):
            remove_temporaries(d)
        self.stream = self._get(learner.register.remote(actor_id), 600)
        config = None
        while config is None:  # the learner writes it when its run starts
            config = self._get(learner.config_toml.remote(), 600)
            if config is None:
                time.sleep(0.5)
        write_atomic(self.local / "config.toml", config)
        # Generation numbers (and so seeds) of this incarnation: stream << 32 onwards.
        write_atomic(self.local / "selfplay-generation", f"{self.stream << 32}\n".encode())
        self.network = self._refresh_network(wait=True)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _get(self, ref, timeout: float):
        """ray.get with a deadline that keeps watching the backlog while it waits: a
        stalled learner must not let self-play pile up chunks here."""
        deadline = time.monotonic() + timeout
        while not ray.wait([ref], timeout=0.5)[0]:
            self._backpressure()
            if time.monotonic() >= deadline:
                raise ray.exceptions.GetTimeoutError(f"no answer within {timeout} s")
        return ray.get(ref)

    def _refresh_network(self, wait: bool = False) -> str | None:
        """Publishes the learner's newest network here if it is newer; returns the
        newest network of this directory."""
        local = newest_checkpoint(self.accepted)
        while True:
            try:
                # Bounded waits: a stalled learner must not stall this loop (its
                # backpressure and heartbeats go on).
                name = self._get(self.learner.best_name.remote(), 10)
                if name is not None and name != local:
                    name, refs = self._get(self.learner.best.remote(), 10)
                    files = self._get(refs[0], 120) if name is not None and refs else None
                else:
                    files = None
            except ray.exceptions.RayError:  # GetTimeoutError too
                files = None  # the learner stalled or restarted (it owns the network object): retry later
            if files is not None:
                publish_network(self.accepted, name, files)
                write_atomic(self.local / "BEST", f"accepted/{name}\n".encode())
                # Self-play serves the newest (loaded into memory) at each generation; two are enough on disk.
                for old in sorted(n for n in os.listdir(self.accepted) if STEP_RE.match(n))[:-2]:
                    shutil.rmtree(self.accepted / old, ignore_errors=True)
                return name
            if local is not None or not wait:
                return local
            time.sleep(0.5)

    def _start_child(self) -> str | None:
        """Starts self-play; why it could not (the binary missing or not executable, say:
        retried like a crash), or None."""
        log = open(self.local / "selfplay.out", "ab")
        # Runs until stopped: the learner's budget ends the run, not the actor's.
        command = [self.binary, "selfplay", "--follow", str(self.local)]
        command += ["--set", "run.minutes=525600", "--set", "run.max_steps=0"]
        command += ["--set", f"run.device={toml_string(self.device)}"]
        try:
            self.process = spawn(command, log)
        except OSError as e:
            self.process = None
            log.write(f"shogi-zero-ray: cannot start {self.binary}: {e}\n".encode())
            return f"self-play cannot start: {e}"
        finally:
            log.close()
        self.paused = False
        return None

    def _upload_all(self) -> None:
        for path in finished_chunks(self.replay):
            data = path.read_bytes()
            sent = self.learner.put_chunk.remote(self.actor_id, upload_name(self.actor_id, path.name), data, self.network)
            # One chunk in flight; while it waits (a slow or stalled learner), the backlog
            # on this disk is still watched.
            while not ray.wait([sent], timeout=0.5)[0]:
                self._backpressure()
            ray.get(sent)
            path.unlink()  # only once the learner has it: a kill in between re-sends it
            self.uploaded += 1

    def _backpressure(self) -> int:
        """Pauses self-play while more than max_backlog chunks wait here, resumes it at
        half that; returns the backlog."""
        backlog = len(finished_chunks(self.replay))
        if self.process is None or self.process.poll() is not None:
            return backlog
        if backlog > self.max_backlog and not self.paused:
            self.process.send_signal(signal.SIGSTOP)
            self.paused = True
        elif backlog <= self.max_backlog // 2 and self.paused:
            self.process.send_signal(signal.SIGCONT)
            self.paused = False
        return backlog

    def _run(self) -> None:
        try:
            why_not = self._start_child()
            last_check = 0.0
            restarts = RestartPolicy()
            restart_at: float | None = None
            while not self.stopping.is_set():
                self._upload_all()
                backlog = self._backpressure()
                if restart_at is None and (self.process is None or self.process.poll() is not None):
                    # It crashed, or could not start: start it again (its generation
                    # counter continues), after a delay that grows while it keeps failing;
                    # the status line shows it.
                    delay = restarts.crashed(time.monotonic())
                    restart_at = time.monotonic() + delay
                    what = why_not or f"self-play exited {self.process.returncode}"
                    self.down = (
                        f"{what} ({restarts.crashes} in a row), "
                        f"restart in {delay:.0f} s; see {self.local / 'selfplay.out'}"
                    )
                if restart_at is not None and time.monotonic() >= restart_at:
                    restart_at = None
                    why_not = self._start_child()
                    if why_not is None:
                        restarts.started(time.monotonic())
                        self.down = None
                elif restart_at is None:
                    restarts.running(time.monotonic())
                if time.monotonic() - last_check > 2:
                    self.network = self._refresh_network() or self.network
                    self.learner.heartbeat.remote(self.actor_id, self.network, self.paused, backlog, self.down)
                    last_check = time.monotonic()
                self.stopping.wait(0.5)
            if self.process is not None and self.process.poll() is None:
                if self.paused:
                    self.process.send_signal(signal.SIGCONT)
                self.process.send_signal(signal.SIGINT)  # flush finished games
                try:
                    self.process.wait(600)
                except subprocess.TimeoutExpired:
                    self.process.kill()
            self._upload_all()
        except Exception as e:  # reported to the driver by status()
            self.error = f"{type(e).__name__}: {e}"
            try:
                self.learner.heartbeat.remote(self.actor_id, self.network, self.paused, 0, f"failed: {self.error}")
            except Exception:
                pass
            raise
        finally:
            self.done.set()

    def pid(self) -> int:
        return os.getpid()

    def child_pid(self) -> int | None:
        return self.process.pid if self.process else None

    def local_dir(self) -> str:
        return str(self.local)

    def status(self) -> dict:
        return {
            "stream": self.stream,
            "network": self.network,
            "uploaded": self.uploaded,
            "paused": self.paused,
            "down": self.down,
            "error": self.error,
            "node": ray.util.get_node_ip_address(),
        }

    def stop(self, timeout: float = 900) -> dict:
        self.stopping.set()
        self.done.wait(timeout)
        return self.status()


# ------------------------------------------------------------------------ driver


# How long the driver waits for an actor to stop (a self-play actor flushes and uploads,
# the learner exports and gates what is pending) before it names it and goes on.
STOP_TIMEOUT = 1200.0


def default_local_root(run_dir: str) -> str:
    """The self-play actors' directory on each node: this user's own (not a predictable
    shared path another user could prepare), one per run (two runs never share actor
    directories)."""
    import hashlib

    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"shogi-zero-ray-{os.getuid()}"
    key = hashlib.sha256(run_dir.encode()).hexdigest()[:12]
    return str(base / f"{Path(run_dir).name}-{key}")


def learner_name(run_dir: str) -> str:
    return f"learner:{run_dir}"


def selfplay_name(run_dir: str, actor_id: int) -> str:
    return f"selfplay:{run_dir}:{actor_id}"


def check_nodes(binary: str, reference: dict, checked: set[str] | None = None, timeout: float = 60) -> list[str]:
    """Every live node not in `checked` runs the learner's build (version, formats and
    binary hash of `shogi-zero info`); returns a line naming each node that does not,
    and adds every node it looked at to `checked`. Called before any actor starts and
    again for nodes that join later. A node that leaves (or does not answer within
    `timeout` s) before it is checked is skipped, not checked: it is looked at again next
    time if it is still there, and the launcher, which owns every actor, goes on."""

    @ray.remote(num_cpus=0)
    def identity_here(binary: str) -> dict:
        return {"node": ray.util.get_node_ip_address(), **binary_identity(binary)}

    checked = set() if checked is None else checked
    nodes = [n for n in ray.nodes() if n.get("Alive") and n["NodeID"] not in checked]
    refs = [
        identity_here.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(binary)
        for n in nodes
    ]
    refused = []
    for node, ref in zip(nodes, refs):
        try:
            found = ray.get(ref, timeout=timeout)
        except ray.exceptions.RayError:  # the node died or left (NodeDiedError, ...), or GetTimeoutError
            continue
        checked.add(node["NodeID"])
        mismatch = identity_mismatch(found, reference)
        if mismatch:
            where = f"node {found.get('node', node.get('NodeManagerAddress'))} ({node['NodeID'][:12]})"
            refused.append(f"{where} {mismatch}: install the same shogi-zero on every node")
    return refused


def status_line(began: float, s: dict, dead: dict[int, str] | None = None) -> str:
    newest = step_of(s["best"])
    parts = [f"[{time.monotonic() - began:>5.0f}s] best {s['best']} newest {s['newest']} chunks {s['received']}"]
    if s["duplicates"]:
        parts[0] += f" ({s['duplicates']} resent, dropped)"
    dead = dead or {}
    for actor_id in sorted(set(s["actors"]) | set(dead)):
        if actor_id in dead:
            parts.append(f"a{actor_id}: DEAD ({dead[actor_id]})")
            continue
        a = s["actors"][actor_id]
        times = a.get("times", [])
        rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) >= 2 and times[-1] > times[0] else 0.0
        lag = newest - step_of(a["network"]) if newest is not None and step_of(a.get("network")) is not None else "?"
        flag = " paused" if a.get("paused") else ""
        if a.get("down"):
            flag += f" DOWN: {a['down']}"
        parts.append(f"a{actor_id}: {a['chunks']} chunks {rate * 60:.1f}/min lag {lag}{flag}")
    return " | ".join(parts)


# ----------------------------------------------------------------------- security


def token_source() -> str | None:
    """Where Ray would read this machine's cluster token from, or None (Ray reads
    RAY_AUTH_TOKEN, then the file RAY_AUTH_TOKEN_PATH names, then ~/.ray/auth_token)."""
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return "RAY_AUTH_TOKEN"
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    for path in [Path(named)] if named else [Path.home() / ".ray" / "auth_token"]:
        try:
            if path.read_text().strip():
                return str(path)
        except OSError:
            pass
    return None


# A Ray client with no token asks the cluster's GCS one question.
_PROBE = """
import sys
from ray._raylet import GcsClient
GcsClient(address=sys.argv[1]).internal_kv_get(b"shogi-zero-probe", None, timeout=10)
"""


def answers_without_token(address: str, timeout: float = 60) -> tuple[bool | None, str]:
    """Whether the cluster at ADDRESS answers a client that holds no token: True (it
    does: anyone who reaches the port runs code on every node), False (refused for want
    of a token), None (unreachable or another error), with the probe's last words."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="shogi-zero-probe-") as home:
        env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
        env.update(RAY_AUTH_MODE="disabled", HOME=home)
        try:
            probe = subprocess.run(
                [sys.executable, "-c", _PROBE, address], capture_output=True, text=True, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return None, f"no answer within {timeout:.0f} s"
    if probe.returncode == 0:
        return True, "answered"
    lines = [l for l in probe.stderr.splitlines() if l.strip()]
    said = lines[-1] if lines else f"exit {probe.returncode}"
    if "UNAUTHENTICATED" in probe.stderr or "uthenticat" in probe.stderr:
        return False, said
    return None, said


def use_token_auth() -> None:
    """Token authentication for this process and the Ray processes it starts. Ray reads
    the mode once, at import: this re-reads it, as Ray's own token setup does."""
    os.environ["RAY_AUTH_MODE"] = "token"
    from ray._raylet import Config

    Config.initialize("")


def keep_token_private() -> None:
    """Ray writes the token of a cluster it starts readable by everyone (mode 644): only
    its owner may read it."""
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    path = Path(named) if named else Path.home() / ".ray" / "auth_token"
    if path.is_file() and path.stat().st_mode & 0o077:
        path.chmod(0o600)


def connect(address: str | None, trusted_network: bool) -> None:
    """ray.init for the launcher. A local cluster (no address) is started with token
    authentication on (Ray 2.60's default for one that ray.init starts). A remote one is
    joined with this machine's token, and only if it refuses clients without a token,
    unless --trusted-network says the network is the user's alone."""
    common = dict(namespace=NAMESPACE, include_dashboard=False, log_to_driver=False)
    if address is None:
        # "local" starts a cluster of this process's own: never one that RAY_ADDRESS or
        # /tmp/ray/ray_current_cluster names (another user's, say), which would be sent
        # this machine's token.
        ray.init(address="local", **common)
        keep_token_private()
        return
    have_token = token_source()
    if have_token:
        use_token_auth()
    if not trusted_network:
        if not have_token:
            raise SystemExit(
                "shogi-zero-ray: no Ray token on this machine (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or "
                "~/.ray/auth_token): copy the head's token here (python scripts/ray/cluster.py token says how), "
                "or pass --trusted-network if no one else can reach the cluster's network"
            )
        answered, said = answers_without_token(address)
        if answered:
            raise SystemExit(
                f"shogi-zero-ray: the Ray cluster at {address} answers clients without a token: anyone who "
                "reaches its port can run code on every node. Start it with token authentication "
                "(python scripts/ray/cluster.py head ...), or pass --trusted-network if no one else can reach "
                "the cluster's network"
            )
    ray.init(address=address, **common)


# ------------------------------------------------------------- the driver's record


def runs_file() -> Path:
    """The driver's record of the runs it started (run directory -> run id)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "shogi-zero-ray" / "runs.json"


def known_run(run_dir: str) -> str | None:
    import json

    try:
        return json.loads(runs_file().read_text()).get(run_dir)
    except (OSError, ValueError):
        return None


def remember_run(run_dir: str, run_id: str | None) -> None:
    import json

    path = runs_file()
    try:
        runs = json.loads(path.read_text())
    except (OSError, ValueError):
        runs = {}
    if run_id is None:
        runs.pop(run_dir, None)
    else:
        runs[run_dir] = run_id
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(runs, indent=1, sort_keys=True) + "\n").encode())


def learner_node(choice: str | None) -> dict:
    """The node that holds the run directory: --learner-node (an IP address or a node
    id, or a unique prefix of one), else the driver's own node."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if choice is None:
        here = ray.get_runtime_context().get_node_id()
        matches = [n for n in nodes if n["NodeID"] == here]
    else:
        matches = [n for n in nodes if n["NodeID"].startswith(choice) or n.get("NodeManagerAddress") == choice]
    if len(matches) != 1:
        listing = ", ".join(f"{n.get('NodeManagerAddress')} ({n['NodeID'][:12]})" for n in nodes)
        what = f"--learner-node {choice!r}" if choice else "the driver's node"
        raise SystemExit(
            f"shogi-zero-ray: {what} matches {len(matches)} of the cluster's live nodes ({listing}): "
            "name one by its address or node id"
        )
    return matches[0]


def dead_actors(actors: list) -> dict[int, str]:
    """Self-play actors Ray reports dead (a constructor that failed: another build on
    its node, say), with the reason."""
    dead = {}
    refs = [a.status.remote() for a in actors]
    for i, ref in enumerate(refs):
        try:
            ray.get(ref, timeout=10)
        except ray.exceptions.GetTimeoutError:
            pass  # busy, not dead
        except ray.exceptions.RayActorError as e:
            lines = [l.strip() for l in str(e).splitlines() if "Error" in l or "node " in l]
            dead[i] = lines[-1][:300] if lines else type(e).__name__
    return dead


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parents[2]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="a run config (configs/*.toml); rerunning resumes the run")
    p.add_argument("--selfplay-actors", type=int, default=2, help="self-play actors (processes), default 2")
    p.add_argument("--address", help="an existing Ray cluster (host:port); without it a local one on this machine")
    p.add_argument("--trusted-network", action="store_true",
                   help="join a cluster that answers clients without a token (only on a network no one else reaches)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    p.add_argument("--binary", default=str(here / "target/release/shogi-zero"), help="shogi-zero on every node (same path)")
    p.add_argument("--run-dir", help="the run directory on the learner's node (default: run.dir, made absolute here)")
    p.add_argument("--learner-node", help="the node that holds the run directory (address or node id; default: this one)")
    p.add_argument("--new-run", action="store_true",
                   help="start a new run where this launcher once started one that is gone (default: refuse)")
    p.add_argument("--local-root",
                   help="node-local directory of the self-play actors (default: one of this user's own "
                        "per run, $TMPDIR/shogi-zero-ray-UID/RUN-HASH, mode 700)")
    p.add_argument("--selfplay-cpus", type=float, default=2, help="CPUs Ray reserves per self-play actor")
    p.add_argument("--selfplay-gpus", type=float, default=0, help="GPUs per self-play actor (> 0: it plays on cuda)")
    p.add_argument("--max-backlog", type=int, default=16, help="chunks waiting in an actor's directory before its self-play pauses")
    p.add_argument("--status-every", type=float, default=60, help="seconds between status lines")
    args = p.parse_args(argv)
    if ray is None:
        print(f"shogi-zero-ray: Ray is not installed: pip install '{RAY_PIN}' (bash scripts/bootstrap.sh puts it in .venv)", file=sys.stderr)
        return 2
    try:
        config_text = Path(args.config).read_text()
    except OSError as e:
        raise SystemExit(f"shogi-zero-ray: cannot read the config {args.config}: {e}")
    config = read_config(config_text, args.overrides)
    run_dir = os.path.abspath(args.run_dir or config["run"]["dir"])
    if args.local_root is None:
        args.local_root = default_local_root(run_dir)
    connect(args.address, args.trusted_network)
    device = config["run"]["device"]
    gpus = ray.cluster_resources().get("GPU", 0)
    learner_gpus = 1 if device.startswith("cuda") or (device == "auto" and gpus >= 1) else 0
    # run.dir and run.device are the launcher's to set (absolute here, and the device
    # Ray gave the learner); every other override goes to the learner as given.
    learner_overrides = [o for o in args.overrides if o.split("=", 1)[0].strip() not in ("run.dir", "run.device")]
    # The learner lives where the run directory is, and only there: a learner Ray
    # restarted elsewhere would find an empty directory.
    home = learner_node(args.learner_node)
    expected = None if args.new_run else known_run(run_dir)
    import uuid

    learner = (
        ray.remote(LearnerActor)
        .options(
            name=learner_name(run_dir), get_if_exists=True, max_restarts=-1, max_task_retries=-1,
            max_concurrency=16, num_cpus=1, num_gpus=learner_gpus,
            scheduling_strategy=NodeAffinitySchedulingStrategy(home["NodeID"], soft=False),
        )
        .remote(args.binary, run_dir, config_text, learner_overrides, "cuda" if learner_gpus else device,
                expected, uuid.uuid4().hex)
    )
    try:
        placement = ray.get(learner.placement.remote())
    except ray.exceptions.RayActorError as e:
        missing = [l for l in str(e).splitlines() if "RunMissing" in l or "no run at" in l]
        raise SystemExit(f"shogi-zero-ray: the learner did not start: {missing[-1].strip() if missing else e}")
    remember_run(run_dir, placement["run_id"])
    reference = ray.get(learner.identity.remote())
    checked: set[str] = set()
    refused = check_nodes(args.binary, reference, checked)
    if refused:
        raise SystemExit("shogi-zero-ray: " + "; ".join(refused))
    print(f"shogi-zero-ray: learner on {reference['node']} ({'GPU' if learner_gpus else 'CPU'}), run {run_dir} "
          f"(id {placement['run_id'][:12]}); {args.selfplay_actors} self-play actors; {reference['version']}, "
          f"{reference['build']}", flush=True)
    selfplay_device = "cuda" if args.selfplay_gpus > 0 else "cpu"
    actor_class = ray.remote(SelfplayActor)
    actors = [
        actor_class.options(
            name=selfplay_name(run_dir, i), get_if_exists=True, max_restarts=-1, max_task_retries=-1,
            max_concurrency=4, num_cpus=args.selfplay_cpus, num_gpus=args.selfplay_gpus,
        ).remote(i, learner, args.binary, args.local_root, selfplay_device, args.max_backlog, reference)
        for i in range(args.selfplay_actors)
    ]
    began = time.monotonic()
    interrupted = False
    dead: dict[int, str] = {}
    try:
        next_status = began + args.status_every
        while ray.get(learner.running.remote()):
            time.sleep(1)
            if time.monotonic() >= next_status:
                # Nodes that joined since the last look run the same build, or are named.
                for line in check_nodes(args.binary, reference, checked):
                    print(f"shogi-zero-ray: refused: {line}", file=sys.stderr, flush=True)
                dead = dead_actors(actors)
                print(status_line(began, ray.get(learner.status.remote()), dead), flush=True)
                next_status += args.status_every
    except KeyboardInterrupt:
        interrupted = True
        signal.signal(signal.SIGINT, lambda *_: os._exit(130))
        print("shogi-zero-ray: stopping: self-play flushes and uploads, the learner exports (Ctrl-C again to quit at once)", flush=True)
    dead = dead_actors(actors)
    # Every wait has an end: an actor that never answers (its constructor hangs, its
    # node is gone) is named and left behind rather than hang the driver.
    finals = []
    for i, a in enumerate(actors):
        if i in dead:
            continue
        try:
            finals.append(ray.get(a.stop.remote(), timeout=STOP_TIMEOUT))
        except ray.exceptions.RayError as e:
            finals.append({"error": f"actor {i} did not stop within {STOP_TIMEOUT:.0f} s: {type(e).__name__}"})
    try:
        code = ray.get(learner.stop.remote(), timeout=STOP_TIMEOUT)
        s = ray.get(learner.status.remote(), timeout=60)
    except ray.exceptions.RayError as e:
        print(f"shogi-zero-ray: the learner did not stop within {STOP_TIMEOUT:.0f} s ({type(e).__name__}); "
              f"its run directory {run_dir} resumes with the same command", file=sys.stderr, flush=True)
        return 1
    print(status_line(began, s, dead), flush=True)
    for f in finals:
        if f.get("error"):
            print(f"shogi-zero-ray: a self-play actor failed: {f['error']}", file=sys.stderr)
    print(f"shogi-zero-ray: {'interrupted' if interrupted else 'finished'}; learner exit {s['exit_codes']}; "
          f"rerun the same command to resume", flush=True)
    return 0 if not interrupted and (code in (0, None)) else (130 if interrupted else 1)


if __name__ == "__main__":
    sys.exit(main())
