"""Devices, streams, events and synchronisation."""
import numpy as np

import hal


def test_devices_start_with_the_cpu():
    devs = hal.devices()
    assert devs[0].name == "cpu" and devs[0] == hal.device("cpu")
    assert hal.device("cpu").host_accessible and hal.device("cpu").info["compute_units"] >= 1
    assert any(b["name"] == "cpu" and b["available"] for b in hal.backends())
    assert hal.default_device() == hal.device("cpu")  # HAL_DEVICE=cpu in ctest
    # The CPU names the GEMM kernels it chose at run time (which ones depends on the machine).
    kernels = hal.device("cpu").info["kernels"]
    assert set(kernels) >= {"gemm f32", "gemm bf16", "gemm_fp8"} and all(kernels.values())


def test_streams_and_events_order_work():
    cpu = hal.device("cpu")
    s = hal.Stream(cpu)
    assert s.device == cpu and s.native_handle == 0
    start, end = hal.Event(cpu), hal.Event(cpu)
    s.record(start)
    y = hal.ops.exp(hal.asarray(np.zeros(1000, dtype=np.float32)), stream=s)
    s.record(end)
    s.wait(end)
    end.synchronize()
    s.synchronize()
    hal.synchronize()
    hal.synchronize("cpu")
    assert end.elapsed_ms_since(start) >= 0
    np.testing.assert_array_equal(y.numpy(), np.ones(1000))
    assert hal.default_stream(cpu).device == cpu
