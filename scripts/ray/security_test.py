#!/usr/bin/env python3
"""The multi-machine recipe's security, on this machine (tests/cli_ray.rs):

- `cluster.py head` creates the token (mode 600) and starts a head that refuses a
  client without it (its GCS port answers with an authentication error), and a client
  with it connects and runs a task; what listens where is read from `ss -ltn`;
- `cluster.py check` says so, and says INSECURE of a head started as the README once
  said (`ray start --head`, no token);
- the launcher joins the first and refuses the second by name, unless
  --trusted-network;
- `cluster.py worker` refuses to start without the token, and `cluster.py head` a
  public address.

Prints one line per check and exits 1 on the first failure.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import shogi_zero_ray as launcher  # noqa: E402

PYTHON = sys.executable
RAY = str(Path(PYTHON).with_name("ray"))


def fail(message: str) -> None:
    print(f"FAIL: {message}", flush=True)
    raise SystemExit(1)


def ok(message: str) -> None:
    print(f"ok: {message}", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def private_address() -> str:
    """This machine's address on its network (a head must be on the address its clients
    see themselves at: Ray pairs a driver with the node of its own address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.255.255.255", 1))  # no packet is sent
        return s.getsockname()[0]


def environment(home: Path, **extra: str) -> dict:
    """A machine of its own: HOME (so ~/.ray/auth_token) and no token in the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(home), **extra)
    return env


def start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    # Its own session, so that stopping it stops every Ray process it started.
    return subprocess.Popen(command, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)


def wait_up(address: str, head: subprocess.Popen, log: Path) -> tuple[bool, str]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if head.poll() is not None:
            fail(f"the head at {address} exited {head.returncode}:\n{log.read_text()[-2000:]}")
        answered, said = launcher.answers_without_token(address, timeout=30)
        if answered is not None:
            return answered, said
        time.sleep(1)
    fail(f"the head at {address} did not come up within 180 s:\n{log.read_text()[-2000:]}")


def stop(head: subprocess.Popen) -> None:
    if head.poll() is None:
        try:
            os.killpg(head.pid, signal.SIGTERM)
            head.wait(60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    try:
        os.killpg(head.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def listening() -> set[str]:
    """The local addresses TCP sockets listen on (`ss -ltn`)."""
    out = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
    return {line.split()[3] for line in out.splitlines() if len(line.split()) > 3}


def run(command: list[str], env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)


CONNECT = """
import sys
sys.path.insert(0, {here!r})
import shogi_zero_ray as launcher
launcher.connect(sys.argv[1], trusted_network=len(sys.argv) > 2)
@launcher.ray.remote(num_cpus=0)
def answer():
    return 42
