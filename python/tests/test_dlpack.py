"""DLPack both ways with NumPy and PyTorch: zero-copy, strides, lifetime, refusals."""
import gc
import sys
import weakref

import numpy as np
import pytest
import torch

import hal


def test_numpy_into_hal_is_a_view(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    t = hal.from_dlpack(a)
    assert t.shape == (3, 4) and t.strides == (4, 1) and t.dtype == hal.f32
    assert t.data_ptr == a.ctypes.data
    hal.ops.neg(hal.asarray(a), out=t)  # writes through the view
    assert np.array_equal(a, -a.copy() * -1) and t.numpy()[0, 0] == a[0, 0]


@pytest.mark.parametrize("index", [np.s_[:, ::2], np.s_[1:, 1::3], np.s_[::2, :]])
def test_strided_numpy_views_keep_their_strides(index, rng):
    a = rng.standard_normal((5, 7)).astype(np.float32)
    v = a[index]
    t = hal.from_dlpack(v)
    assert t.strides == tuple(s // 4 for s in v.strides)
    np.testing.assert_array_equal(t.numpy(), v)
    np.testing.assert_allclose(hal.ops.exp(t).numpy(), np.exp(v.astype(np.float64)), rtol=2e-5)


def test_transposed_and_zero_size(rng):
    a = rng.standard_normal((3, 5))
    t = hal.from_dlpack(a.T)
    assert t.shape == (5, 3) and t.strides == (1, 5)
    np.testing.assert_array_equal(t.numpy(), a.T)
    z = hal.from_dlpack(np.zeros((0, 4), dtype=np.float32))
    assert z.shape == (0, 4) and z.size == 0 and z.numpy().shape == (0, 4)
    back = np.from_dlpack(hal.zeros((2, 0, 3)))
    assert back.shape == (2, 0, 3)


def test_hal_into_numpy_is_a_view_with_strides(rng):
    x = hal.asarray(rng.standard_normal((4, 6)).astype(np.float32))
    v = np.from_dlpack(x.T)
    assert v.shape == (6, 4) and v.strides == (4, 24)
    assert v.ctypes.data == x.data_ptr
    hal.ops.relu(hal.asarray(x.numpy()), out=x)  # visible through the NumPy view
    assert (v >= 0).all()
    np.testing.assert_array_equal(v, x.numpy().T)


def test_source_freed_before_the_view(rng):
    a = rng.standard_normal(1000).astype(np.float32)
    expected = a.copy()
    ref = weakref.ref(a) if hasattr(a, "__weakref__") else None
    t = hal.from_dlpack(a)
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), expected)  # the producer is kept alive
    if ref is not None:
        assert ref() is not None
    del t
    gc.collect()
    if ref is not None:
        assert ref() is None  # and released with the last view


def test_view_freed_before_the_source(rng):
    a = rng.standard_normal(10).astype(np.float32)
    before = sys.getrefcount(a)
    t = hal.from_dlpack(a)
    assert sys.getrefcount(a) > before
    del t
    gc.collect()
    assert sys.getrefcount(a) == before
    # hal memory viewed by NumPy outlives the hal tensor object.
    x = hal.asarray(np.arange(5, dtype=np.float32))
    v = np.from_dlpack(x)
    del x
    gc.collect()
    np.testing.assert_array_equal(v, np.arange(5, dtype=np.float32))


def test_torch_round_trips_with_strides(rng):
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    for view in (t, t.T, t[:, ::2], t[1:3]):
        h = hal.from_dlpack(view)
        assert h.shape == tuple(view.shape) and h.strides == view.stride()
        np.testing.assert_array_equal(h.numpy(), view.numpy())
        back = torch.utils.dlpack.from_dlpack(h)
        assert back.stride() == view.stride() and back.data_ptr() == view.data_ptr()
        assert torch.equal(back, view)
    x = hal.asarray(rng.standard_normal((3, 5)).astype(np.float32))
    tt = torch.utils.dlpack.from_dlpack(x.T)
    assert tt.shape == (5, 3) and tt.stride() == (1, 5)
    np.testing.assert_array_equal(tt.numpy(), x.numpy().T)


def test_torch_lifetime_both_ways():
    t = torch.arange(8, dtype=torch.float32) * 1.5
    h = hal.from_dlpack(t)
    del t
    gc.collect()
    np.testing.assert_array_equal(h.numpy(), np.arange(8, dtype=np.float32) * 1.5)
    x = hal.asarray(np.ones(6, dtype=np.float32))
    tt = torch.utils.dlpack.from_dlpack(x)
    del x
    gc.collect()
    assert torch.equal(tt, torch.ones(6))
    assert hal.from_dlpack(torch.zeros(0, 3)).shape == (0, 3)


def test_bf16_uses_dlpacks_bfloat_code():
    t = torch.tensor([1.0, -2.5, 3.140625, 1e-3], dtype=torch.bfloat16)
    h = hal.from_dlpack(t)
    assert h.dtype == hal.bf16
    np.testing.assert_array_equal(h.numpy(), t.float().numpy())
    y = hal.ops.mul(h, h)
    back = torch.utils.dlpack.from_dlpack(y)
    assert back.dtype == torch.bfloat16 and torch.equal(back, t * t)


