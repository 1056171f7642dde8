"""PyTorch side of the network benchmark (scripts/bench/net.sh).

The architecture is the PyTorch mirror used by the weights cross-check
(crates/model/tests/py/crosscheck.py, `Net`), imported rather than copied, so it is
the same network as crates/model/src/net.rs parameter for parameter.

What is timed mirrors crates/model/examples/net_bench.rs:
  infer: float32 host buffer -> tensor, eval mode, no_grad, forward, softmax over the
         WDL logits, policy logits and WDL probabilities back to host arrays.
  train: host buffers -> tensors, train-mode forward, policy CE + value CE (WDL),
         zero_grad, backward, global grad-norm clip (10), SGD (momentum 0.9, Nesterov,
         weight decay 1e-4) step, losses read back to host.

Prints one line per measurement:
  RESULT impl=torch variant=V blocks=B channels=C threads=T mode=M batch=N rate=R
where R is positions/s (infer) or samples/s (train).
"""

import argparse
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "crates", "model", "tests", "py"))
from crosscheck import Net  # noqa: E402

def timed(fn, secs):
    """Two untimed calls, then calls until `secs` have passed (at least 3); returns calls/s
    from the median call time (as net_bench.rs does)."""
    fn()
    fn()
    times, start = [], time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < secs:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return 1.0 / times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", required=True)
    ap.add_argument("--blocks", type=int, required=True)
    ap.add_argument("--channels", type=int, required=True)
    ap.add_argument("--input-planes", type=int, required=True)
    ap.add_argument("--policy-planes", type=int, required=True)
    ap.add_argument("--board", type=int, required=True)
    ap.add_argument("--value-channels", type=int, default=32)
    ap.add_argument("--value-hidden", type=int, required=True)
    ap.add_argument("--se", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--modes", default="infer,train")
    ap.add_argument("--secs", type=float, default=1.5)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = {
        "blocks": args.blocks,
        "channels": args.channels,
        "input_planes": args.input_planes,
        "board_h": args.board,
        "board_w": args.board,
        "policy_planes": args.policy_planes,
        "value_channels": args.value_channels,
        "value_hidden": args.value_hidden,
        "se": args.se,
    }
    net = Net(cfg)
    n_in = args.input_planes * args.board * args.board
    n_pol = args.policy_planes * args.board * args.board
    rng = np.random.default_rng(0)
    opt = torch.optim.SGD(
        net.parameters(), lr=0.02, momentum=0.9, nesterov=True, weight_decay=1e-4
    )

    for mode in args.modes.split(","):
        for b in [int(x) for x in args.batches.split(",")]:
            xs = (rng.random((b, n_in)) < 0.3).astype(np.float32)
            if mode == "infer":
                net.eval()

                def step():
                    with torch.no_grad():
                        x = torch.from_numpy(xs).view(
                            b, args.input_planes, args.board, args.board
                        )
                        p, v = net(x)
                        p = p.float().contiguous().numpy()
                        v = torch.softmax(v.float(), 1).numpy()
                    return p, v

            else:
                net.train()
                pt = np.zeros((b, n_pol), np.float32)
                pt[np.arange(b), rng.integers(0, n_pol, b)] = 1.0
                vt = np.zeros((b, 3), np.float32)
                vt[np.arange(b), rng.integers(0, 3, b)] = 1.0

                def step():
                    x = torch.from_numpy(xs).view(
                        b, args.input_planes, args.board, args.board
                    )
                    ptt = torch.from_numpy(pt)
                    vtt = torch.from_numpy(vt)
                    p, v = net(x)
                    lp = -(ptt * F.log_softmax(p, 1)).sum(1).mean()
                    lv = -(vtt * F.log_softmax(v, 1)).sum(1).mean()
                    total = lp + lv
                    opt.zero_grad()
                    total.backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
                    opt.step()
                    return lp.item(), lv.item(), total.item()

            rate = timed(step, args.secs) * b
            print(
                f"RESULT impl=torch variant={args.variant} blocks={args.blocks} "
                f"channels={args.channels} threads={args.threads} mode={mode} "
                f"batch={b} rate={rate:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
