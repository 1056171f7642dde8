#!/usr/bin/env python3
"""The launcher's parts that need no cluster (tests/cli_ray.rs runs this file):

- a self-play actor whose learner answers slowly is still constructed (its constructor
  once read attributes it set later, and an actor whose constructor fails is never
  restarted);
- a crashing self-play process is restarted with a growing delay, never abandoned, and
  reported DOWN, and so is one whose binary cannot start; an actor on a node with
  another build refuses to start, by name; the actors' default directory is the user's
  own, one per run;
- a learner finds the run it expects or stops: never a new run where one existed;
- a terminal's Ctrl-C (SIGINT to the driver's whole process group) does not reach the
  actors' children, which die with their actor all the same;
- a token-less probe of an address where nothing listens says "could not tell";
- a node that leaves the cluster before its build is checked is skipped, not fatal (the
  launcher owns every actor: an exception there ends the whole run).

Run: python scripts/ray/launcher_test.py (unittest; exits non-zero on a failure).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import unittest
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import shogi_zero_ray as launcher  # noqa: E402


class SlowRef:
    """An object ref that is ready after `polls` calls of wait()."""

    def __init__(self, value, polls: int):
        self.value, self.polls = value, polls


class SlowRay:
    """The few calls of Ray the self-play actor's constructor makes, answering late."""

    class exceptions:  # noqa: N801 (mirrors ray.exceptions)
        class RayError(Exception):
            pass

        class GetTimeoutError(RayError):
            pass

    def wait(self, refs, timeout=None):
        ref = refs[0]
        if ref.polls > 0:
            ref.polls -= 1
            return [], refs
        return refs, []

    def get(self, ref, timeout=None):
        return ref.value


class SlowLearner:
    """A learner actor handle whose every answer takes three polls (1.5 s in Ray)."""

    def __init__(self, network: dict[str, bytes]):
        self.network = network

    def _method(value):
        class Method:
            def __init__(self, owner):
                self.owner = owner

            def remote(self, *args):
                return SlowRef(value(self.owner) if callable(value) else value, 3)

        return property(lambda self: Method(self))

    register = _method(7)
    config_toml = _method(b"[run]\n")
    best_name = _method("step-00000000")
    best = _method(lambda self: ("step-00000000", [SlowRef(self.network, 3)]))


class ConstructorTest(unittest.TestCase):
    def test_a_slow_learner_does_not_break_the_constructor(self):
        network = {name: b"x" for name in launcher.NETWORK_FILES}
        with tempfile.TemporaryDirectory() as root, mock.patch.object(launcher, "ray", SlowRay()), \
                mock.patch.object(launcher.threading, "Thread") as thread:
            actor = launcher.SelfplayActor(0, SlowLearner(network), "/bin/false", root, "cpu", 4)
            self.assertEqual(actor.stream, 7)
            self.assertEqual(actor.network, "step-00000000")
            self.assertTrue((Path(root) / "actor-000/accepted/step-00000000/manifest.json").is_file())
            thread.return_value.start.assert_called_once()


class OtherBuildTest(unittest.TestCase):
    def test_an_actor_on_a_node_with_another_build_refuses_by_name(self):
        reference = {"version": "shogi-zero 0.1.0", "formats": "formats: x", "build": "build: sha256 " + "0" * 64}
        with tempfile.TemporaryDirectory() as root, mock.patch.object(launcher, "ray", SlowRay()):
            fake = Path(root) / "shogi-zero"
            fake.write_text("#!/bin/sh\necho shogi-zero 0.1.0\necho formats: x\necho build: sha256 " + "1" * 64 + "\n")
            fake.chmod(0o755)
            with self.assertRaisesRegex(RuntimeError, r"node .* runs 'build: sha256 1+' where .*install the same"):
                launcher.SelfplayActor(0, SlowLearner({}), str(fake), root, "cpu", 4, reference)
            self.assertFalse((Path(root) / "actor-000").exists(), "it touched nothing")


