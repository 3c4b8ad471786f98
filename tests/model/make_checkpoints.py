#!/usr/bin/python3
"""Writes tiny Hugging Face checkpoints (random weights, exact tensor names and
layout) and their reference logits from an independent PyTorch
implementation of the forward pass, in float64.

usage: make_checkpoints.py OUT_DIR
For each variant OUT_DIR/<name>/ gets config.json, model.safetensors (or two
shards and model.safetensors.index.json) and ref_<s>.npy: float64 logits
[len, vocab] at every position of test sequence s (SEQUENCES below), computed
from the weights as stored (rounded to their dtype)."""
import json
import math
import os
import struct
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # the tests skip with this reason
    os.makedirs(sys.argv[1], exist_ok=True)
    with open(os.path.join(sys.argv[1], "SKIP"), "w") as f:
        f.write(f"{sys.executable} cannot import torch/numpy ({e}); install Debian's python3-torch, python3-numpy")
    sys.exit(0)

SEQUENCES = [[3, 17, 42, 5, 8, 61, 23, 9, 11], [7, 2, 80, 33, 4]]

VARIANTS = {
    # Llama 2 style: untied, grouped-query heads, f32 storage.
    "llama_untied_f32": dict(arch="LlamaForCausalLM", dtype="F32", tie=False, layers=2, hidden=48, heads=4, kv=2,
                             ffn=80, vocab=97, theta=10000.0),
    # Llama 3 style: tied, rope_scaling llama3 with a short original context so
    # that every frequency band is hit, head_dim given explicitly (!= hidden/heads),
    # bf16 storage, two shards with an index.
    "llama3_tied_bf16": dict(arch="LlamaForCausalLM", dtype="BF16", tie=True, layers=3, hidden=64, heads=4, kv=1,
                             ffn=96, vocab=101, theta=500000.0, head_dim=24,
                             rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                           "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
                             shards=2),
    # Qwen2: q/k/v biases, tied, f16 storage.
    "qwen2_bias_f16": dict(arch="Qwen2ForCausalLM", dtype="F16", tie=True, layers=2, hidden=32, heads=4, kv=2,
                           ffn=64, vocab=89, theta=1000000.0, qkv_bias=True),
    # Mistral: a sliding window longer than every test sequence.
    "mistral_window_bf16": dict(arch="MistralForCausalLM", dtype="BF16", tie=False, layers=2, hidden=32, heads=4,
                                kv=1, ffn=48, vocab=96, theta=10000.0, sliding_window=4096),
    # DeepSeek-V3's FP8 layout: every linear weight (lm_head too) F8_E4M3 with
    # 128 x 128 block scales in <name>_scale_inv (F32; lm_head's BF16), the
    # rest F32. Sizes not multiples of 128, so partial blocks are exercised.
    # ref_<s>.npy quantises the activations per 1 x 128 as hal does;
    # refdq_<s>.npy does not (only the weights are fp8), for the test to show
    # that the difference is seen; it is what hal's fp64 oracle of an fp8
    # checkpoint computes. Beside it, <name>_dequant_bf16/: the same weights
    # rounded to BF16 (main() below).
    "llama_fp8_e4m3": dict(arch="LlamaForCausalLM", dtype="F32", tie=False, layers=2, hidden=160, heads=4, kv=2,
                           ffn=272, vocab=97, theta=10000.0, fp8=True),
}

DT = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def tensor_names(v):
    hd = v.get("head_dim", v["hidden"] // v["heads"])
    H, F, V, q, kv = v["hidden"], v["ffn"], v["vocab"], v["heads"] * hd, v["kv"] * hd
    out = [("model.embed_tokens.weight", (V, H))]
    for l in range(v["layers"]):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", (H,)), (p + "self_attn.q_proj.weight", (q, H)),
                (p + "self_attn.k_proj.weight", (kv, H)), (p + "self_attn.v_proj.weight", (kv, H)),
                (p + "self_attn.o_proj.weight", (H, q))]
        if v.get("qkv_bias"):
            out += [(p + "self_attn.q_proj.bias", (q,)), (p + "self_attn.k_proj.bias", (kv,)),
                    (p + "self_attn.v_proj.bias", (kv,))]
        out += [(p + "post_attention_layernorm.weight", (H,)), (p + "mlp.gate_proj.weight", (F, H)),
                (p + "mlp.up_proj.weight", (F, H)), (p + "mlp.down_proj.weight", (H, F))]
    out.append(("model.norm.weight", (H,)))
    if not v["tie"]:
        out.append(("lm_head.weight", (V, H)))
    return out


