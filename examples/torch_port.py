#!/usr/bin/env python3
"""Porting a PyTorch decoder block to hal through DLPack.

A small Llama-style block (RMSNorm, RoPE, grouped-query causal attention,
SwiGLU) runs twice: in pure PyTorch, and with those four pieces swapped for
hal ops on the same tensors (zero-copy both ways; the projections stay in
PyTorch). Both are scored against the block in float64 (normwise relative
error); the hal version must stay within 4x the error of PyTorch's own float32
block, so a wrong op (a sign, a mask, a pairing) fails. Exit status 0 on success.

    PYTHONPATH=build/cpu/python python3 examples/torch_port.py
"""
import sys

import torch
from torch.utils.dlpack import from_dlpack as to_torch

import hal

B, S, D, HQ, HKV, HD, FF = 2, 9, 64, 4, 2, 16, 96
THETA, EPS = 10000.0, 1e-5


def rmsnorm_torch(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def rope_torch(x, pos):  # x [b, s, h, d], NeoX pairs (i, i + d/2)
    d = x.shape[-1]
    inv = THETA ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = (pos.to(torch.float64)[:, None] * inv)[None, :, None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def attention_torch(q, k, v):  # [b, s, h, d], causal, grouped-query
    k = k.repeat_interleave(HQ // HKV, dim=2)
    v = v.repeat_interleave(HQ // HKV, dim=2)
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) / HD**0.5
    mask = torch.ones(S, S, dtype=torch.bool).triu(1)
    p = s.masked_fill(mask, float("-inf")).softmax(-1)
    return torch.einsum("bhqk,bkhd->bqhd", p, v)


def swiglu_torch(g, u):
    return torch.nn.functional.silu(g) * u


# The same four pieces on hal: torch tensors go in through DLPack (views, no
# copies) and hal's outputs come back as torch tensors the same way.
def rmsnorm_hal(x, w):
    return to_torch(hal.ops.rmsnorm(x, w, eps=EPS))


def rope_hal(x, pos):
    return to_torch(hal.ops.rope(x, pos.to(torch.int32), theta=THETA, style="neox"))


def attention_hal(q, k, v):
    return to_torch(hal.ops.attention(q.contiguous(), k.contiguous(), v.contiguous(), causal=True))


def swiglu_hal(g, u):
    return to_torch(hal.ops.swiglu(g.contiguous(), u.contiguous()))


def block(x, p, rmsnorm, rope, attention, swiglu):
    pos = torch.arange(S)
    h = rmsnorm(x, p["attn_norm"])
    q = (h @ p["wq"]).view(B, S, HQ, HD)
    k = (h @ p["wk"]).view(B, S, HKV, HD)
    v = (h @ p["wv"]).view(B, S, HKV, HD)
    a = attention(rope(q, pos), rope(k, pos), v).reshape(B, S, HQ * HD)
    x = x + a @ p["wo"]
    h = rmsnorm(x, p["ffn_norm"])
    return x + swiglu(h @ p["w_gate"], h @ p["w_up"]) @ p["w_down"]


def main():
    torch.manual_seed(0)
    shapes = {"attn_norm": (D,), "ffn_norm": (D,), "wq": (D, HQ * HD), "wk": (D, HKV * HD),
              "wv": (D, HKV * HD), "wo": (HQ * HD, D), "w_gate": (D, FF), "w_up": (D, FF), "w_down": (FF, D)}
    p64 = {n: (1 + 0.1 * torch.randn(s) if "norm" in n else torch.randn(s) / s[0] ** 0.5).double()
           for n, s in shapes.items()}
    x64 = torch.randn(B, S, D, dtype=torch.float64)
    p32 = {n: t.float() for n, t in p64.items()}
    x32 = x64.float()

    ref = block(x64, p64, rmsnorm_torch, rope_torch, attention_torch, swiglu_torch)
    ours_torch = block(x32, p32, rmsnorm_torch, rope_torch, attention_torch, swiglu_torch)
    ours_hal = block(x32, p32, rmsnorm_hal, rope_hal, attention_hal, swiglu_hal)

    def err(y):
        return ((y.double() - ref).norm() / ref.norm()).item()

    e_torch, e_hal = err(ours_torch), err(ours_hal)
    bound = max(4 * e_torch, 1e-6)
    print(f"relative error against the float64 block: pytorch f32 {e_torch:.3e}, hal f32 {e_hal:.3e} "
          f"(bound {bound:.3e}); hal vs pytorch f32 max |diff| {(ours_hal - ours_torch).abs().max().item():.3e}")
    if not e_hal <= bound:
        print("FAIL: the hal block is further from float64 than the bound")
        return 1
    print("ok: the block with hal's RMSNorm, RoPE, attention and SwiGLU matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