class CrashLoopTest(unittest.TestCase):
    def test_a_crashing_selfplay_process_is_restarted_later_and_reported_down(self):
        network = {name: b"x" for name in launcher.NETWORK_FILES}
        learner = SlowLearner(network)
        beats = []
        learner.heartbeat = type("Beat", (), {"remote": staticmethod(lambda *a: beats.append(a))})()
        with tempfile.TemporaryDirectory() as root, mock.patch.object(launcher, "ray", SlowRay()):
            crasher = Path(root) / "shogi-zero"
            starts = Path(root) / "starts"
            crasher.write_text(f"#!/bin/sh\necho started >> {starts}\nexit 3\n")
            crasher.chmod(0o755)
            actor = launcher.SelfplayActor(0, learner, str(crasher), root, "cpu", 4)
            try:
                # Starts at 0 s, again at once, then after 2 s, then 4 s later.
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not (starts.is_file() and len(starts.read_text().split()) >= 3):
                    time.sleep(0.1)
                started = len(starts.read_text().split())
                self.assertEqual(started, 3, "three starts within the first seconds")
                time.sleep(1.0)
                self.assertEqual(len(starts.read_text().split()), 3, "the fourth waits 4 s")
                self.assertRegex(actor.down or "", r"self-play exited 3 \(3 in a row\), restart in 4 s")
                time.sleep(2.5)  # a heartbeat every 2 s carries it to the status line
                self.assertTrue(any(b[-1] and "exited 3" in b[-1] for b in beats), beats[-3:])
                self.assertTrue(actor.thread.is_alive(), "the actor gave up")
                self.assertIsNone(actor.error)
            finally:
                actor.stopping.set()
                actor.done.wait(10)


class CannotStartTest(unittest.TestCase):
    def test_a_selfplay_binary_that_cannot_start_is_tried_again_and_reported_down(self):
        network = {name: b"x" for name in launcher.NETWORK_FILES}
        learner = SlowLearner(network)
        learner.heartbeat = type("Beat", (), {"remote": staticmethod(lambda *a: None)})()
        with tempfile.TemporaryDirectory() as root, mock.patch.object(launcher, "ray", SlowRay()):
            missing = Path(root) / "not-installed" / "shogi-zero"
            actor = launcher.SelfplayActor(0, learner, str(missing), root, "cpu", 4)
            try:
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and "2 in a row" not in (actor.down or ""):
                    time.sleep(0.1)
                self.assertRegex(actor.down or "", r"self-play cannot start: .*\(2 in a row\), restart in 2 s")
                # Installed meanwhile: the next try starts it.
                missing.parent.mkdir()
                missing.write_text("#!/bin/sh\nsleep 30\n")
                missing.chmod(0o755)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and actor.down is not None:
                    time.sleep(0.1)
                self.assertIsNone(actor.down)
                self.assertIsNone(actor.error)
                self.assertTrue(actor.thread.is_alive())
            finally:
                actor.stopping.set()
                actor.done.wait(20)


class LocalRootTest(unittest.TestCase):
    def test_the_default_local_root_is_the_users_own_and_one_per_run(self):
        a = launcher.default_local_root("/data/runs/shogi")
        b = launcher.default_local_root("/data/other/shogi")
        self.assertNotEqual(a, b)
        self.assertIn(f"shogi-zero-ray-{os.getuid()}", a)
        self.assertTrue(Path(a).name.startswith("shogi-"))


class RestartPolicyTest(unittest.TestCase):
    def test_delays_grow_while_it_keeps_crashing_and_reset_after_a_stable_run(self):
        policy = launcher.RestartPolicy()
        now = 0.0
        policy.running(now)
        delays = []
        for _ in range(12):
            now += 1.0
            delays.append(policy.crashed(now))
            now += delays[-1]
            policy.started(now)
        self.assertEqual(delays[:6], [0.0, 2.0, 4.0, 8.0, 16.0, 32.0])
        self.assertEqual(max(delays), launcher.RestartPolicy.MAX_DELAY)
        self.assertEqual(policy.crashes, 12, "it never gives up")
        # A run of STABLE seconds starts the count afresh.
        now += launcher.RestartPolicy.STABLE
        policy.running(now)
        self.assertEqual(policy.crashed(now + 1), 0.0)


class StatusLineTest(unittest.TestCase):
    def test_a_crashing_actor_shows_down_and_a_dead_one_dead(self):
        status = {
            "best": "step-00000200", "newest": "step-00000300", "received": 9, "duplicates": 0,
            "actors": {
                0: {"chunks": 5, "network": "step-00000200", "times": [], "down": None},
                1: {"chunks": 4, "network": "step-00000100", "times": [], "paused": True,
                    "down": "self-play exited 101 (3 in a row), restart in 4 s"},
            },
        }
        line = launcher.status_line(time.monotonic(), status, {2: "node 10.0.0.7 runs another build"})
        parts = line.split(" | ")
        self.assertEqual(len(parts), 4, line)
        self.assertIn("a0: 5 chunks 0.0/min lag 0", parts[1])
        self.assertIn("lag 100 paused DOWN: self-play exited 101 (3 in a row), restart in 4 s", parts[2])
        self.assertEqual(parts[3], "a2: DEAD (node 10.0.0.7 runs another build)")