def write_fp8_safetensors(path, tensors):
    """tensors: (name, float64 tensor); linear weights become F8_E4M3 + F32 (lm_head: BF16)
    weight_scale_inv. Returns the weights as the checkpoint defines them (dequantised, float64)."""
    header, blobs, offset, stored = {}, [], 0, []

    def add(name, dtype, shape, raw):
        nonlocal offset
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)

    for name, t in tensors:
        if t.dim() == 2 and name != "model.embed_tokens.weight":
            codes, scales = quantize_weight_128x128(t.numpy())
            add(name, "F8_E4M3", codes.shape, codes.tobytes())
            if name == "lm_head.weight":  # some checkpoints store the scales in bf16
                sb = torch.from_numpy(scales).to(torch.bfloat16)
                add(name + "_scale_inv", "BF16", scales.shape, sb.view(torch.int16).numpy().tobytes())
                scales = sb.to(torch.float64).numpy()
            else:
                add(name + "_scale_inv", "F32", scales.shape, scales.tobytes())
            scale_full = np.repeat(np.repeat(scales.astype(np.float64), 128, 0), 128, 1)[:t.shape[0], :t.shape[1]]
            stored.append((name, torch.from_numpy(e4m3_decode(codes) * scale_full)))
        else:
            add(name, "F32", t.shape, t.to(torch.float32).numpy().tobytes())
            stored.append((name, t.to(torch.float32).to(torch.float64)))
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    return stored


def write_safetensors(path, tensors, dtype):
    header, blobs, offset = {}, [], 0
    for name, t in tensors:
        raw = t.to(DT[dtype]).contiguous().view(torch.uint8).numpy().tobytes() if dtype != "BF16" else \
            t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


# --- F8_E4M3 (OCP e4m3fn) in numpy: torch 1.13 has no float8 ---
# Codes 0x00..0x7E are the non-negative finite values in increasing order.
def _e4m3_value(code):
    e, m = (code >> 3) & 0xF, code & 7
    return (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)


E4M3_POS = np.array([_e4m3_value(c) for c in range(0x7F)], dtype=np.float64)  # 0 .. 448


def e4m3_encode(x):
    """float32 array -> uint8 codes: round to nearest, ties to even, saturating at 448."""
    x = np.asarray(x, dtype=np.float64)
    a = np.minimum(np.abs(x), 448.0)
    hi = np.clip(np.searchsorted(E4M3_POS, a), 0, 0x7E)
    lo = np.maximum(hi - 1, 0)
    d_lo, d_hi = a - E4M3_POS[lo], E4M3_POS[hi] - a
    code = np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, np.where(lo % 2 == 0, lo, hi)))
    code = np.where(a == E4M3_POS[hi], hi, code).astype(np.uint8)
    return np.where((np.signbit(x)) & (code != 0), code | 0x80, code).astype(np.uint8)


def e4m3_decode(codes):
    codes = np.asarray(codes, dtype=np.uint8)
    v = E4M3_POS[np.minimum(codes & 0x7F, 0x7E)]
    return np.where(codes & 0x80, -v, v)