def test_fp8_is_refused_for_a_legacy_consumer_and_travels_with_dlpack_1_1():
    x = hal.asarray([1.0, -448.0, 0.5], dtype="f8e4m3")
    with pytest.raises(hal.Unsupported, match="fp8 needs DLPack >= 1.1"):
        np.from_dlpack(x)
    with pytest.raises(hal.Unsupported, match="f8e5m2"):
        torch.utils.dlpack.from_dlpack(hal.asarray([2.0], dtype="f8e5m2"))
    cap = x.__dlpack__(max_version=(1, 1))
    assert "dltensor_versioned" in repr(cap)
    y = hal.from_dlpack(cap)
    assert y.dtype == hal.f8e4m3 and y.data_ptr == x.data_ptr
    np.testing.assert_array_equal(y.numpy(), [1.0, -448.0, 0.5])
    with pytest.raises(hal.Unsupported):
        x.__dlpack__(max_version=(1, 0))  # 1.0 has no fp8 codes


def test_refusals():
    with pytest.raises(hal.InvalidArgument, match="uint8"):
        hal.from_dlpack(np.zeros(3, dtype=np.uint8))
    with pytest.raises(hal.InvalidArgument, match="non-negative strides"):
        hal.from_dlpack(np.arange(4.0)[::-1])
    with pytest.raises(hal.InvalidArgument, match="complex64"):
        hal.from_dlpack(np.zeros(2, dtype=np.complex64))
    with pytest.raises(BufferError, match="stream must be None"):
        hal.zeros((2,)).__dlpack__(stream=1)
    with pytest.raises(BufferError, match="copy=True"):
        hal.zeros((2,)).__dlpack__(copy=True)
    with pytest.raises(hal.InvalidArgument):
        hal.from_dlpack(object())
    cap = hal.zeros((2,)).__dlpack__()
    hal.from_dlpack(cap)
    with pytest.raises(hal.InvalidArgument):
        hal.from_dlpack(cap)  # a capsule is consumed once


def test_dlpack_device():
    assert hal.zeros((1,)).__dlpack_device__() == (1, 0)


# ---- the stream handshake: host-side logic (the vendor calls need a GPU: test_gpu.py) ----

CPU, CUDA, ROCM = 1, 2, 10


@pytest.mark.parametrize("device_type,stream,want", [
    (CUDA, None, 1),        # the legacy default stream (CU_STREAM_LEGACY)
    (CUDA, 1, 1),
    (CUDA, 2, 2),           # the per-thread default stream
    (CUDA, 0x7f00aa00, 0x7f00aa00),
    (CUDA, -1, None),       # -1: the consumer asks for no ordering
    (ROCM, None, 0),        # HIP's null stream
    (ROCM, 0, 0),
    (ROCM, 0x5500, 0x5500),
    (ROCM, -1, None),
    (CPU, None, "host"),    # waits on the host for the tensor's last writer
    (CPU, -1, None),
])
def test_consumer_stream_interpretation(device_type, stream, want):
    assert hal._testing.consumer_ordering(device_type, stream) == want


@pytest.mark.parametrize("device_type,stream,match", [
    (CUDA, 0, "ambiguous"), (CUDA, -2, "not a stream"), (ROCM, 1, "CUDA's"), (ROCM, 2, "CUDA's"),
    (ROCM, -5, "not a stream"), (CPU, 1, "None or -1"), (CPU, 0, "None or -1")])
def test_consumer_stream_refusals(device_type, stream, match):
    with pytest.raises(BufferError, match=match):
        hal._testing.consumer_ordering(device_type, stream)


def test_consumer_stream_must_be_an_integer():
    with pytest.raises(TypeError, match="integer or None"):
        hal._testing.consumer_ordering(CUDA, "1")
    with pytest.raises(TypeError, match="integer or None"):
        hal.zeros((2,)).__dlpack__(stream=True)
    cap = hal.zeros((2,)).__dlpack__(stream=-1)  # no ordering asked for: still exported
    assert hal.from_dlpack(cap).shape == (2,)


def test_the_last_writers_stream_is_recorded_and_shared_by_views(rng):
    x = hal.asarray(rng.standard_normal((3, 4)).astype(np.float32), device="cpu")
    assert x.stream is None  # nothing queued by an op yet: the default stream orders it
    s1, s2 = hal.Stream("cpu"), hal.Stream("cpu")
    y = hal.ops.neg(x, stream=s1)
    assert y.stream is s1 and y.T.stream is s1
    hal.ops.exp(x, out=y, stream=s2)  # a later write on another stream
    assert y.stream is s2 and y.T.stream is s2
    back = hal.from_dlpack(y.T.__dlpack__())  # hal's own capsule keeps the record
    assert back.stream is s2
    assert hal.ops.neg(x).stream is hal.default_stream("cpu")
    p, m, v = hal.zeros(4), hal.zeros(4), hal.zeros(4)
    hal.ops.adamw_step(p, hal.asarray(np.ones(4, np.float32)), m, v, stream=s1)  # in place: recorded too
    assert p.stream is s1 and m.stream is s1 and v.stream is s1
    np.testing.assert_allclose(np.from_dlpack(y), np.exp(x.numpy().astype(np.float64)), rtol=2e-7)
