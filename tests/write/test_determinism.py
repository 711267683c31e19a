"""Determinism: the same input gives byte-identical generated code in processes with different hash seeds."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
sys.path.insert(0, "tests/inputs")
import golden_inputs, s2sgrad
for name in ("mlp_loss", "uses_helper", "rosenbrock"):
    sys.stdout.write(s2sgrad.source(s2sgrad.grad(getattr(golden_inputs, name))))
    sys.stdout.write(s2sgrad.source(s2sgrad.grad(getattr(golden_inputs, name)), mode="fwd"))
"""


def _emit(seed: str) -> bytes:
    env = dict(os.environ, PYTHONHASHSEED=seed, S2SGRAD_CACHE_DIR="")  # no cache: transform anew
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, check=True,
                          capture_output=True).stdout


@pytest.mark.slow  # 7 s of new processes: the slow tier, which CI runs too
def test_same_bytes_across_hash_seeds():
    first = _emit("0")
    assert first and first == _emit("4242")
