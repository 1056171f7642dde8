"""f32 against bf16 for a shogi-cpu-sized convolution tower on this CPU (libtorch's
oneDNN convolutions, one thread unless told): whether half-precision inference would pay
on a CPU. A stem of 47 planes to 32 channels, six 3x3 convolutions of 32 channels (the
3x32 network's tower) and a 1x1 policy convolution to 139 planes, on 9x9 boards.

    .venv/bin/python scripts/bench/cpu_bf16_convs.py [THREADS]
"""
import sys
import time

import torch

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
CHANNELS = 32


def tower(dtype):
    layers = [torch.nn.Conv2d(47, CHANNELS, 3, padding=1), torch.nn.ReLU()]
    for _ in range(6):
        layers += [torch.nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1), torch.nn.ReLU()]
    layers += [torch.nn.Conv2d(CHANNELS, 139, 1)]
    return torch.nn.Sequential(*layers).eval().to(dtype)


for batch in (8, 24, 64, 256):
    rates = {}
    for dtype in (torch.float32, torch.bfloat16):
        net, x = tower(dtype), torch.randn(batch, 47, 9, 9).to(dtype)
        with torch.inference_mode():
            for _ in range(20):
                net(x)
            start, runs = time.perf_counter(), 0
            while time.perf_counter() - start < 2:
                net(x)
                runs += 1
        rates[dtype] = batch * runs / (time.perf_counter() - start)
    f32, bf16 = rates[torch.float32], rates[torch.bfloat16]
    print(f"batch {batch:4d}: f32 {f32:8.0f} positions/s, bf16 {bf16:8.0f}, bf16/f32 {bf16 / f32:.2f}")
