#!/usr/bin/python3
"""The model-level training step against torch.autograd, an independent reference.

hal_training_step_dump writes the conformance suite's model-level training
case (conformance/model_training_case.h: one Llama-style decoder layer with
embedding, final RMSNorm and a vocabulary projection; cross-entropy; backward
through every op; AdamW at step 5 from non-zero moments), and this script
checks it with Debian's python3-torch (CPU) in float64:

1. The whole step in fp64 (hal's oracle path): torch builds the same layer
   from the same initial state, differentiates the loss with torch.autograd
   and steps torch.optim.AdamW; the loss, every gradient and every updated
   parameter and moment agree with hal's to 1e-9 relative. This checks that
   the chain of backward ops is the gradient of the layer.
2. hal's f32 and bf16 steps on the CPU, stage by stage: torch computes each
   stage (the forward op, or torch.autograd of it for a backward stage, or
   AdamW; attention_backward by its defining formula on the y and lse it was
   given, see stage_reference) in float64 from the inputs that stage read, and every output element
   of hal must lie within the contract's bound of it (the bound the suite
   computes, written beside the output): score = |hal - torch| / bound <= 1
   (bound 0: exact). The worst score per dtype is reported.
Usage: torch_layer_step_check.py DUMP_BINARY WORK_DIR. Exits 77 (skipped)
when torch or numpy is missing.
"""
import json
import math
import os
import struct
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

DUMP, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
subprocess.run([DUMP, WORK], check=True)
torch.set_default_dtype(torch.float64)
TOL = 1e-9


