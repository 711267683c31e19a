"""register_gradient: rules for functions with no source (numpy/scipy) or opaque user functions."""

import subprocess
import sys
from pathlib import Path

import numpy as np

import registered_inputs as ri
import s2sgrad
from s2sgrad.checks import numerical_grad

X = np.array([0.3, -0.5, 1.2])
Y = np.array([1.5, 2.0, -0.7])


def test_registered_rule_for_a_library_function():
    gx, gy = s2sgrad.grad(ri.uses_erfcx, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, numerical_grad(ri.uses_erfcx, (X, Y), 0), rtol=1e-6)
    np.testing.assert_allclose(gy, numerical_grad(ri.uses_erfcx, (X, Y), 1), rtol=1e-6)


def test_registered_rule_for_an_opaque_user_function():
    gx, gy = s2sgrad.grad(ri.uses_opaque, argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(gx, numerical_grad(ri.uses_opaque, (X, Y), 0), rtol=1e-6)
    np.testing.assert_allclose(gy, numerical_grad(ri.uses_opaque, (X, Y), 1), rtol=1e-6)


def test_generated_code_calls_the_registered_rule_by_name():
    text = s2sgrad.source(s2sgrad.grad(ri.uses_erfcx))
    assert "erfcx_grad(" in text and "s2s.custom_result(" in text


def test_cli_finds_registrations_without_running_the_file(tmp_path):
    src = (Path(__file__).resolve().parents[1] / "inputs" / "registered_inputs.py").read_text()
    src = src.replace("def uses_erfcx", "@s2sgrad.differentiable\ndef uses_erfcx")
    (tmp_path / "registered_inputs.py").write_text(src)
    out = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "registered_inputs.py", "-o", "gen"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "gen" / "registered_inputs_grad.py").read_text()
    assert "from registered_inputs import erfcx_grad" in text