class ClaimRunTest(unittest.TestCase):
    def test_a_new_run_is_marked_and_found_again(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            self.assertEqual(launcher.claim_run(run, None, "abc", reconstructed=False), "abc")
            self.assertEqual((run / launcher.RUN_ID_FILE).read_text().strip(), "abc")
            self.assertEqual(launcher.claim_run(run, "abc", "def", reconstructed=True), "abc")
            self.assertEqual(launcher.claim_run(run, None, "def", reconstructed=False), "abc")

    def test_no_new_run_where_one_is_expected(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            with self.assertRaisesRegex(launcher.RunMissing, "restarted"):
                launcher.claim_run(run, None, "abc", reconstructed=True)
            with self.assertRaisesRegex(launcher.RunMissing, "started run abc"):
                launcher.claim_run(run, "abc", "def", reconstructed=False)
            self.assertFalse(run.exists(), "nothing was created")
            launcher.claim_run(run, None, "xyz", reconstructed=False)
            with self.assertRaisesRegex(launcher.RunMissing, "holds run xyz"):
                launcher.claim_run(run, "abc", "def", reconstructed=False)


class NodeCheckRay:
    """Ray as check_nodes sees it: two live nodes, of which `gone` leaves before its
    identity task runs (its ref raises, as Ray's NodeDiedError does)."""

    class exceptions(SlowRay.exceptions):  # noqa: N801
        class NodeDiedError(SlowRay.exceptions.RayError):
            pass

    def __init__(self, identities: dict[str, dict], gone: str):
        self.identities, self.gone = identities, gone

    def nodes(self):
        return [{"NodeID": node, "Alive": True, "NodeManagerAddress": node} for node in self.identities]

    def remote(self, **_options):
        fake = self

        def decorate(_fn):
            class Task:
                def options(self, scheduling_strategy):
                    return types.SimpleNamespace(remote=lambda _binary: scheduling_strategy)

            return Task()

        return decorate

    def get(self, node, timeout=None):
        if node == self.gone:
            raise self.exceptions.NodeDiedError(f"node {node} died")
        return {"node": node, **self.identities[node]}


class NodeCheckTest(unittest.TestCase):
    def test_a_node_that_leaves_before_its_check_is_skipped_and_the_rest_checked(self):
        build = {"version": "shogi-zero 0.1.0", "formats": "formats: x", "build": "build: sha256 " + "0" * 64}
        other = {**build, "build": "build: sha256 " + "1" * 64}
        fake = NodeCheckRay({"stays": other, "leaves": other}, gone="leaves")
        with mock.patch.object(launcher, "ray", fake), \
                mock.patch.object(launcher, "NodeAffinitySchedulingStrategy", lambda node, soft: node, create=True):
            checked: set[str] = set()
            refused = launcher.check_nodes("shogi-zero", build, checked)
            self.assertEqual(len(refused), 1, refused)
            self.assertIn("node stays", refused[0])
            self.assertEqual(checked, {"stays"}, "the node that left is looked at again next time")
            fake.gone = None
            refused = launcher.check_nodes("shogi-zero", build, checked)
            self.assertEqual(checked, {"stays", "leaves"})
            self.assertEqual([r.split(" (")[0] for r in refused], ["node leaves"])


class ProcessGroupTest(unittest.TestCase):
    def test_a_terminals_ctrl_c_reaches_the_driver_not_the_children(self):
        # The "driver": ignores SIGINT as the launcher's handler would, starts a child
        # the way the actors do, and reports its pid.
        driver_code = textwrap.dedent(f"""
            import signal, sys, time
            sys.path.insert(0, {str(HERE)!r})
            import shogi_zero_ray as launcher
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            child = launcher.spawn(["sleep", "60"], subprocess_log())
            print(child.pid, flush=True)
            time.sleep(60)
        """).replace("subprocess_log()", "open('/dev/null', 'wb')")
        driver = subprocess.Popen(
            [sys.executable, "-c", driver_code], stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            child = int(driver.stdout.readline())
            os.killpg(driver.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
            time.sleep(1.0)
            self.assertTrue(alive(child), "the child got the terminal's SIGINT")
            self.assertNotEqual(os.getpgid(child), os.getpgid(driver.pid))
            driver.kill()
            driver.wait()
            deadline = time.monotonic() + 10
            while alive(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertFalse(alive(child), "the child outlived its parent")
        finally:
            if driver.poll() is None:
                driver.kill()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class ProbeTest(unittest.TestCase):
    # Ray is installed by scripts/bootstrap.sh: without it this test fails, not skips.
    def test_an_address_where_nothing_listens_is_not_called_secure(self):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        answered, said = launcher.answers_without_token(f"127.0.0.1:{port}", timeout=15)
        self.assertIsNot(answered, False, f"an address with no cluster was called secure: {said}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