def load(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        assert e["dtype"] == "F64", name
        b, end = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data, np.float64, (end - b) // 8, 8 + n + b).reshape(e["shape"]).copy())
    return meta, out


def attrs(text):
    """key=value pairs; numbers are fp32 attributes printed with 9 digits: take their exact fp32 value."""
    out = {}
    for kv in text.split():
        k, v = kv.split("=")
        out[k] = v if not v.replace(".", "").replace("-", "").replace("e", "").replace("+", "").isdigit() else float(np.float32(float(v)))
    return out


# --- the ops, in float64 -------------------------------------------------------------------------

def rmsnorm(x, w, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rope(x, pos, theta):  # neox pairs (i, i + d/2), x [b, s, h, d], positions [s]
    d = x.shape[-1]
    inv = torch.tensor(theta) ** (-torch.arange(0, d // 2) * 2.0 / d)
    ang = pos.reshape(1, -1, 1, 1) * inv
    c, s = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)


def attention(q, k, v, scale, causal):  # [b, s, h, d], grouped-query; returns y and lse [b, hq, sq]
    hq, hkv = q.shape[2], k.shape[2]
    k = k.repeat_interleave(hq // hkv, dim=2)
    v = v.repeat_interleave(hq // hkv, dim=2)
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        sq, sk = s.shape[-2:]
        i = torch.arange(sq)[:, None]
        j = torch.arange(sk)[None, :]
        s = s.masked_fill(j > i + (sk - sq), float("-inf"))
    lse = torch.logsumexp(s, -1)
    y = torch.einsum("bhqk,bkhd->bqhd", torch.softmax(s, -1), v)
    return y, lse.transpose(1, 2)  # hal: [b, sq, hq]


def req(t):
    return t.clone().requires_grad_(True)


def adamw(p, g, m, v, a):
    """torch.optim.AdamW from state (m, v) at step a['step'] - 1; returns p, m, v after one step."""
    p = p.clone()
    p.grad = g.clone()
    opt = torch.optim.AdamW([p], lr=a["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"], weight_decay=a["weight_decay"])
    opt.state[p] = {"step": torch.tensor(float(a["step"]) - 1.0), "exp_avg": m.clone(), "exp_avg_sq": v.clone()}
    opt.step()
    st = opt.state[p]
    return p.detach(), st["exp_avg"], st["exp_avg_sq"]


def stage_reference(op, a, ins):
    """The outputs of one stage in float64, by output name."""
    if op == "embedding":
        return {"y": ins["table"][ins["ids"].long()]}
    if op == "rmsnorm":
        return {"y": rmsnorm(ins["x"], ins["weight"], a["eps"])}
    if op == "gemm":
        A = ins["a"].transpose(-1, -2) if a["trans_a"] else ins["a"]
        B = ins["b"].transpose(-1, -2) if a["trans_b"] else ins["b"]
        c = a["alpha"] * (A @ B)
        if a["beta"] != 0:
            c = c + a["beta"] * ins["c"]
        return {"c": c}
    if op == "rope":
        return {"y": rope(ins["x"], ins["positions"], a["theta"])}
    if op == "attention":
        y, lse = attention(ins["q"], ins["k"], ins["v"], a["scale"], bool(a["causal"]))
        return {"y": y, "lse": lse}
    if op == "copy":
        return {"y": ins["x"]}
    if op == "add":
        return {"y": ins["a"] + ins["b"]}
    if op == "swiglu":
        return {"y": F.silu(ins["gate"]) * ins["up"]}
    if op == "cross_entropy":
        z = req(ins["logits"])
        loss = F.cross_entropy(z, ins["targets"].long(), reduction=a["reduction"])
        (dz,) = torch.autograd.grad(loss.sum(), (z,))
        return {"loss": loss.detach(), "dlogits": dz}
    if op == "rmsnorm_backward":
        x, w = req(ins["x"]), req(ins["weight"])
        dx, dw = torch.autograd.grad(rmsnorm(x, w, a["eps"]), (x, w), ins["dy"])
        return {"dx": dx, "dweight": dw}
    if op == "swiglu_backward":
        g, u = req(ins["gate"]), req(ins["up"])
        dg, du = torch.autograd.grad(F.silu(g) * u, (g, u), ins["dy"])
        return {"dgate": dg, "dup": du}
    if op == "rope_backward":
        x = req(torch.zeros_like(ins["dy"]))  # rope is linear: its gradient does not depend on x
        (dx,) = torch.autograd.grad(rope(x, ins["positions"], a["theta"]), (x,), ins["dy"])
        return {"dx": dx}
    if op == "attention_backward":
        # The op's gradient is defined on the y and lse it is given (hal/op_training.h):
        # P = exp(scale Q K^T + mask - lse), D = rowsum(dy * y). In f32 and bf16 those are
        # the forward's rounded outputs, not the exact ones torch.autograd would recompute
        # (a bf16 y moves D by up to 2^-9 relative), so the reference is that formula in
        # float64 on the stage's own inputs; with exact y and lse it is autograd's result
        # (part 1 checks the whole chain against autograd in fp64).
        q, k, v, y, dy, lse = ins["q"], ins["k"], ins["v"], ins["y"], ins["dy"], ins["lse"]
        g = q.shape[2] // k.shape[2]
        kk, vv = k.repeat_interleave(g, dim=2), v.repeat_interleave(g, dim=2)
        s_ = torch.einsum("bqhd,bkhd->bhqk", q, kk) * a["scale"]
        if a["causal"]:
            sq, sk = s_.shape[-2:]
            s_ = s_.masked_fill(torch.arange(sk)[None, :] > torch.arange(sq)[:, None] + (sk - sq), float("-inf"))
        p = torch.exp(s_ - lse.transpose(1, 2)[..., None])
        d = (dy * y).sum(-1).transpose(1, 2)[..., None]  # [b, h, q, 1]
        dv_ = torch.einsum("bhqk,bqhd->bkhd", p, dy)
        ds = p * (torch.einsum("bqhd,bkhd->bhqk", dy, vv) - d)
        dq = a["scale"] * torch.einsum("bhqk,bkhd->bqhd", ds, kk)
        dk_ = a["scale"] * torch.einsum("bhqk,bqhd->bkhd", ds, q)
        fold = lambda t: t.reshape(t.shape[0], t.shape[1], k.shape[2], g, t.shape[3]).sum(3)  # query heads -> kv head
        return {"dq": dq, "dk": fold(dk_), "dv": fold(dv_)}
    if op == "embedding_backward":
        t = req(torch.zeros_like(ins["dtable"]))
        (dt,) = torch.autograd.grad(F.embedding(ins["ids"].long(), t), (t,), ins["dy"])
        return {"dtable": ins["dtable"] + dt}
    if op == "adamw_step":
        master = "master" in ins
        p, m, v = adamw(ins["master"] if master else ins["param"], ins["grad"], ins["m"], ins["v"], a)
        out = {"param": p, "m": m, "v": v}
        if master:
            out["master"] = p
        return out
    raise SystemExit(f"no torch reference for op '{op}'")


# --- 1. the whole step in float64 -----------------------------------------------------------------

meta, t = load(os.path.join(WORK, "step_f64.safetensors"))
shape = {k: float(v) if "." in v or "e" in v else int(v) for k, v in (kv.split("=") for kv in meta["shape"].split())}
shape["eps"] = float(np.float32(shape["eps"]))
shape["theta"] = float(np.float32(shape["theta"]))
L, H, NH, NKV, HD = shape["layers"], shape["hidden"], shape["heads"], shape["kv_heads"], shape["head_dim"]
B, S = shape["batch"], shape["seq"]
names = [k[len("init.adam_m."):] for k in t if k.startswith("init.adam_m.")]
params = {n: req(t["init." + n]) for n in names}
ids, targets, pos = t["init.ids"].long(), t["init.targets"].long(), t["init.positions"]

x = params["tok_embed"][ids]
for l in range(L):
    p = lambda n: params[f"l{l}.{n}"]
    h = rmsnorm(x, p("attn_norm"), shape["eps"])
    q = rope((h @ p("wq")).reshape(B, S, NH, HD), pos, shape["theta"])
    k = rope((h @ p("wk")).reshape(B, S, NKV, HD), pos, shape["theta"])
    v = (h @ p("wv")).reshape(B, S, NKV, HD)
    a, _ = attention(q, k, v, 1.0 / math.sqrt(HD), True)
    x2 = x + a.reshape(B * S, NH * HD) @ p("wo")
    h2 = rmsnorm(x2, p("mlp_norm"), shape["eps"])
    x = x2 + (F.silu(h2 @ p("wg")) * (h2 @ p("wu"))) @ p("wd")
logits = rmsnorm(x, params["final_norm"], shape["eps"]) @ params["lm_head"]
loss = F.cross_entropy(logits, targets)
grads = dict(zip(names, torch.autograd.grad(loss, [params[n] for n in names])))

worst_e2e = {}


def close(label, got, want):
    scale = max(float(want.abs().max()), 1e-300)
    err = float((got - want).abs().max()) / scale
    worst_e2e[label] = err
    assert err <= TOL, f"{label}: relative difference {err:.3g} > {TOL}"


close("loss", t["final.loss"], loss.detach())
adam = attrs(meta["adam"])
for n in names:
    close(f"grad {n}", t[f"final.d.{n}"], grads[n])
    a = dict(adam, weight_decay=float(np.float32(float(meta["decay." + n]))))
    pn, mn, vn = adamw(t["init." + n], grads[n], t["init.adam_m." + n], t["init.adam_v." + n], a)
    close(f"adamw {n}", t["final." + n], pn)
    close(f"adamw m {n}", t["final.adam_m." + n], mn)
    close(f"adamw v {n}", t["final.adam_v." + n], vn)
w = max(worst_e2e, key=worst_e2e.get)
print(f"fp64 step vs torch.autograd + torch.optim.AdamW: {len(worst_e2e)} tensors within {TOL}, worst {w} {worst_e2e[w]:.3g}")

# --- 2. hal's f32 and bf16 steps, stage by stage, within the contract ------------------------------

for dt in ("f32", "bf16"):
    meta, t = load(os.path.join(WORK, f"step_{dt}.safetensors"))
    worst = (0.0, "", "")
    per_op = {}
    for i in range(int(meta["stages"])):
        name, op, attr_text = meta[f"stage.{i}"].split("|")
        a = attrs(attr_text)
        ins = {k.split(".", 2)[2]: v for k, v in t.items() if k.startswith(f"{i}.in.")}
        ref = stage_reference(op, a, ins)
        for out in [k.split(".", 2)[2] for k in t if k.startswith(f"{i}.out.")]:
            got, bound, want = t[f"{i}.out.{out}"], t[f"{i}.bound.{out}"], ref[out].detach().reshape(t[f"{i}.out.{out}"].shape)
            err = (got - want).abs()
            exact = bound == 0
            assert bool((err[exact] == 0).all()), f"{dt} stage {name} output {out}: an exact element differs from torch"
            s = float((err[~exact] / bound[~exact]).max()) if bool((~exact).any()) else 0.0
            per_op[op] = max(per_op.get(op, 0.0), s)
            if s >= worst[0]:
                worst = (s, name, out)
            assert s <= 1.0, f"{dt} stage {name} output {out}: |hal - torch| / bound = {s:.3g} > 1"
    print(f"{dt}: {int(meta['stages'])} stages within the contract against torch; worst score {worst[0]:.3g} "
          f"({worst[1]} {worst[2]}); per op: " + ", ".join(f"{k} {v:.2g}" for k, v in sorted(per_op.items())))
for dt in ("f32", "bf16", "f64"):  # about 250 MB: kept only when a check failed
    os.remove(os.path.join(WORK, f"step_{dt}.safetensors"))
print("torch layer step: all checks passed")
