#!/usr/bin/python3
"""hal's training ops against torch.autograd, an independent reference.

Every training op runs through `hal run` on the CPU in float64 (the suite's
oracle path) on random inputs, and the same computation is differentiated by
torch.autograd in float64 (Debian's python3-torch, CPU): the gradients must
agree to 1e-9 relative. AdamW is compared with torch.optim.AdamW's step from
the same state. attention's y and lse and attention_backward's gradients are
compared with torch's own attention written out and differentiated. Usage: torch_autograd_check.py HAL_BINARY WORK_DIR. Exits 77
(skipped) when torch or numpy is missing.
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the test is skipped, saying why
    print(f"skipped: {e}")
    sys.exit(77)

HAL, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
rng = np.random.default_rng(20)
TOL = 1e-9
worst = {}


def hal_run(op, inputs, outputs, attrs=None):
    cmd = [HAL, "run", op, "--device", "cpu"]
    for name, arr in inputs.items():
        path = os.path.join(WORK, f"{op}.in.{name}.npy")
        np.save(path, arr)
        cmd += ["--in", f"{name}={path}"]
    paths = {}
    for name in outputs:
        paths[name] = os.path.join(WORK, f"{op}.out.{name}.npy")
        cmd += ["--out", f"{name}={paths[name]}"]
    for k, v in (attrs or {}).items():
        cmd += ["--attr", f"{k}={v}"]
    subprocess.run(cmd, check=True)
    return {name: np.load(p) for name, p in paths.items()}


def check(label, got, want):
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == want.shape, f"{label}: shape {got.shape} != {want.shape}"
    err = float(np.max(np.abs(got - want) / (1.0 + np.abs(want)))) if want.size else 0.0
    worst[label] = err
    assert err <= TOL, f"{label}: relative difference {err:.3g} > {TOL}"


def t(a, grad=True):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def grads(y, dy, *xs):
    return torch.autograd.grad(y, xs, grad_outputs=torch.tensor(dy) if dy is not None else None)


# softmax / log_softmax backward, scaled and causal (keys j > i + (Lk - Lq) masked)
for log in (False, True):
    for causal in (False, True):
        x = rng.normal(0, 2, (2, 5, 9))
        dy = rng.normal(0, 1, x.shape)
        scale = 0.625  # attributes are fp32: values they hold exactly
        xt = t(x)
        z = scale * xt
        if causal:
            i = torch.arange(5)[:, None]
            j = torch.arange(9)[None, :]
            z = z.masked_fill(j > i + 4, float("-inf"))
            # hal reads no dy at masked keys (their output is the constant 0 / -inf);
            # torch's log_softmax still adds them into sum(dy): give them 0.
            dy = np.where((j > i + 4).numpy(), 0.0, dy)
        y = F.log_softmax(z, -1) if log else F.softmax(z, -1)
        (dx,) = grads(y, dy, xt)
        op = "log_softmax_backward" if log else "softmax_backward"
        out = hal_run(op, {"y": y.detach().numpy(), "dy": dy}, ["dx"], {"scale": scale, "causal": int(causal)})
        check(f"{op} causal={causal}", out["dx"], dx)

# layernorm / rmsnorm backward
x = rng.normal(0.5, 2, (6, 33))
w = rng.normal(1, 0.3, 33)
b = rng.normal(0, 0.5, 33)
dy = rng.normal(0, 1, x.shape)
xt, wt, bt = t(x), t(w), t(b)
y = F.layer_norm(xt, (33,), wt, bt, eps=2.0**-16)
dx, dw, db = grads(y, dy, xt, wt, bt)
out = hal_run("layernorm_backward", {"x": x, "weight": w, "dy": dy}, ["dx", "dweight", "dbias"], {"eps": 2.0**-16})
check("layernorm_backward dx", out["dx"], dx)
check("layernorm_backward dweight", out["dweight"], dw)
check("layernorm_backward dbias", out["dbias"], db)
xt, wt = t(x), t(w)
y = xt * torch.rsqrt((xt * xt).mean(-1, keepdim=True) + 2.0**-16) * wt
dx, dw = grads(y, dy, xt, wt)
out = hal_run("rmsnorm_backward", {"x": x, "weight": w, "dy": dy}, ["dx", "dweight"], {"eps": 2.0**-16})
check("rmsnorm_backward dx", out["dx"], dx)
check("rmsnorm_backward dweight", out["dweight"], dw)

# unary backward
fns = {
    "gelu": lambda v: F.gelu(v),
    "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"),
    "silu": F.silu,
    "relu": F.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "exp": torch.exp,
}
x = rng.normal(0, 3, 257)
x[np.abs(x) < 1e-3] = 0.5
dy = rng.normal(0, 1, x.shape)
for name, fn in fns.items():
    xt = t(x)
    (dx,) = grads(fn(xt), dy, xt)
    out = hal_run(f"{name}_backward", {"x": x, "dy": dy}, ["dx"])
    check(f"{name}_backward", out["dx"], dx)

# swiglu backward
g, u, dy = rng.normal(0, 3, (3, 40)), rng.normal(0, 1, (3, 40)), rng.normal(0, 1, (3, 40))
gt, ut = t(g), t(u)
dg, du = grads(F.silu(gt) * ut, dy, gt, ut)
out = hal_run("swiglu_backward", {"gate": g, "up": u, "dy": dy}, ["dgate", "dup"])
check("swiglu_backward dgate", out["dgate"], dg)
check("swiglu_backward dup", out["dup"], du)

# cross_entropy: every reduction, label smoothing, ignore_index
z = rng.normal(0, 3, (7, 50))
targets = rng.integers(0, 50, 7)
targets[2] = -100
for reduction in ("none", "mean", "sum"):
    for smoothing in (0.0, 0.125):
        zt = t(z)
        loss = F.cross_entropy(zt, torch.tensor(targets), ignore_index=-100, label_smoothing=smoothing, reduction=reduction)
        (dz,) = torch.autograd.grad(loss.sum(), (zt,))
        out = hal_run("cross_entropy", {"logits": z, "targets": targets.astype(np.int64)}, ["loss", "dlogits"],
                      {"reduction": reduction, "label_smoothing": smoothing})
        check(f"cross_entropy {reduction} s={smoothing} loss", out["loss"], loss)
        check(f"cross_entropy {reduction} s={smoothing} dlogits", out["dlogits"], dz)

# embedding backward: repeated ids, from zeros
ids = rng.integers(0, 11, (4, 9))
dy = rng.normal(0, 1, (4, 9, 5))
table = t(rng.normal(0, 1, (11, 5)))
(dtable,) = grads(F.embedding(torch.tensor(ids), table), dy, table)
out = hal_run("embedding_backward", {"ids": ids.astype(np.int64), "dy": dy}, ["dtable"], {"vocab": 11})
check("embedding_backward", out["dtable"], dtable)

# rope backward (neox, partial rotary_dim)
x = rng.normal(0, 1, (2, 5, 3, 16))
dy = rng.normal(0, 1, x.shape)
pos = rng.integers(0, 300, 5)
rd, half, theta = 12, 6, 10000.0
xt = t(x)
freq = theta ** (-2.0 * torch.arange(half, dtype=torch.float64) / rd)
ang = torch.tensor(pos, dtype=torch.float64)[:, None] * freq[None, :]
cos, sin = torch.cos(ang)[None, :, None, :], torch.sin(ang)[None, :, None, :]
x1, x2 = xt[..., :half], xt[..., half:rd]
y = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, xt[..., rd:]], -1)
(dx,) = grads(y, dy, xt)
out = hal_run("rope_backward", {"dy": dy, "positions": pos.astype(np.int32)}, ["dx"], {"rotary_dim": rd, "theta": theta})
check("rope_backward", out["dx"], dx)

# adamw_step against torch.optim.AdamW from the same state, at step 4
p, gr = rng.normal(0, 1, 300), rng.normal(0, 0.1, 300)
m, v = rng.normal(0, 0.01, 300), rng.uniform(0, 1e-3, 300)
param = torch.tensor(p, dtype=torch.float64, requires_grad=True)
opt = torch.optim.AdamW([param], lr=2.0**-7, betas=(0.75, 0.9375), eps=2.0**-20, weight_decay=0.125)
opt.state[param] = {"step": torch.tensor(3.0), "exp_avg": torch.tensor(m), "exp_avg_sq": torch.tensor(v)}
param.grad = torch.tensor(gr)
opt.step()
out = hal_run("adamw_step", {"param": p, "grad": gr, "m": m, "v": v}, ["param", "m", "v"],
              {"lr": 2.0**-7, "beta1": 0.75, "beta2": 0.9375, "eps": 2.0**-20, "weight_decay": 0.125, "step": 4})
check("adamw_step param", out["param"], param.detach())
check("adamw_step m", out["m"], opt.state[param]["exp_avg"])
check("adamw_step v", out["v"], opt.state[param]["exp_avg_sq"])

# attention: the forward's y and lse (hal's layout: q [b, sq, hq, d], lse
# [b, sq, hq]) against torch's, then attention_backward's dq, dk, dv against
# autograd: grouped-query heads, causal with sq < sk and sq > sk (queries that
# see no key get zeros, and lse -inf), across the CPU's 64-key blocks.
for b, sq, sk, hq, hkv, d, dv, causal in ((2, 5, 9, 4, 2, 8, 6, False), (1, 19, 70, 4, 1, 16, 16, True),
                                          (1, 7, 4, 2, 2, 8, 8, True)):
    q, k, v = rng.normal(0, 1, (b, sq, hq, d)), rng.normal(0, 1, (b, sk, hkv, d)), rng.normal(0, 1, (b, sk, hkv, dv))
    dy = rng.normal(0, 1, (b, sq, hq, dv))
    scale = 0.375
    qt, kt, vt = t(q), t(k), t(v)
    group = hq // hkv
    kr, vr = kt.repeat_interleave(group, dim=2), vt.repeat_interleave(group, dim=2)
    s = torch.einsum("bihd,bjhd->bhij", qt, kr) * scale
    if causal:
        i = torch.arange(sq)[:, None]
        j = torch.arange(sk)[None, :]
        s = s.masked_fill(j > i + (sk - sq), float("-inf"))
    lse = torch.logsumexp(s, -1)  # -inf for a row without keys
    p = torch.nan_to_num(torch.exp(s - lse[..., None]), nan=0.0)  # such a row: zeros, as hal's y
    y = torch.einsum("bhij,bjhd->bihd", p, vr)
    dq, dk, dv_ = grads(y, dy, qt, kt, vt)
    label = f"attention b{b} sq{sq} sk{sk} h{hq}/{hkv} causal={causal}"
    attrs = {"scale": scale, "causal": int(causal)}
    fwd = hal_run("attention", {"q": q, "k": k, "v": v}, ["y", "lse"], attrs)
    check(f"{label} y", fwd["y"], y)
    want_lse = lse.permute(0, 2, 1).detach().numpy()
    finite = np.isfinite(want_lse)
    assert np.array_equal(finite, np.isfinite(fwd["lse"])), f"{label}: lse -inf in other rows than torch's"
    check(f"{label} lse", np.where(finite, fwd["lse"], 0.0), np.where(finite, want_lse, 0.0))
    out = hal_run("attention_backward", {"q": q, "k": k, "v": v, "y": fwd["y"], "dy": dy, "lse": fwd["lse"]},
                  ["dq", "dk", "dv"], attrs)
    check(f"attention_backward {label} dq", out["dq"], dq)
    check(f"attention_backward {label} dk", out["dk"], dk)
    check(f"attention_backward {label} dv", out["dv"], dv_)

# global_norm
xs = [rng.normal(0, 1, (17, 3)), rng.normal(0, 2, 100)]
out = hal_run("global_norm", {"x0": xs[0], "x1": xs[1]}, ["y"])
check("global_norm", out["y"], torch.linalg.vector_norm(torch.cat([torch.tensor(a).flatten() for a in xs])))

print(f"{len(worst)} comparisons, worst relative difference {max(worst.values()):.3g} ({max(worst, key=worst.get)})")
attn = {k: e for k, e in worst.items() if k.startswith("attention_backward")}
print(f"attention_backward: {len(attn)} comparisons, worst relative difference {max(attn.values()):.3g} "
      f"({max(attn, key=attn.get)})")
