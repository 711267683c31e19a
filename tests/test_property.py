"""Property test: random programs from the supported subset, s2sgrad vs autograd and finite differences,
forward mode (jvp) against the reverse-mode gradient, and Hessian-vector products against
differences of gradients.

tests/program_gen.py writes each program as the source of a module (``f(x, v, s, flag)`` and up to
two helpers): assignments, re-assignment (of parameters too), augmented assignment, tuple
unpacking, nested ``+ - * / **`` and unary minus, smooth numpy functions on safe domains, sum/mean
with and without axis/keepdims, maximum/minimum with a constant, abs, broadcasting between (3, 4),
(4,), (3,), (3, 1) and Python floats, indexing reads (integers, negative, slices, ``None``, the loop
index), ``if``/``elif``/``else`` and conditional expressions on computed conditions with
``and``/``or``/``not`` and a bool parameter, ``for`` loops over ``range`` (nested, with carried
variables, ``break``/``continue``), an early ``return``, and calls to generated helpers (keyword
arguments, defaults). Each program is written to a real file and imported, as s2sgrad reads source
from files. A failure prints the program, its inputs and a script that replays it.

Names joined at an if/else or a loop's exit and read later (in loops, conditional expressions,
further ifs), names bound in one arm of an if or in a loop body only, loops carrying the results
of exp/tanh/sqrt/division, ifs nested in ifs and ifs after an early return are all generated
(s2sgrad bugs A, B, C and E, once steered around here, are fixed; their regression tests are in
tests/test_control_flow.py).

Bugs this test found are fixed; each has a regression test in tests/test_control_flow.py.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import warnings

import autograd
import numpy as np
import pytest
from conftest import _rebind
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from program_gen import Chooser, generate

import s2sgrad
from s2sgrad.api import _build_jvp, _second_order
from s2sgrad.checks import numerical_grad

ARGNUMS = (0, 1, 2)  # x, v, s (flag is a bool)
_ids = itertools.count()


@pytest.fixture(scope="module", autouse=True)
def _no_disk_cache():
    """Transform every program for real (and leave the user's cache alone)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("S2SGRAD_CACHE_DIR", "")
        yield


def _load(directory, source, stem):
    name = f"s2sgrad_prop_{stem}_{next(_ids)}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _build(prog, directory):
    """Run the probe version, place the thresholds, and import the final program."""
    probe = _load(directory, prog.render(probe=True), "probe")
    seen = {}

    def record(site, value):
        seen.setdefault(site, []).append(float(value))
        return prog.sites[site].outcome

    probe._probe = record
    probe.f(*prog.args())
    prog.set_thresholds(seen)
    return _load(directory, prog.render(probe=False), "prog")


def _report(prog, source, what):
    return (f"{what}\n--- program (saved as prog.py) ---\n{source}--- inputs ---\n{prog.inputs_repr()}\n"
            f"--- replay ---\nimport numpy as np, s2sgrad, prog\n"
            f"print(s2sgrad.grad(prog.f, argnums={ARGNUMS})(x, v, s, flag))\n")


def check(prog, directory):
    """Build ``prog`` in ``directory`` and compare s2sgrad's gradient with autograd's and with
    central differences; an AssertionError carries the program. Returns the module."""
    module = _build(prog, directory)
    source = prog.render(probe=False)
    f, args = module.f, prog.args()
    value = f(*args)
    assert np.ndim(value) == 0 and np.isfinite(value), _report(prog, source, f"bad value {value!r}")

    try:
        got = s2sgrad.grad(f, argnums=ARGNUMS)(*args)
    except Exception as exc:  # noqa: BLE001 - the report must carry the program
        raise AssertionError(_report(prog, source, f"s2sgrad raised {type(exc).__name__}: {exc}")) from exc

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Output seems independent of input")
        oracle = autograd.grad(_rebind(f), ARGNUMS)(*args)
    scale = max(1.0, *(float(np.max(np.abs(g))) for g in oracle))
    for k, i in enumerate(ARGNUMS):
        assert np.shape(got[k]) == np.shape(args[i]), _report(
            prog, source, f"argument {i}: gradient shape {np.shape(got[k])}")
        if i == 2:
            assert isinstance(got[k], float), _report(
                prog, source, f"gradient of the Python float s is {type(got[k]).__name__}")
        np.testing.assert_allclose(got[k], oracle[k], rtol=1e-7, atol=1e-10 * scale,
                                   err_msg=_report(prog, source, f"argument {i} vs autograd"))
        expected = numerical_grad(f, args, i, eps=1e-6)
        np.testing.assert_allclose(got[k], expected, rtol=1e-4, atol=1e-6 * scale,
                                   err_msg=_report(prog, source, f"argument {i} vs finite differences"))
    return module, got


# No shrinking: the report already holds the whole program, and shrinking a program through
# hypothesis' draws takes minutes. Add Phase.shrink locally to minimize a failure.
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_program_gradients(data, tmp_path_factory):
    prog = generate(Chooser(data))
    module, got = check(prog, tmp_path_factory.mktemp("prog"))
    f, args = module.f, prog.args()
    # a single argnum gives that entry of the tuple, as a bare value
    k = data.draw(st.sampled_from(range(len(ARGNUMS))), label="single argnum")
    single = s2sgrad.grad(f, argnums=ARGNUMS[k])(*args)
    source = prog.render(probe=False)
    # s (k == 2) is a Python float: grad runs forward mode, which may round differently
    rtol, atol = (1e-9, 1e-12 * max(1.0, abs(got[k]))) if k == 2 else (1e-12, 0)
    np.testing.assert_allclose(single, got[k], rtol=rtol, atol=atol,
                               err_msg=_report(prog, source, f"argnums={ARGNUMS[k]} vs the tuple"))
    # forward mode along a random direction: the tangent is <gradient, direction>
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="direction seed"))
    direction = [rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in args[:3]]
    _, jvp_fn, names = _build_jvp(f, ("x", "v", "s"))
    value, tangent = jvp_fn(*args, **dict(zip(names, direction)))
    expected = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(got, direction))
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, err_msg=_report(prog, source, "jvp value"))
    np.testing.assert_allclose(tangent, expected, rtol=1e-7, atol=1e-9 * max(1.0, abs(expected)),
                               err_msg=_report(prog, source, "jvp vs <gradient, direction>"))
    # second order: the Hessian times the direction (reverse mode over the forward-mode code)
    # against central differences of the gradient along it
    _, hvp_run = _second_order(f, ("x", "v", "s"))
    hv = hvp_run(args, tuple(direction))
    grad_all = s2sgrad.grad(f, argnums=ARGNUMS)
    eps = 1e-5
    plus = grad_all(*[a + eps * d for a, d in zip(args[:3], direction)], *args[3:])
    minus = grad_all(*[a - eps * d for a, d in zip(args[:3], direction)], *args[3:])
    for k in range(3):
        fd = (np.asarray(plus[k]) - np.asarray(minus[k])) / (2 * eps)
        np.testing.assert_allclose(hv[k], fd, rtol=1e-4, atol=1e-5 * max(1.0, float(np.max(np.abs(fd)))),
                                   err_msg=_report(prog, source, f"hvp argument {k} vs differences"))
