"""Ops release the GIL: other threads run Python while an op runs, and many
threads may call ops at once."""
import threading
import time

import numpy as np

import hal


def test_python_runs_while_an_op_runs():
    # An f64 GEMM long enough that its middle third is far from the call's edges.
    n = 384
    a = hal.asarray(np.ones((n, n)))
    hal.ops.gemm(a, a)  # warm up
    window = {}

    def worker():
        window["t0"] = time.perf_counter()
        for _ in range(3):
            hal.ops.gemm(a, a)
        window["t1"] = time.perf_counter()

    t = threading.Thread(target=worker)
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
    t.join()
    t0, t1 = window["t0"], window["t1"]
    third = (t1 - t0) / 3
    inside = [x for x in ticks if t0 + third < x < t1 - third]
    # With the GIL held through the op, this thread could not run at all then.
    assert len(inside) > 10, (len(ticks), t1 - t0)


def test_threads_calling_ops_get_their_own_answers():
    errors, results = [], {}

    def worker(i):
        try:
            x = hal.asarray(np.full((64, 64), float(i), dtype=np.float32))
            for _ in range(20):
                y = hal.ops.add(x, x)
            results[i] = y.numpy()
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    busy = 0
    while any(t.is_alive() for t in threads):
        busy += 1  # this thread holds the GIL in between
    for t in threads:
        t.join()
    assert not errors
    for i in range(6):
        np.testing.assert_array_equal(results[i], np.full((64, 64), 2.0 * i))
