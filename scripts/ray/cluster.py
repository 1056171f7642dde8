#!/usr/bin/env python3
"""Starts a Ray cluster for shogi-zero that only its own machines can use: token
authentication on, every node on the private address it is given.

    python scripts/ray/cluster.py token                       # once, on the head
    python scripts/ray/cluster.py head --ip 10.0.0.5          # the learner's machine
    scp 10.0.0.5:.ray/auth_token ~/.ray/auth_token           # each other machine...
    python scripts/ray/cluster.py worker --ip 10.0.0.6 --address 10.0.0.5:6379
    python scripts/ray/cluster.py check --address 10.0.0.5:6379
    python scripts/ray/cluster.py stop                        # this machine's Ray

Ray 2.60 turns token authentication on by itself only for a cluster that `ray.init()`
starts, or when a token file already exists: a `ray start --head` on a fresh machine
accepts anyone who reaches its port, and anyone who does can run code on every node.
This script runs `ray start` with RAY_AUTH_MODE=token and the token file present, so
every node, and every client, must hold the token. The token is a secret: it travels
by a channel you trust (scp, your secrets manager), never in a command line or a
repository. Ray's processes still listen on every interface of each machine (`ss
-ltn`); a token-less client is refused by each of them, and a firewall that keeps the
cluster's ports to its own machines is still the right second wall.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import shogi_zero_ray as launcher  # noqa: E402


def token_path() -> Path:
    """Where this machine keeps the token: RAY_AUTH_TOKEN_PATH, else ~/.ray/auth_token
    (Ray reads the same places)."""
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    return Path(named) if named else Path.home() / ".ray" / "auth_token"


def create_token() -> tuple[Path, bool]:
    """The token file, created (256 random bits, readable by its owner only) if absent;
    returns it and whether it was created."""
    path = token_path()
    if path.is_file() and path.read_text().strip():
        # A token others may read is no secret: only its owner may (Ray writes its own
        # 644).
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
            print(f"cluster.py: {path} was readable by others; now by its owner only", file=sys.stderr)
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32))
    return path, True


def require_private(ip: str, allow_public: bool) -> None:
    """Refuses an address the internet can reach, unless the user says otherwise."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        raise SystemExit(f"cluster.py: --ip {ip!r} is not an IP address")
    if not (address.is_private or address.is_loopback) and not allow_public:
        raise SystemExit(
            f"cluster.py: {ip} is a public address: the cluster's ports would face the internet. Use the "
            "machine's private address, or pass --allow-public if a firewall keeps the ports to your machines"
        )


def ray_start(args: list[str]) -> int:
    env = dict(os.environ, RAY_AUTH_MODE="token")
    ray = Path(sys.executable).with_name("ray")
    command = [str(ray) if ray.exists() else "ray", "start", *args]
    print("cluster.py: RAY_AUTH_MODE=token " + " ".join(command), flush=True)
    return subprocess.call(command, env=env)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("token", help="create this machine's token if it has none, and say how to copy it")
    head = sub.add_parser("head", help="start the head node (the learner's machine) with token authentication")
    head.add_argument("--ip", required=True, help="this machine's private address, which the others reach")
    head.add_argument("--port", type=int, default=6379, help="the cluster's port (default 6379)")
    head.add_argument("--allow-public", action="store_true", help="accept a public --ip")
    head.add_argument("--block", action="store_true", help="stay in the foreground (Ctrl-C stops this node)")
    worker = sub.add_parser("worker", help="join a head started by `cluster.py head` (needs the head's token here)")
    worker.add_argument("--ip", required=True, help="this machine's private address")
    worker.add_argument("--address", required=True, help="the head's address:port")
    worker.add_argument("--allow-public", action="store_true", help="accept a public --ip")
    worker.add_argument("--block", action="store_true", help="stay in the foreground (Ctrl-C stops this node)")
    check = sub.add_parser("check", help="whether a cluster refuses clients without its token")
    check.add_argument("--address", required=True, help="the head's address:port")
    sub.add_parser("stop", help="stop every Ray process of this machine (ray stop)")
    args = p.parse_args(argv)

    if args.command == "token":
        path, created = create_token()
        print(f"cluster.py: {'created' if created else 'using'} the cluster's token {path} (mode 600)")
        print("  copy it to every other machine of the cluster by a channel you trust, e.g.")
        print(f"  scp {path} OTHER:.ray/auth_token && ssh OTHER chmod 600 .ray/auth_token")
        print("  (or point RAY_AUTH_TOKEN_PATH at it); the launcher's machine needs it too")
        return 0
    if args.command in ("head", "worker"):
        require_private(args.ip, args.allow_public)
        if args.command == "head":
            path, created = create_token()
            if created:
                print(f"cluster.py: created the cluster's token {path}; copy it to the other machines "
                      "(python scripts/ray/cluster.py token says how)")
            flags = ["--head", f"--node-ip-address={args.ip}", f"--port={args.port}", "--include-dashboard=false"]
        else:
            if launcher.token_source() is None:
                raise SystemExit(
                    f"cluster.py: no token at {token_path()}: copy the head's ~/.ray/auth_token here first "
                    "(scp HEAD:.ray/auth_token ~/.ray/auth_token; chmod 600 ~/.ray/auth_token)"
                )
            flags = [f"--address={args.address}", f"--node-ip-address={args.ip}"]
        return ray_start(flags + (["--block"] if args.block else []))
    if args.command == "check":
        answered, said = launcher.answers_without_token(args.address)
        if answered:
            print(f"cluster.py: INSECURE: {args.address} answers a client that has no token")
            return 1
        if answered is None:
            print(f"cluster.py: could not tell: {said}")
            return 2
        print(f"cluster.py: {args.address} refuses a client without the token ({said})")
        return 0
    if args.command == "stop":
        ray = Path(sys.executable).with_name("ray")
        return subprocess.call([str(ray) if ray.exists() else "ray", "stop"])
    return 2


if __name__ == "__main__":
    sys.exit(main())
