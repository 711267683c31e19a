"""Golden files: the generated source of a few functions, byte for byte.

On a mismatch the test prints the diff. To accept new output after an intended change, run:

    S2SGRAD_UPDATE_GOLDEN=1 python -m pytest tests/write/test_golden.py
"""

import difflib
import os
from pathlib import Path

import pytest

import golden_inputs
import s2sgrad

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "mlp_loss": dict(argnums=(0, 1, 2)),
    "uses_helper": dict(argnums=(0, 1)),
    "uses_looped_helper": dict(argnums=(0, 1)),
    "rosenbrock": dict(argnums=0),
    "log1pexp": dict(argnums=0),
    "rnn_loss": dict(argnums=(0, 1)),
}


# Forward mode (jvp), as grad runs it for one float argument.
FORWARD = {
    "rosenbrock": dict(argnums=0),
    "uses_helper": dict(argnums=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden(name):
    fn = getattr(golden_inputs, name)
    _compare(s2sgrad.source(s2sgrad.grad(fn, **CASES[name])), GOLDEN / f"{name}_grad.py")


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_generated_forward_source_matches_golden(name):
    fn = getattr(golden_inputs, name)
    _compare(s2sgrad.source(s2sgrad.grad(fn, **FORWARD[name]), mode="fwd"),
             GOLDEN / f"{name}_jvp.py")


def _compare(text, path):
    if os.environ.get("S2SGRAD_UPDATE_GOLDEN"):
        path.write_text(text)
    expected = path.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            str(path), "generated"))
        pytest.fail(f"generated source differs from {path}:\n{diff}\n"
                    "If the change is intended: S2SGRAD_UPDATE_GOLDEN=1 python -m pytest "
                    "tests/write/test_golden.py")
