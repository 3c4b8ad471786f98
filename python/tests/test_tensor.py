"""hal.Tensor: shape, strides, dtype, device, views, numpy() and hal.asarray."""
import numpy as np
import pytest

import hal


def test_asarray_keeps_numpy_dtypes_and_values(rng):
    for dt, want in [(np.float32, hal.f32), (np.float64, hal.f64), (np.float16, hal.f16), (np.int32, hal.i32),
                     (np.int64, hal.i64), (np.int8, hal.i8), (np.bool_, hal.bool)]:
        a = (rng.standard_normal((3, 4)) * 10).astype(dt)
        t = hal.asarray(a)
        assert t.dtype == want and t.shape == (3, 4) and t.strides == (4, 1) and t.device == hal.device("cpu")
        back = t.numpy()
        assert back.dtype == a.dtype
        np.testing.assert_array_equal(back, a)
        assert back.ctypes.data != t.data_ptr  # numpy() is a copy


def test_asarray_rounds_to_bf16_and_saturates_fp8():
    x = np.array([1.0, 1.00390625, 1.01171875, -3.3, 1e30], dtype=np.float32)
    b = hal.asarray(x, dtype="bf16")
    assert b.dtype == hal.bf16
    # RNE to 8 mantissa bits: 1+2^-8 ties to 1.0, 1+3*2^-8 ties up to 1+2^-6.
    np.testing.assert_array_equal(b.numpy()[:3], [1.0, 1.0, 1.015625])
    f8 = hal.asarray([1000.0, -1e6, 0.5, 3.0], dtype=hal.f8e4m3).numpy()
    np.testing.assert_array_equal(f8, [448.0, -448.0, 0.5, 3.0])
    assert hal.asarray(hal.asarray(x), dtype="f16").numpy().dtype == np.float16


def test_views_share_memory(rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = hal.asarray(a)
    p = t.permute(2, 0, 1)
    assert p.shape == (4, 2, 3) and p.strides == (1, 12, 4) and p.data_ptr == t.data_ptr and not p.is_contiguous
    np.testing.assert_array_equal(p.numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.T.numpy(), a.swapaxes(-2, -1))
    np.testing.assert_array_equal(t.transpose(0, 2).numpy(), a.swapaxes(0, 2))
    with pytest.raises(hal.InvalidArgument):
        t.permute(0, 0, 1)
    assert "f32[2, 3, 4]" in repr(t) and len(t) == 2 and t.ndim == 3 and t.size == 24


def test_empty_and_zeros():
    z = hal.zeros((2, 5), dtype="bf16")
    assert z.dtype == hal.bf16 and (z.numpy() == 0).all()
    e = hal.empty([3], dtype=np.int64)
    assert e.dtype == hal.i64 and e.shape == (3,)
    with pytest.raises(hal.InvalidArgument, match="non-negative"):
        hal.zeros((2, -1))
    with pytest.raises(hal.InvalidArgument, match="uint8"):
        hal.asarray(np.zeros(2, dtype=np.uint8))
