"""The README's Python examples (the three-line NumPy and PyTorch ones of "From
Python") run as they are written, and give what they claim."""
import pathlib
import re

import numpy as np
import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def python_blocks():
    text = README.read_text()
    section = text[text.index("### From Python"):]
    section = section[: section.index("\n## ")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_has_a_numpy_and_a_torch_example_of_three_lines():
    blocks = python_blocks()
    assert len(blocks) == 2
    assert "numpy" in blocks[0] and "torch" in blocks[1]
    assert [len(b.strip().splitlines()) for b in blocks] == [3, 3]


def test_the_numpy_example_runs():
    env = {}
    exec(python_blocks()[0], env)
    x = env["x"].numpy().astype(np.float64) * 0.125
    mask = np.arange(64)[None, :] > np.arange(4)[:, None] + 60
    z = np.where(mask, -np.inf, x)
    want = np.exp(z - z.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    assert isinstance(env["y"], np.ndarray)
    np.testing.assert_allclose(env["y"], want, rtol=2e-5, atol=2e-6)


def test_the_torch_example_runs():
    torch = pytest.importorskip("torch")
    env = {}
    exec(python_blocks()[1], env)
    q = env["q"]
    qh = q.double().transpose(1, 2)  # [b, h, s, d]
    s = qh @ qh.transpose(-1, -2) / 8.0
    s = s.masked_fill(torch.ones(8, 8, dtype=torch.bool).triu(1), float("-inf"))
    ref = (torch.softmax(s, -1) @ qh).transpose(1, 2)
    assert isinstance(env["out"], torch.Tensor) and env["out"].shape == (1, 8, 4, 64)
    np.testing.assert_allclose(env["out"].numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
