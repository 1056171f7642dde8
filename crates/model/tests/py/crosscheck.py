"""Cross-check of shogi-model's weights file and forward pass, run by tests/integration/crosscheck.rs.

Usage: crosscheck.py DIR | crosscheck.py write DIR SEED (see `write`)
  DIR/weights.safetensors  the net's parameters as written by shogi_model::save_weights
  DIR/config.json          its ModelConfig
  DIR/io.safetensors       "input" [B, planes, H, W], Rust's "policy" [B, P], "value" [B, 3]

Prints one JSON object: every tensor of the weights file (name, dtype, shape, raw f32
bits), and the forward outputs of a PyTorch re-implementation of the architecture loaded
from those weights (strict names), plus its max abs difference to Rust's outputs.
"""

import json
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.numpy import load_file as load_numpy
from safetensors.torch import load_file as load_torch


class ConvBn(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)

    def forward(self, x):
        return self.bn(self.conv(x))


class SqueezeExcite(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.fc1 = nn.Linear(c, hidden)
        self.fc2 = nn.Linear(hidden, c)

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * s[:, :, None, None]


class ResBlock(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = cfg["channels"]
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.se = SqueezeExcite(c, max(c // 4, 1)) if cfg.get("se", False) else None

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        if self.se is not None:
            h = self.se(h)
        return F.relu(h + x)


class Head(nn.Module):
    pass


class Net(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        c = cfg["channels"]
        h, w = cfg["board_h"], cfg["board_w"]
        vc = cfg.get("value_channels", 32)
        self.cfg = cfg
        self.stem = ConvBn(cfg["input_planes"], c, cfg.get("stem_kernel", 3))
        self.tower = nn.ModuleList([ResBlock(cfg) for _ in range(cfg["blocks"])])
        self.policy = Head()
        self.policy.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.policy.bn = nn.BatchNorm2d(c)
        self.policy.out = nn.Conv2d(c, cfg["policy_planes"], 1, bias=True)
        self.value = Head()
        self.value.conv = nn.Conv2d(c, vc, 1, bias=False)
        self.value.bn = nn.BatchNorm2d(vc)
        # The pooled head reads each channel's mean and max over the board.
        pooled = cfg.get("value_pool", False)
        self.value.fc1 = nn.Linear(2 * vc if pooled else vc * h * w, cfg["value_hidden"])
        self.value.fc2 = nn.Linear(cfg["value_hidden"], 3)

    def forward(self, x):
        t = F.relu(self.stem(x))
        for block in self.tower:
            t = block(t)
        p = F.relu(self.policy.bn(self.policy.conv(t)))
        p = self.policy.out(p).flatten(1)  # plane-major: plane * H * W + square
        v = F.relu(self.value.bn(self.value.conv(t)))
        if self.cfg.get("value_pool", False):
            v = torch.cat([v.mean(dim=(2, 3)), v.amax(dim=(2, 3))], dim=1)
        else:
            v = v.flatten(1)
        v = self.value.fc2(F.relu(self.value.fc1(v)))
        return p, v


def write(d, seed):
    """The other direction: a PyTorch net with random parameters and buffers saved as
    DIR/py_weights.safetensors (its state_dict without num_batches_tracked, which the Rust
    net does not have), and its eval-mode outputs on a random input in DIR/py_io.safetensors."""
    from safetensors.torch import save_file

    torch.manual_seed(seed)
    cfg = json.load(open(f"{d}/config.json"))
    net = Net(cfg)
    with torch.no_grad():
        for name, t in net.state_dict().items():
            if name.endswith("num_batches_tracked"):
                continue
            r = torch.rand(t.shape)
            if name.endswith("running_var"):
                t.copy_(r + 0.5)
            elif name.endswith("running_mean") or name.endswith("bias"):
                t.copy_((r - 0.5) * 0.2)
            else:
                t.copy_((r - 0.5) * 0.6)
    state = {
        k: v.contiguous()
        for k, v in net.state_dict().items()
        if not k.endswith("num_batches_tracked")
    }
    save_file(state, f"{d}/py_weights.safetensors")
    net.eval()
    x = torch.randn(3, cfg["input_planes"], cfg["board_h"], cfg["board_w"])
    with torch.no_grad():
        p, v = net(x)
    save_file({"input": x, "policy": p.contiguous(), "value": v.contiguous()},
              f"{d}/py_io.safetensors")


def main():
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]))
        return
    d = sys.argv[1]
    cfg = json.load(open(f"{d}/config.json"))
    arrays = load_numpy(f"{d}/weights.safetensors")
    tensors = {}
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        entry = {"dtype": str(a.dtype), "shape": list(a.shape)}
        if a.dtype == np.float32:
            entry["bits"] = a.reshape(-1).view(np.uint32).tolist()
            entry["sum"] = float(a.astype(np.float64).sum())
        tensors[name] = entry

    net = Net(cfg)
    state = load_torch(f"{d}/weights.safetensors")
    missing, unexpected = net.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]
    net.eval()
    io = load_torch(f"{d}/io.safetensors")
    with torch.no_grad():
        p, v = net(io["input"])
    out = {
        "torch_version": torch.__version__,
        "tensors": tensors,
        "missing": missing,
        "unexpected": list(unexpected),
        "policy": p.reshape(-1).tolist(),
        "value": v.reshape(-1).tolist(),
        "policy_max_abs_diff": float((p - io["policy"]).abs().max()),
        "value_max_abs_diff": float((v - io["value"]).abs().max()),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
