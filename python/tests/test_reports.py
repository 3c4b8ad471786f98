"""hal.conformance.run and hal.bench.run return the JSON reports as Python objects."""
import pytest

import hal


def test_conformance_run_returns_case_results():
    results = hal.conformance.run(device="cpu", op="swiglu", dtype="f32")
    assert isinstance(results, list) and results
    for r in results:
        assert r["op"] == "swiglu" and r["dtype"] == "f32" and r["device"] == "cpu"
        assert r["status"] == "passed", r


def test_conformance_run_refuses_a_filter_matching_nothing():
    with pytest.raises(hal.InvalidArgument, match="nothing ran"):
        hal.conformance.run(device="cpu", op="no_such_op")


def test_bench_run_returns_the_report():
    report = hal.bench.run(device="cpu", op="add", dtype="f32", shape="256x256", quick=True, vendor=False)
    assert isinstance(report, dict) and report["device"] == "cpu"
    assert report["results"], report
    for r in report["results"]:
        assert r["op"] == "add" and r["dtype"] == "f32" and "error" not in r, r
        assert r["hal"]["median_ms"] > 0