print("connected, task answered", launcher.ray.get(answer.remote()), flush=True)
"""


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="shogi-zero-ray-security-"))
    head_home, launcher_home, stranger_home, open_home = (tmp / n for n in ("head", "launcher", "stranger", "open"))
    for home in (head_home, launcher_home, stranger_home, open_home):
        home.mkdir()
    cluster = [PYTHON, str(HERE / "cluster.py")]
    heads = []
    began = time.monotonic()
    try:
        # --- refusals before anything starts
        public = run(cluster + ["head", "--ip", "8.8.8.8"], environment(stranger_home))
        if public.returncode == 0 or "public address" not in public.stderr:
            fail(f"a public --ip was accepted: {public.stdout}{public.stderr}")
        ok("cluster.py head refuses a public address")
        no_token = run(cluster + ["worker", "--ip", "127.0.0.1", "--address", "127.0.0.1:1"], environment(stranger_home))
        if no_token.returncode == 0 or "no token" not in no_token.stderr:
            fail(f"a worker without the token was started: {no_token.stdout}{no_token.stderr}")
        ok("cluster.py worker refuses to start without the head's token")

        # --- the secure head
        ip = private_address()
        port = free_port()
        address = f"{ip}:{port}"
        log = tmp / "secure-head.log"
        before = listening()
        head = start(cluster + ["head", "--ip", ip, "--port", str(port), "--block"], environment(head_home), log)
        heads.append(head)
        answered, said = wait_up(address, head, log)
        token = head_home / ".ray" / "auth_token"
        if not token.is_file() or token.stat().st_mode & 0o077:
            fail(f"no private token file at {token}")
        ok(f"cluster.py head created its token (mode {token.stat().st_mode & 0o777:o}) and was up after "
           f"{time.monotonic() - began:.0f} s")
        if answered is not False:
            fail(f"the head answered a client without the token: {said}")
        # The GCS answers first; the raylet and its workers open their ports after it.
        deadline = time.monotonic() + 20
        while len(listening() - before) < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
        sockets = listening() - before
        if not any(s.endswith(f":{port}") for s in sockets):
            fail(f"ss -ltn shows no listener on the head's port {port}: {sorted(sockets)}")
        where = sorted({s.rsplit(":", 1)[0] for s in sockets})
        ok(f"the head refuses a client without the token ({said[:70]}...); ss -ltn: {len(sockets)} new "
           f"listeners, on {where}")
        check = run(cluster + ["check", "--address", address], environment(stranger_home))
        if check.returncode != 0 or "refuses" not in check.stdout:
            fail(f"cluster.py check: {check.stdout}{check.stderr}")
        ok(f"cluster.py check: {check.stdout.strip()[:100]}...")
        # The launcher's machine holds a copy of the token.
        (launcher_home / ".ray").mkdir(mode=0o700)
        (launcher_home / ".ray" / "auth_token").write_text(token.read_text())
        joined = run([PYTHON, "-c", CONNECT.format(here=str(HERE)), address], environment(launcher_home))
        if "task answered 42" not in joined.stdout:
            fail(f"the launcher with the token could not use the cluster: {joined.stdout}{joined.stderr[-2000:]}")
        ok("the launcher with the token joins and runs a task")
        stranger = run([PYTHON, "-c", CONNECT.format(here=str(HERE)), address], environment(stranger_home))
        if stranger.returncode == 0 or "no Ray token" not in stranger.stderr:
            fail(f"the launcher without a token: {stranger.stdout}{stranger.stderr[-2000:]}")
        ok("the launcher without a token stops and says where the token goes")
        stop(head)

        # --- a head as the README once started it: no token anywhere
        port = free_port()
        address = f"{ip}:{port}"
        log = tmp / "open-head.log"
        command = [RAY, "start", "--head", f"--node-ip-address={ip}", f"--port={port}", "--include-dashboard=false", "--block"]
        head = start(command, environment(open_home, RAY_AUTH_MODE="disabled"), log)
        heads.append(head)
        answered, said = wait_up(address, head, log)
        if answered is not True:
            fail(f"a head without token authentication did not answer a token-less client: {said}")
        check = run(cluster + ["check", "--address", address], environment(stranger_home))
        if check.returncode != 1 or "INSECURE" not in check.stdout:
            fail(f"cluster.py check called an open cluster safe: {check.stdout}{check.stderr}")
        ok("cluster.py check says INSECURE of a head started with a bare `ray start --head`")
        refused = run([PYTHON, "-c", CONNECT.format(here=str(HERE)), address], environment(launcher_home))
        if refused.returncode == 0 or "answers clients without a token" not in refused.stderr:
            fail(f"the launcher joined an open cluster: {refused.stdout}{refused.stderr[-2000:]}")
        ok("the launcher refuses to join it: " + refused.stderr.strip().splitlines()[-1][:110] + "...")
        trusted = run([PYTHON, "-c", CONNECT.format(here=str(HERE)), address, "--trusted-network"],
                      environment(stranger_home))
        if "task answered 42" not in trusted.stdout:
            fail(f"--trusted-network did not join the open cluster: {trusted.stdout}{trusted.stderr[-2000:]}")
        ok("with --trusted-network it joins")
        print(f"all checks passed in {time.monotonic() - began:.0f} s", flush=True)
        return 0
    finally:
        for head in heads:
            stop(head)
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
