# The tests import the module from PYTHONPATH (ctest sets it to the build tree).
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