def quantize_weight_128x128(w):
    """w float64 [out, in] -> (codes uint8 [out, in], scales float32 [ceil(out/128), ceil(in/128)]),
    scale = amax / 448 per block (DeepSeek-V3: real weight = code value * scale)."""
    n, k = w.shape
    bn, bk = -(-n // 128), -(-k // 128)
    w32 = w.astype(np.float32)
    codes = np.zeros((n, k), dtype=np.uint8)
    scales = np.zeros((bn, bk), dtype=np.float32)
    for i in range(bn):
        for j in range(bk):
            blk = w32[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128]
            s = np.float32(np.abs(blk).max()) / np.float32(448.0)
            scales[i, j] = s
            codes[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128] = e4m3_encode(blk / s)
    return codes, scales


def quantize_activation_1x128(x):
    """hal's quantize_fp8 (hal/op_fp8.h), row_1x128, e4m3, in float32 steps; returns the
    dequantised values (code value * scale) in float64. x: the activation as hal
    holds it (float32)."""
    x32 = x.numpy().astype(np.float32)
    out = np.zeros(x32.shape, dtype=np.float64)
    for j in range(0, x32.shape[1], 128):
        blk = x32[:, j:j + 128]
        s = np.maximum(np.abs(blk).max(axis=1, keepdims=True) / np.float32(448.0), np.float32(2.0 ** -126))
        out[:, j:j + 128] = e4m3_decode(e4m3_encode((blk / s).astype(np.float32))) * s.astype(np.float64)
    return torch.from_numpy(out)


def rope_frequencies(v, hd):
    inv = [v["theta"] ** (-2.0 * i / hd) for i in range(hd // 2)]
    s = v.get("rope_scaling")
    if not s:
        return torch.tensor(inv, dtype=torch.float64)
    old = s["original_max_position_embeddings"]
    low_wl, high_wl = old / s["low_freq_factor"], old / s["high_freq_factor"]
    out = []
    for f in inv:
        wl = 2 * math.pi / f
        if wl > low_wl:
            out.append(f / s["factor"])
        elif wl < high_wl:
            out.append(f)
        else:
            sm = (old / wl - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
            out.append((1 - sm) * f / s["factor"] + sm * f)
    return torch.tensor(out, dtype=torch.float64)


def reference_logits(v, W, tokens, quantize_activations=False):
    """Llama/Qwen2/Mistral forward in float64: rotate_half (neox) rope, GQA,
    SwiGLU, RMSNorm with weight, tied or untied head."""
    hd = v.get("head_dim", v["hidden"] // v["heads"])
    # hal's op attributes (attention scale, norm eps) are fp32 values; the
    # reference uses the same values so that only the computation differs.
    eps = float(np.float32(v.get("eps", 1e-6)))
    scale = float(np.float32(1.0 / math.sqrt(hd)))
    n = len(tokens)
    x = W["model.embed_tokens.weight"][torch.tensor(tokens)]
    pos = torch.arange(n, dtype=torch.float64)
    ang = pos[:, None] * rope_frequencies(v, hd)[None, :]
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)

    def rms(t, w):
        return t / torch.sqrt((t * t).mean(-1, keepdim=True) + eps) * w

    def rot(t):  # t [n, heads, hd]
        a, b = t[..., : hd // 2], t[..., hd // 2:]
        return t * cos[:, None, :] + torch.cat([-b, a], -1) * sin[:, None, :]

    def lin(t, name, bias=False):
        if quantize_activations:  # every linear weight is fp8: its input goes through quantize_fp8
            t = quantize_activation_1x128(t)
        y = t @ W[name + ".weight"].T
        return y + W[name + ".bias"] if bias else y

    mask = torch.full((n, n), -math.inf, dtype=torch.float64).triu(1)
    for l in range(v["layers"]):
        p = f"model.layers.{l}."
        h = rms(x, W[p + "input_layernorm.weight"])
        b = bool(v.get("qkv_bias"))
        q = rot(lin(h, p + "self_attn.q_proj", b).view(n, v["heads"], hd))
        k = rot(lin(h, p + "self_attn.k_proj", b).view(n, v["kv"], hd))
        val = lin(h, p + "self_attn.v_proj", b).view(n, v["kv"], hd)
        g = v["heads"] // v["kv"]
        k, val = k.repeat_interleave(g, 1), val.repeat_interleave(g, 1)
        s = torch.einsum("ihd,jhd->hij", q, k) * scale + mask
        a = torch.einsum("hij,jhd->ihd", torch.softmax(s, -1), val).reshape(n, v["heads"] * hd)
        x = x + lin(a, p + "self_attn.o_proj")
        h = rms(x, W[p + "post_attention_layernorm.weight"])
        gate, up = lin(h, p + "mlp.gate_proj"), lin(h, p + "mlp.up_proj")
        x = x + lin(torch.nn.functional.silu(gate) * up, p + "mlp.down_proj")
    x = rms(x, W["model.norm.weight"])
    if v["tie"]:
        return x @ W["model.embed_tokens.weight"].T
    return lin(x, "lm_head")


def config_of(v):
    c = {"architectures": [v["arch"]], "model_type": {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2",
                                                       "MistralForCausalLM": "mistral"}[v["arch"]],
         "hidden_size": v["hidden"], "intermediate_size": v["ffn"], "num_hidden_layers": v["layers"],
         "num_attention_heads": v["heads"], "num_key_value_heads": v["kv"], "vocab_size": v["vocab"],
         "rms_norm_eps": v.get("eps", 1e-6), "rope_theta": v["theta"], "hidden_act": "silu",
         "tie_word_embeddings": v["tie"], "max_position_embeddings": 2048, "bos_token_id": 1, "eos_token_id": 2,
         "initializer_range": 0.02, "use_cache": True, "transformers_version": "4.44.0",
         "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[v["dtype"]]}
    if v.get("fp8"):  # DeepSeek-V3's quantization_config
        c["quantization_config"] = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                    "weight_block_size": [128, 128]}
    if "head_dim" in v:
        c["head_dim"] = v["head_dim"]
    if "rope_scaling" in v:
        c["rope_scaling"] = v["rope_scaling"]
    if v["arch"] == "LlamaForCausalLM":
        c["attention_bias"] = False
        c["mlp_bias"] = False
    if v["arch"] == "MistralForCausalLM":
        c["sliding_window"] = v["sliding_window"]
    if v["arch"] == "Qwen2ForCausalLM":
        c["use_sliding_window"] = False
        c["sliding_window"] = 4096
        c["max_window_layers"] = 2
    return c


def main():
    out = sys.argv[1]
    torch.manual_seed(1234)
    for name, v in VARIANTS.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        tensors = []
        for tname, shape in tensor_names(v):
            if len(shape) == 1:
                t = 1.0 + 0.1 * torch.randn(shape, dtype=torch.float64) if tname.endswith("norm.weight") \
                    else 0.1 * torch.randn(shape, dtype=torch.float64)
            else:
                t = torch.randn(shape, dtype=torch.float64) / math.sqrt(shape[1])
                if tname == "model.embed_tokens.weight":
                    t = t * math.sqrt(shape[1]) * 0.5
            tensors.append((tname, t.to(DT[v["dtype"]]).to(torch.float64)))  # as stored
        shards = v.get("shards", 1)
        if v.get("fp8"):
            tensors = write_fp8_safetensors(os.path.join(d, "model.safetensors"), tensors)
        elif shards == 1:
            write_safetensors(os.path.join(d, "model.safetensors"), tensors, v["dtype"])
        else:
            per = math.ceil(len(tensors) / shards)
            weight_map = {}
            for s in range(shards):
                fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
                part = tensors[s * per:(s + 1) * per]
                write_safetensors(os.path.join(d, fname), part, v["dtype"])
                weight_map.update({n: fname for n, _ in part})
            with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
                json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config_of(v), f, indent=2)
        if v.get("fp8"):
            # The same weights (as the fp8 checkpoint defines them: code value *
            # scale) rounded to BF16, no quantization: <name>_dequant_bf16/, whose
            # bf16 run fp8 compare's drift is measured beside.
            dq = os.path.join(out, name + "_dequant_bf16")
            os.makedirs(dq, exist_ok=True)
            write_safetensors(os.path.join(dq, "model.safetensors"), tensors, "BF16")
            c = config_of(v)
            del c["quantization_config"]
            c["torch_dtype"] = "bfloat16"
            with open(os.path.join(dq, "config.json"), "w") as f:
                json.dump(c, f, indent=2)
        W = dict(tensors)
        for s, seq in enumerate(SEQUENCES):
            np.save(os.path.join(d, f"ref_{s}.npy"), reference_logits(v, W, seq, bool(v.get("fp8"))).numpy())
            if v.get("fp8"):
                np.save(os.path.join(d, f"refdq_{s}.npy"), reference_logits(v, W, seq).numpy())
    open(os.path.join(out, "DONE"), "w").close()


if __name__ == "__main__":
    main()
