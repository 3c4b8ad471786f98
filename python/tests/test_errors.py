"""hal::Error becomes a hal.Error subclass with hal's code and message."""
import numpy as np
import pytest

import hal


def test_invalid_argument_names_op_argument_and_shapes():
    x, w = hal.zeros((4, 7)), hal.zeros((8,))
    with pytest.raises(hal.InvalidArgument) as e:
        hal.ops.rmsnorm(x, w)
    err = e.value
    assert isinstance(err, hal.Error) and isinstance(err, ValueError)
    assert err.code == "invalid_argument"
    assert "rmsnorm" in err.message and "weight" in err.message and "[8]" in err.message
    assert str(err) == err.message


def test_nothing_is_written_to_out_on_error():
    out = hal.asarray(np.full((2, 3), 5.0, dtype=np.float32))
    with pytest.raises(hal.InvalidArgument, match="add"):
        hal.ops.add(hal.zeros((2, 3)), hal.zeros((2, 4)), out=out)
    with pytest.raises(hal.InvalidArgument):
        hal.ops.exp(hal.zeros((2, 3), dtype="f16"), out=out)  # dtype mismatch
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 5.0))


def test_bad_options_and_arguments():
    with pytest.raises(hal.InvalidArgument, match="style"):
        hal.ops.rope(hal.zeros((1, 2, 1, 4)), hal.zeros((2,), dtype="i32"), style="sideways")
    with pytest.raises(hal.InvalidArgument, match="axis"):
        hal.ops.sum(hal.zeros((2, 3)), axis=5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'scale'"):
        hal.ops.exp(hal.zeros((2,)), scale=2.0)
    with pytest.raises(TypeError, match="missing input 'b'"):
        hal.ops.add(hal.zeros((2,)))
    with pytest.raises(hal.InvalidArgument, match="dtype"):
        hal.zeros((2,), dtype="complex128")


def test_unknown_device_and_unsupported():
    with pytest.raises(hal.Error) as e:
        hal.device("tpu:3")
    assert e.value.code in ("invalid_argument", "unsupported")
    # A valid call the CPU declines is an Unsupported with code 'unsupported'.
    assert issubclass(hal.Unsupported, hal.Error) and issubclass(hal.OutOfMemory, MemoryError)
    assert issubclass(hal.IoError, OSError) and issubclass(hal.DeviceError, hal.Error)
