"""GPU paths: device memory through DLPack and the stream handshake. Skipped
without a GPU (the CPU build has no CUDA or HIP device to run them on)."""
import numpy as np
import pytest

import hal

GPUS = [d for d in hal.devices() if not d.host_accessible]


@pytest.mark.skipif(not GPUS, reason="no GPU device (hal.devices() has only host-accessible devices)")
@pytest.mark.parametrize("dev", GPUS, ids=lambda d: d.name)
def test_gpu_tensor_through_dlpack(dev):
    x = hal.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=dev)
    kind = 2 if dev.backend == "cuda" else 10
    assert x.__dlpack_device__() == (kind, dev.info["index"])
    consumer = hal.Stream(dev)
    cap = x.T.__dlpack__(stream=consumer.native_handle)  # the consumer's stream waits on hal's
    y = hal.from_dlpack(cap)
    assert y.device == dev and y.data_ptr == x.data_ptr and y.strides == (1, 4)
    np.testing.assert_array_equal(y.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)
    with pytest.raises(Exception):
        np.from_dlpack(x)  # NumPy takes host memory only
    np.testing.assert_array_equal(hal.ops.neg(x).numpy(), -x.numpy())
