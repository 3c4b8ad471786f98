"""Every op of hal.ops on the CPU against a NumPy float64 reference."""
import math

import numpy as np
import pytest

import hal
from training_ops import TRAINING

F32 = dict(rtol=3e-5, atol=3e-6)


def h(a, dtype=None):
    return hal.asarray(a, dtype=dtype, device="cpu")


def erf(x):
    return np.vectorize(math.erf)(x)


UNARY = {
    "neg": lambda x: -x,
    "abs": np.abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0),
    "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "silu": lambda x: x / (1 + np.exp(-x)),
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "maximum": np.maximum, "minimum": np.minimum}
REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "argmax": np.argmax}
COVERED = set(UNARY) | set(BINARY) | set(REDUCE) | {
    "gemm", "swiglu", "softmax", "log_softmax", "layernorm", "rmsnorm", "rope", "cast", "embedding",
    "attention", "copy", "fill_random"}


COVERED |= TRAINING  # tested in test_ops_training.py against torch.autograd


def test_every_op_of_the_table_is_tested_here():
    assert set(hal.ops.names) - COVERED == set(), "ops without a NumPy reference in this file"
    assert len(hal.ops.names) >= len(COVERED)


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op, rng):
    x = rng.standard_normal((3, 17)).astype(np.float32)
    if op in ("log", "sqrt", "rsqrt"):
        x = np.abs(x) + 0.1
    y = getattr(hal.ops, op)(h(x))
    assert y.shape == x.shape and y.dtype == hal.f32
    np.testing.assert_allclose(y.numpy(), UNARY[op](x.astype(np.float64)), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_broadcasts(op, rng):
    a = rng.standard_normal((4, 1, 5)).astype(np.float32)
    b = rng.standard_normal((3, 1)).astype(np.float32) + 3.0
    y = getattr(hal.ops, op)(h(a), h(b))
    assert y.shape == (4, 3, 5)
    np.testing.assert_allclose(y.numpy(), BINARY[op](a.astype(np.float64), b), **F32)


def test_binary_f64_is_exact(rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    np.testing.assert_array_equal(hal.ops.mul(h(a), h(b)).numpy(), a * b)


@pytest.mark.parametrize("op", sorted(REDUCE))
@pytest.mark.parametrize("axis,keepdim", [(-1, False), (0, True), (1, False)])
def test_reduce(op, axis, keepdim, rng):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    y = getattr(hal.ops, op)(h(x), axis=axis, keepdim=keepdim)
    want = REDUCE[op](x.astype(np.float64), axis=axis)
    if keepdim:
        want = np.expand_dims(want, axis)
    assert y.shape == want.shape
    if op == "argmax":
        assert y.dtype == hal.i64
        np.testing.assert_array_equal(y.numpy(), want)
    else:
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)


def test_swiglu(rng):
    g, u = rng.standard_normal((2, 3, 8)).astype(np.float32), rng.standard_normal((2, 3, 8)).astype(np.float32)
    g64 = g.astype(np.float64)
    np.testing.assert_allclose(hal.ops.swiglu(h(g), h(u)).numpy(), g64 / (1 + np.exp(-g64)) * u, **F32)


def np_softmax(x, scale=1.0, causal=False, log=False):
    z = scale * x.astype(np.float64)
    if causal:
        lq, lk = z.shape[-2:]
        mask = np.arange(lk)[None, :] > np.arange(lq)[:, None] + (lk - lq)
        z = np.where(mask, -np.inf, z)
    z = z - z.max(axis=-1, keepdims=True)
    if log:
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_softmax(log, causal, rng):
    x = rng.standard_normal((2, 5, 7)).astype(np.float32)
    op = hal.ops.log_softmax if log else hal.ops.softmax
    y = op(h(x), scale=0.5, causal=causal).numpy()
    want = np_softmax(x, 0.5, causal, log)
    finite = np.isfinite(want)
    np.testing.assert_allclose(y[finite], want[finite], rtol=2e-5, atol=2e-6)
    assert np.array_equal(np.isfinite(y), finite)


def test_layernorm_and_rmsnorm(rng):
    x = rng.standard_normal((3, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    x64 = x.astype(np.float64)
    mu, var = x64.mean(-1, keepdims=True), x64.var(-1, keepdims=True)
    np.testing.assert_allclose(hal.ops.layernorm(h(x), h(w), h(b), eps=1e-3).numpy(),
                               (x64 - mu) / np.sqrt(var + 1e-3) * w + b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hal.ops.rmsnorm(h(x), h(w), eps=1e-6).numpy(),
                               x64 / np.sqrt((x64**2).mean(-1, keepdims=True) + 1e-6) * w, rtol=1e-4, atol=1e-5)


def np_rope(x, pos, theta, style):
    d = x.shape[-1]
    f = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    ang = pos.astype(np.float64)[..., None, None] * f  # [b, s, 1, d/2]
    c, s = np.cos(ang), np.sin(ang)
    x = x.astype(np.float64)
    if style == "neox":
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x1 * c - x2 * s, x2 * c + x1 * s
    return out


@pytest.mark.parametrize("style", ["neox", "gptj"])
def test_rope(style, rng):
    x = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    pos = np.array([[0, 1, 2, 3, 4], [7, 9, 11, 100, 1000]])  # i64: converted to i32 as in `hal run`
    y = hal.ops.rope(h(x), pos, theta=10000.0, style=style)
    np.testing.assert_allclose(y.numpy(), np_rope(x, pos, 10000.0, style), rtol=1e-4, atol=1e-4)


def test_cast_rounds_once_to_nearest_even(rng):
    x = rng.standard_normal(100).astype(np.float32) * 100
    np.testing.assert_array_equal(hal.ops.cast(h(x), dtype="f16").numpy(), x.astype(np.float16))
    y = hal.ops.cast(h(x), dtype=hal.bf16, scale=2.0)
    assert y.dtype == hal.bf16
    bits = (2 * x).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16  # RNE to bf16
    np.testing.assert_array_equal(y.numpy(), rounded.astype(np.uint32).view(np.float32))


def test_embedding(rng):
    table = rng.standard_normal((10, 4)).astype(np.float32)
    ids = np.array([[3, 0], [9, 3]], dtype=np.int32)
    np.testing.assert_array_equal(hal.ops.embedding(h(table), h(ids)).numpy(), table[ids])


@pytest.mark.parametrize("causal", [False, True])
def test_attention_grouped_query(causal, rng):
    b, sq, sk, hq, hkv, d = 2, 3, 5, 4, 2, 8
    q = rng.standard_normal((b, sq, hq, d)).astype(np.float32)
    k = rng.standard_normal((b, sk, hkv, d)).astype(np.float32)
    v = rng.standard_normal((b, sk, hkv, d)).astype(np.float32)
    y = hal.ops.attention(h(q), h(k), h(v), causal=causal).numpy()
    kk = np.repeat(k, hq // hkv, axis=2).astype(np.float64)
    vv = np.repeat(v, hq // hkv, axis=2).astype(np.float64)
    s = np.einsum("bqhd,bkhd->bhqk", q.astype(np.float64), kk)
    p = np_softmax(s, 1 / math.sqrt(d), causal)
    np.testing.assert_allclose(y, np.einsum("bhqk,bkhd->bqhd", p, vv), rtol=1e-4, atol=1e-5)


def test_copy_permutes_and_copies_views(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(hal.ops.copy(h(x), perm=[2, 0, 1]).numpy(), x.transpose(2, 0, 1))
    t = h(x).transpose(0, 2)
    y = hal.ops.copy(t)
    assert y.is_contiguous and y.shape == (4, 3, 2)
    np.testing.assert_array_equal(y.numpy(), x.transpose(2, 1, 0))


def test_fill_random_is_a_function_of_the_seed():
    a = hal.ops.fill_random(shape=[1000], seed=7, a=-2.0, b=3.0).numpy()
    b = hal.ops.fill_random(shape=[1000], seed=7, a=-2.0, b=3.0).numpy()
    c = hal.ops.fill_random(shape=[1000], seed=8, a=-2.0, b=3.0).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.min() >= -2.0 and a.max() < 3.0 and abs(a.mean() - 0.5) < 0.2
    n = hal.ops.fill_random(shape=[4000], seed=1, distribution="normal", a=1.0, b=2.0).numpy()
    assert abs(n.mean() - 1.0) < 0.15 and abs(n.std() - 2.0) < 0.15
    out = hal.zeros((5, 6), dtype="f64")
    assert hal.ops.fill_random(out=out, seed=3) is not None and out.numpy().std() > 0


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True)])
def test_gemm(trans_a, trans_b, rng):
    m, k, n = 5, 7, 6
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    y = hal.ops.gemm(h(a), h(b), bias=h(bias), trans_a=trans_a, trans_b=trans_b, alpha=0.5, activation="relu")
    a64 = a.T if trans_a else a
    b64 = b.T if trans_b else b
    want = np.maximum(0.5 * a64.astype(np.float64) @ b64 + bias, 0)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)


def test_gemm_accumulates_into_c_and_batches(rng):
    a = rng.standard_normal((3, 4, 5))
    b = rng.standard_normal((5, 2))
    c0 = rng.standard_normal((3, 4, 2))
    c = h(c0)
    y = hal.ops.gemm(h(a), h(b), c, beta=2.0)
    assert y.data_ptr == c.data_ptr  # c is the output
    np.testing.assert_allclose(c.numpy(), a @ b + 2 * c0, rtol=1e-12)


def test_gemm_out_is_c_and_keeps_its_contents_for_beta(rng):
    a, b, c0 = rng.standard_normal((4, 5)), rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    out = h(c0)
    assert hal.ops.gemm(h(a), h(b), out=out, beta=2.0).data_ptr == out.data_ptr
    np.testing.assert_allclose(out.numpy(), a @ b + 2 * c0, rtol=1e-12)
    with pytest.raises(hal.InvalidArgument, match="give c or out=, not both"):
        hal.ops.gemm(h(a), h(b), h(c0), out=out)


def test_fill_random_into_out_takes_its_shape_and_dtype():
    out = hal.zeros(())
    assert hal.ops.fill_random(out=out, shape=[7], dtype="f64", seed=1).data_ptr == out.data_ptr
    assert out.shape == () and out.dtype == hal.f32 and out.numpy() != 0


def test_out_is_written_and_returned(rng):
    x = rng.standard_normal((4, 4)).astype(np.float32)
    out = hal.zeros((4, 4))
    y = hal.ops.exp(h(x), out=out)
    assert y.data_ptr == out.data_ptr
    np.testing.assert_allclose(out.numpy(), np.exp(x.astype(np.float64)), rtol=2e-5)
    # A NumPy out= is viewed through DLPack and written in place.
    host = np.zeros((4, 4), dtype=np.float32)
    hal.ops.neg(h(x), out=host)
    np.testing.assert_array_equal(host, -x)


def test_inputs_may_be_array_likes_and_strided_views(rng):
    x = rng.standard_normal((6, 8)).astype(np.float32)
    np.testing.assert_array_equal(hal.ops.abs(x[:, ::2]).numpy(), np.abs(x[:, ::2]))
    view = hal.from_dlpack(x[::2, 1::3])
    np.testing.assert_array_equal(hal.ops.neg(view).numpy(), -x[::2, 1::3])
    np.testing.assert_array_equal(hal.ops.add([1.0, 2.0], [3.0, 4.0]).numpy(), [4.0, 6.0])


FP8_OPS = {"quantize_fp8", "dequantize_fp8", "gemm_fp8", "gemm_fp8_grouped"}
COVERED |= FP8_OPS


def quantized(x, block):
    y, scales = hal.ops.quantize_fp8(h(x), block=block)
    return y, scales


def test_quantize_dequantize_fp8_round_trip(rng):
    x = rng.standard_normal((4, 256)).astype(np.float32)
    y, scales = quantized(x, "1x128")
    assert y.dtype == hal.f8e4m3 and y.shape == (4, 256) and scales.shape == (4, 2) and scales.dtype == hal.f32
    s = scales.numpy()
    np.testing.assert_allclose(s, np.abs(x).reshape(4, 2, 128).max(-1) / 448, rtol=1e-6)  # amax -> 448
    back = hal.ops.dequantize_fp8(y, scales, block="1x128").numpy()
    np.testing.assert_allclose(back, x, rtol=2**-4, atol=2**-9 * np.repeat(s, 128, axis=1).max())
    out = (hal.empty((4, 256), dtype="f8e5m2"), hal.empty((4, 2)))
    y2, s2 = hal.ops.quantize_fp8(h(x), format="f8e5m2", out=out)
    assert y2.data_ptr == out[0].data_ptr and s2.data_ptr == out[1].data_ptr and y2.dtype == hal.f8e5m2


def test_gemm_fp8_against_the_dequantized_product(rng):
    a = rng.standard_normal((4, 256)).astype(np.float32)
    b = rng.standard_normal((128, 256)).astype(np.float32)
    ya, sa = quantized(a, "1x128")
    yb, sb = quantized(b, "128x128")
    da = hal.ops.dequantize_fp8(ya, sa, block="1x128").numpy().astype(np.float64)
    db = hal.ops.dequantize_fp8(yb, sb, block="128x128").numpy().astype(np.float64)
    c = hal.ops.gemm_fp8(ya, sa, yb, sb, dtype="f32")
    assert c.shape == (4, 128) and c.dtype == hal.f32
    want = da @ db.T
    np.testing.assert_allclose(c.numpy(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_gemm_fp8_grouped_uses_each_groups_rows(rng):
    a = rng.standard_normal((5, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)  # two experts of [128, 256]
    ya, sa = quantized(a, "1x128")
    yb, sb = quantized(b, "128x128")
    db = hal.ops.dequantize_fp8(yb, sb, block="128x128").numpy().astype(np.float64).reshape(2, 128, 256)
    da = hal.ops.dequantize_fp8(ya, sa, block="1x128").numpy().astype(np.float64)
    b3 = hal.asarray(yb.numpy().reshape(2, 128, 256), dtype="f8e4m3")  # exact: the values are fp8
    s3 = hal.asarray(sb.numpy().reshape(2, 1, 2))
    offsets = np.array([0, 2, 5])
    c = hal.ops.gemm_fp8_grouped(ya, sa, b3, s3, offsets, dtype="f32").numpy()
    want = np.concatenate([da[:2] @ db[0].T, da[2:] @ db[1].T])
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())




def test_attention_writes_a_given_output(rng):
    q = rng.standard_normal((1, 3, 2, 8)).astype(np.float32)
    want = hal.ops.attention(h(q), h(q), h(q), causal=True).numpy()
    out, named = hal.zeros((1, 3, 2, 8)), hal.zeros((1, 3, 2, 8))
    assert hal.ops.attention(h(q), h(q), h(q), causal=True, out=out).data_ptr == out.data_ptr
    assert hal.ops.attention(h(q), h(q), h(q), causal=True, y=named).data_ptr == named.data_ptr
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(named.numpy(), want)
