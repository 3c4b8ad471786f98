"""The training ops of hal.ops (hal/op_training.h) on the CPU against
torch.autograd in float64 (Debian's python3-torch) or NumPy. f32 results are
checked to rtol 1e-4 / atol 1e-5 (fp32 compute, one rounding per output; the
contract's bounds are tighter than this for these sizes), f64 ones to 1e-10."""
import numpy as np
import pytest

import hal

from training_ops import TRAINING, UNARY_BACKWARD_OPS

torch = pytest.importorskip("torch")

F32 = dict(rtol=1e-4, atol=1e-5)
UNARY_BACKWARD = {
    "gelu_backward": torch.nn.functional.gelu,
    "gelu_tanh_backward": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "silu_backward": torch.nn.functional.silu,
    "relu_backward": torch.relu,
    "sigmoid_backward": torch.sigmoid,
    "tanh_backward": torch.tanh,
    "exp_backward": torch.exp,
}


def test_the_unary_backward_references_are_the_listed_ops():
    assert sorted(UNARY_BACKWARD) == sorted(UNARY_BACKWARD_OPS)


def h(a, dtype=None):
    return hal.asarray(a, dtype=dtype, device="cpu")


def grad_of(f, *xs, dy):
    """torch.autograd's gradients of sum(f(xs) * dy) in float64."""
    ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    y = f(*ts)
    (y * torch.tensor(dy, dtype=torch.float64)).sum().backward()
    return [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("op", sorted(UNARY_BACKWARD))
def test_unary_backward(op, rng):
    x = rng.standard_normal((3, 17)).astype(np.float32)
    dy = rng.standard_normal((3, 17)).astype(np.float32)
    dx = getattr(hal.ops, op)(h(x), h(dy))
    assert dx.shape == x.shape and dx.dtype == hal.f32
    (want,) = grad_of(UNARY_BACKWARD[op], x, dy=dy)
    np.testing.assert_allclose(dx.numpy(), want, **F32)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_softmax_backward(log, causal, rng):
    x = rng.standard_normal((2, 5, 7))
    dy = rng.standard_normal((2, 5, 7))
    fwd = hal.ops.log_softmax if log else hal.ops.softmax
    bwd = hal.ops.log_softmax_backward if log else hal.ops.softmax_backward
    y = fwd(h(x), scale=0.5, causal=causal)
    dx = bwd(y, h(dy), scale=0.5, causal=causal).numpy()

    def f(t):
        z = 0.5 * t
        if causal:
            mask = torch.arange(7)[None, :] > torch.arange(5)[:, None] + 2
            z = z.masked_fill(mask, float("-inf"))
        out = torch.log_softmax(z, -1) if log else torch.softmax(z, -1)
        return out.masked_fill(mask, 0.0) if causal else out  # masked entries: no gradient flows

    (want,) = grad_of(f, x, dy=dy)
    np.testing.assert_allclose(dx, want, rtol=1e-10, atol=1e-12)


def test_layernorm_backward_with_and_without_dbias(rng):
    x = rng.standard_normal((4, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    dy = rng.standard_normal((4, 16)).astype(np.float32)
    dx, dw, db = hal.ops.layernorm_backward(h(x), h(w), h(dy), eps=1e-3, dbias=True)
    want = grad_of(lambda x, w, b: torch.nn.functional.layer_norm(x, (16,), w, b, eps=1e-3), x, w, b, dy=dy)
    for got, ref in zip((dx, dw, db), want):
        np.testing.assert_allclose(got.numpy(), ref, **F32)
    pair = hal.ops.layernorm_backward(h(x), h(w), h(dy), eps=1e-3)  # dbias not asked for: two outputs
    assert len(pair) == 2
    np.testing.assert_array_equal(pair[0].numpy(), dx.numpy())


def test_rmsnorm_backward(rng):
    x = rng.standard_normal((3, 2, 8))
    w = rng.standard_normal(8)
    dy = rng.standard_normal((3, 2, 8))
    dx, dw = hal.ops.rmsnorm_backward(h(x), h(w), h(dy), eps=1e-6)

    def f(x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w

    want = grad_of(f, x, w, dy=dy)
    np.testing.assert_allclose(dx.numpy(), want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dw.numpy(), want[1], rtol=1e-10, atol=1e-12)


def test_named_outputs_and_out_tuple_are_written(rng):
    x = rng.standard_normal((4, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    dy = rng.standard_normal((4, 16)).astype(np.float32)
    ref = [t.numpy() for t in hal.ops.layernorm_backward(h(x), h(w), h(dy), dbias=True)]
    dx, dw, db = hal.zeros((4, 16)), hal.zeros(16), np.zeros(16, np.float32)
    got = hal.ops.layernorm_backward(h(x), h(w), h(dy), dx=dx, dweight=dw, dbias=db)
    assert got[0].data_ptr == dx.data_ptr and got[1].data_ptr == dw.data_ptr
    np.testing.assert_array_equal(dx.numpy(), ref[0])
    np.testing.assert_array_equal(dw.numpy(), ref[1])
    np.testing.assert_array_equal(db, ref[2])  # a NumPy array, written through DLPack
    dx2 = hal.zeros((4, 16))
    got = hal.ops.layernorm_backward(h(x), h(w), h(dy), out=(dx2, None))
    assert got[0].data_ptr == dx2.data_ptr and len(got) == 2
    np.testing.assert_array_equal(dx2.numpy(), ref[0])


def test_swiglu_backward(rng):
    g, u, dy = (rng.standard_normal((2, 3, 8)).astype(np.float32) for _ in range(3))
    dg, du = hal.ops.swiglu_backward(h(g), h(u), h(dy))
    want = grad_of(lambda g, u: torch.nn.functional.silu(g) * u, g, u, dy=dy)
    np.testing.assert_allclose(dg.numpy(), want[0], **F32)
    np.testing.assert_allclose(du.numpy(), want[1], **F32)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cross_entropy_and_dlogits(reduction, rng):
    logits = rng.standard_normal((6, 11))
    targets = np.array([1, 0, 10, -100, 5, 5])
    loss = hal.ops.cross_entropy(h(logits), targets, reduction=reduction, label_smoothing=0.1)
    loss2, dlogits = hal.ops.cross_entropy(h(logits), targets, reduction=reduction, label_smoothing=0.1,
                                           dlogits=True)
    t = torch.tensor(logits, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(t, torch.tensor(targets), reduction=reduction, label_smoothing=0.1)
    ref.sum().backward()
    assert loss.dtype == hal.f64 and loss.shape == tuple(ref.shape)
    # label_smoothing travels as an f32 (0.1 -> 0.1000000015): 1e-7, not 1e-10
    np.testing.assert_allclose(loss.numpy(), ref.detach().numpy(), rtol=1e-7)
    np.testing.assert_array_equal(loss2.numpy(), loss.numpy())
    np.testing.assert_allclose(dlogits.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_cross_entropy_refuses_a_target_out_of_range():
    with pytest.raises(hal.InvalidArgument, match="cross_entropy"):
        hal.ops.cross_entropy(h(np.zeros((2, 3), np.float32)), np.array([0, 3]))


def test_embedding_backward_accumulates_in_place(rng):
    ids = np.array([[3, 0], [3, 3]], dtype=np.int32)
    dy = rng.standard_normal((2, 2, 4)).astype(np.float32)
    start = rng.standard_normal((5, 4)).astype(np.float32)
    dtable = h(start)
    got = hal.ops.embedding_backward(h(ids), h(dy), dtable)
    assert got.data_ptr == dtable.data_ptr  # updated in place and returned
    want = start.astype(np.float64)
    np.add.at(want, ids.reshape(-1), dy.reshape(-1, 4))
    np.testing.assert_allclose(dtable.numpy(), want, **F32)
    fresh = hal.ops.embedding_backward(h(ids), h(dy), vocab=5).numpy()  # from zeros
    np.testing.assert_allclose(fresh, want - start, **F32)
    host = start.copy()  # a NumPy dtable is viewed and updated in place too
    hal.ops.embedding_backward(h(ids), h(dy), host)
    np.testing.assert_array_equal(host, dtable.numpy())


def test_embedding_backward_refuses_an_id_out_of_range_and_writes_nothing():
    dtable = np.ones((2, 3), np.float32)
    with pytest.raises(hal.InvalidArgument, match="embedding_backward"):
        hal.ops.embedding_backward(np.array([0, 2], np.int32), np.ones((2, 3), np.float32), dtable)
    np.testing.assert_array_equal(dtable, 1.0)


def test_rope_backward_is_the_transpose_of_rope(rng):
    dy = rng.standard_normal((2, 5, 3, 8))
    pos = np.array([[0, 1, 2, 3, 4], [7, 9, 11, 100, 1000]])  # i64: converted to i32 by the builder
    for style in ("neox", "gptj"):
        dx = hal.ops.rope_backward(h(dy), pos, style=style).numpy()
        x = rng.standard_normal((2, 5, 3, 8))
        y = hal.ops.rope(h(x), pos, style=style).numpy()
        # <rope(x), dy> == <x, rope_backward(dy)> for a rotation's transpose
        np.testing.assert_allclose((y * dy).sum(), (x * dx).sum(), rtol=1e-10)
        np.testing.assert_allclose(hal.ops.rope(h(dx), pos, style=style).numpy(), dy, rtol=1e-10, atol=1e-12)
    with pytest.raises(hal.InvalidArgument, match="int32"):
        hal.ops.rope_backward(h(dy), pos + 2**40)


def test_adamw_step_updates_param_m_v_in_place_like_torch(rng):
    p0 = rng.standard_normal(10).astype(np.float32)
    grads = [rng.standard_normal(10).astype(np.float32) for _ in range(3)]
    param, m, v = h(p0), hal.zeros(10), hal.zeros(10)
    tp = torch.tensor(p0.astype(np.float64), requires_grad=True)
    opt = torch.optim.AdamW([tp], lr=0.01, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
    for step, g in enumerate(grads, start=1):
        out = hal.ops.adamw_step(param, h(g), m, v, lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1, step=step)
        assert [t.data_ptr for t in out] == [param.data_ptr, m.data_ptr, v.data_ptr]
        tp.grad = torch.tensor(g.astype(np.float64))
        opt.step()
    np.testing.assert_allclose(param.numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.numpy(), opt.state[tp]["exp_avg"].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(v.numpy(), opt.state[tp]["exp_avg_sq"].numpy(), rtol=1e-5, atol=1e-9)


def test_adamw_step_with_master_and_refusals(rng):
    p0 = rng.standard_normal(8).astype(np.float32)
    g = rng.standard_normal(8).astype(np.float32)
    master, m, v = h(p0), hal.zeros(8), hal.zeros(8)
    param = h(p0, dtype=hal.bf16)
    out = hal.ops.adamw_step(param, h(g, dtype=hal.bf16), m, v, master=master, lr=0.1)
    assert len(out) == 4 and out[3].data_ptr == master.data_ptr
    np.testing.assert_array_equal(param.numpy(), hal.ops.cast(master, dtype=hal.bf16).numpy())
    assert not np.array_equal(master.numpy(), p0)
    with pytest.raises(TypeError, match="in place"):
        hal.ops.adamw_step(h(p0), h(g), m, v, out=(m, v))
    with pytest.raises(TypeError, match="not a <class 'list'>"):
        hal.ops.adamw_step(h(p0), h(g), [0.0] * 8, v)  # a copy would not be updated
    with pytest.raises(hal.InvalidArgument, match="updated in place"):
        hal.ops.adamw_step(h(p0), h(g), h(np.zeros(8)), v)  # f64 m for an f32 param
    np.testing.assert_array_equal(v.numpy(), out[2].numpy())  # nothing written by the refusals


def test_global_norm(rng):
    xs = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (7,), (2, 2, 2)]]
    y = hal.ops.global_norm(*[h(x) for x in xs])
    assert y.shape == () and y.dtype == hal.f32
    want = np.sqrt(sum((x.astype(np.float64) ** 2).sum() for x in xs))
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)


def test_training_op_argument_errors(rng):
    x = h(rng.standard_normal((2, 4)).astype(np.float32))
    with pytest.raises(TypeError, match="missing input 'dy'"):
        hal.ops.silu_backward(x)
    with pytest.raises(TypeError, match="outputs: dx, dweight, dbias"):
        hal.ops.layernorm_backward(x, h(np.ones(4, np.float32)), x, dgamma=True)
    with pytest.raises(TypeError, match="out= is a tuple"):
        hal.ops.swiglu_backward(x, x, x, out=hal.zeros((2, 4)))
    with pytest.raises(TypeError, match="twice"):
        hal.ops.swiglu_backward(x, x, x, out=(hal.zeros((2, 4)), None), dgate=hal.zeros((2, 4)))
    with pytest.raises(hal.InvalidArgument, match="silu_backward"):
        hal.ops.silu_backward(x, h(np.zeros((2, 5), np.float32)))
    dx = hal.zeros((2, 5))
    with pytest.raises(hal.InvalidArgument, match="dx"):
        hal.ops.silu_backward(x, x, out=dx)  # a given output of the wrong shape
    with pytest.raises(hal.Error, match="reduction"):
        hal.ops.cross_entropy(x, np.array([0, 1]), reduction="avg")


@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward_from_the_forwards_lse(causal, rng):
    # q [b, sq, hq, d], k/v [b, sk, hkv, d]: grouped-query (hq = 2 hkv) and sq != sk,
    # the causal mask aligned to the last key as in the forward.
    b, sq, sk, hq, hkv, d = 1, 5, 7, 4, 2, 8
    q = rng.standard_normal((b, sq, hq, d))
    k = rng.standard_normal((b, sk, hkv, d))
    v = rng.standard_normal((b, sk, hkv, d))
    dy = rng.standard_normal((b, sq, hq, d))
    # scale is an f32 option: 0.25 is exact, where the default 1/sqrt(d) would round.
    y, lse = hal.ops.attention(h(q), h(k), h(v), scale=0.25, causal=causal, lse=True)
    assert lse.shape == (b, sq, hq)
    dq, dk, dv = hal.ops.attention_backward(h(q), h(k), h(v), y, h(dy), lse, scale=0.25, causal=causal)

    def f(tq, tk, tv):
        rep = hq // hkv
        kk = tk.repeat_interleave(rep, dim=2).permute(0, 2, 1, 3)  # [b, hq, sk, d]
        vv = tv.repeat_interleave(rep, dim=2).permute(0, 2, 1, 3)
        s = 0.25 * (tq.permute(0, 2, 1, 3) @ kk.transpose(-1, -2))
        if causal:
            mask = torch.arange(sk)[None, :] > torch.arange(sq)[:, None] + (sk - sq)
            s = s.masked_fill(mask, float("-inf"))
        return (torch.softmax(s, -1) @ vv).permute(0, 2, 1, 3)

    want = grad_of(f, q, k, v, dy=dy)
    for got, ref in zip((dq, dk, dv), want):
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-10, atol=1e-12)
