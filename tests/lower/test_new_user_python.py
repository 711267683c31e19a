"""Issue 26's trial as a new user: each program of tests/inputs/new_user_programs.py differentiated
through s2sgrad.grad and s2sgrad.hessian, the decorator (``.grad``, ``.hessian``, ``.hvp``) and the
command line (``python -m s2sgrad emit``, then the generated ``<f>_grad`` and ``<f>_grad_hvp``),
against autograd on the same file read again with ``np`` as autograd.numpy."""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
import types
from pathlib import Path

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
import new_user_programs as programs

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(26)
X = RNG.normal(size=(4, 3))


def _arguments() -> dict:
    """name -> (arguments, the positions differentiated)."""
    rng = np.random.default_rng(7)
    return {
        "poly_fit": ((np.array([0.3, -0.2, 0.1]), np.linspace(-1, 1, 5), np.linspace(0, 1, 5)), (0,)),
        "softplus_mlp": ((rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(4, 2)) * 0.5, X), (0, 1)),
        "first_crossing": ((np.array([0.1, 0.3, 0.9, 0.2]), 0.5), (0,)),
        "robust_loss": ((np.array([0.4, -1.7, 0.6]),), (0,)),
        "weighted_norms": ((np.array([0.3, -0.5]), np.array([0.7, 0.2, -0.1]), np.array([1.1])),
                           (0, 1, 2)),
        "model_argument": ((programs.LinearModel(rng.normal(size=(3, 2)), rng.normal(size=2)), X),
                           (1,)),
        "global_model": ((X,), (0,)),
        "built_model": ((rng.normal(size=(3, 2)), rng.normal(size=2), X), (0, 1)),
        "careful_log": ((np.array([0.5, -1.2, 2.0]),), (0,)),
        "layered": (({"w1": rng.normal(size=(3, 3)), "w2": rng.normal(size=(3,))}, X), (0,)),
    }


ARGUMENTS = _arguments()
NAMES = sorted(ARGUMENTS)


def _autograd_module() -> types.ModuleType:
    """tests/inputs/new_user_programs.py executed with ``np`` as autograd.numpy and the decorator a
    no-op: the twin autograd differentiates."""
    text = Path(programs.__file__).read_text().replace("import numpy as np", "import autograd.numpy as np")
    namespace = {"s2sgrad": types.SimpleNamespace(differentiable=lambda **_: (lambda f: f)),
                 "__name__": "new_user_programs_autograd"}
    exec(compile(text.replace("import s2sgrad\n", ""), "new_user_programs_autograd", "exec"), namespace)
    module = types.ModuleType("new_user_programs_autograd")
    module.__dict__.update(namespace)
    return module


TWIN = _autograd_module()


def _twin_args(args: tuple) -> tuple:
    """The arguments for the autograd twin (its own class for an object argument)."""
    return tuple(TWIN.LinearModel(a.W, a.b) if isinstance(a, programs.LinearModel) else a
                 for a in args)


def _expected(name: str) -> tuple:
    """(autograd's gradients, its Hessian blocks [i][j], the tangents, its Hessian times them),
    per differentiated position, leaves of a dict argument flattened by key."""
    args, positions = ARGUMENTS[name]
    fun, targs = getattr(TWIN, name), _twin_args(args)
    grads = [autograd.grad(fun, p)(*targs) for p in positions]
    blocks = None if isinstance(args[positions[0]], dict) else \
        [[autograd.jacobian(autograd.grad(fun, p), q)(*targs) for q in positions] for p in positions]
    tangents = [_tangent(args[p]) for p in positions]
    hvps = []
    for p in positions:
        def directional(*a, p=p):
            return sum(_dot(autograd.grad(fun, q)(*a), t) for q, t in zip(positions, tangents))
        hvps.append(autograd.grad(directional, p)(*targs))
    return grads, blocks, tangents, hvps


def _tangent(value):
    if isinstance(value, dict):
        return {k: np.cos(np.arange(np.size(v)) + 1.0).reshape(np.shape(v)) for k, v in value.items()}
    return np.cos(np.arange(np.size(value)) + 1.0).reshape(np.shape(value))


def _dot(a, b):
    if isinstance(b, dict):
        return sum(anp.sum(a[k] * b[k]) for k in b)
    return anp.sum(a * b)


def _close(got, expected):
    if isinstance(expected, dict):
        assert set(got) == set(expected)
        for k in expected:
            _close(got[k], expected[k])
        return
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(expected, dtype=float),
                               rtol=1e-9, atol=1e-11)


def _emit(directory: Path, text: str) -> subprocess.CompletedProcess:
    """``python -m s2sgrad emit new_user_programs.py -o out`` on ``text`` in ``directory``."""
    (directory / "new_user_programs.py").write_text(text)
    env = dict(os.environ, PYTHONPATH=str(HERE.parents[1]))
    return subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "new_user_programs.py", "-o",
                           "out"], cwd=directory, env=env, capture_output=True, text=True,
                          timeout=300)


# what the command line refuses, and why (it never runs the file)
CLI_REFUSED = {
    "weighted_norms": "weighted_norms takes *xs",  # how many arrays: known at a call only
    # a dict read other than by literal keys: which keys, known at a call only
    "layered": "`params` is a dict whose keys this code does not spell out",
}


@pytest.fixture(scope="module")
def emitted(tmp_path_factory):
    """The command line's module for tests/inputs/new_user_programs.py, the programs it refuses
    unmarked (test_command_line_refusals)."""
    directory = tmp_path_factory.mktemp("emitted")
    lines = Path(programs.__file__).read_text().splitlines(keepends=True)
    kept = [line for i, line in enumerate(lines) if not (
        line.startswith("@s2sgrad.differentiable") and
        any(lines[i + 1].startswith(f"def {name}(") for name in CLI_REFUSED))]
    done = _emit(directory, "".join(kept))
    assert done.returncode == 0, done.stderr
    sys.path.insert(0, str(directory / "out"))
    try:
        yield importlib.import_module("new_user_programs_grad")
    finally:
        sys.path.remove(str(directory / "out"))
        sys.modules.pop("new_user_programs_grad", None)


def test_command_line_refusals(tmp_path):
    """Each program the command line refuses, alone: a located refusal, exit code 2."""
    text = Path(programs.__file__).read_text()
    for name, message in CLI_REFUSED.items():
        lines = text.splitlines(keepends=True)
        kept = [line for i, line in enumerate(lines) if not (
            line.startswith("@s2sgrad.differentiable") and
            not lines[i + 1].startswith(f"def {name}("))]
        done = _emit(tmp_path, "".join(kept))
        assert done.returncode == 2, done.stdout
        first = done.stderr.splitlines()[0]
        assert first.startswith("new_user_programs.py:") and message in first, done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_grad(name):
    args, positions = ARGUMENTS[name]
    got = s2sgrad.grad(getattr(programs, name), argnums=positions)(*args)
    for g, e in zip(got, _expected(name)[0]):
        _close(g, e)


@pytest.mark.parametrize("name", NAMES)
def test_hessian(name):
    args, positions = ARGUMENTS[name]
    if isinstance(args[positions[0]], dict):  # blocks of a pytree: JAX's layout, compared by hvp
        got = s2sgrad.hvp(functools.partial(getattr(programs, name), x=args[1]), (args[0],),
                          (_expected(name)[2][0],))
        _close(got[0], _expected(name)[3][0])
        return
    got = s2sgrad.hessian(getattr(programs, name), argnums=positions)(*args)
    expected = _expected(name)[1]
    for i in range(len(positions)):
        for j in range(len(positions)):
            _close(got[i][j], expected[i][j])


@pytest.mark.parametrize("name", NAMES)
def test_decorator(name):
    args, positions = ARGUMENTS[name]
    fun = getattr(programs, name)
    grads, blocks, tangents, hvps = _expected(name)
    got = fun.grad(*args)
    for g, e in zip(got if len(grads) > 1 else (got,), grads):
        _close(g, e)
    product = fun.hvp(*args, tangents=tuple(tangents) if len(tangents) > 1 else tangents[0])
    for g, e in zip(product if len(hvps) > 1 else (product,), hvps):
        _close(g, e)
    if isinstance(args[positions[0]], dict):
        return
    hessian = fun.hessian(*args)
    if len(positions) == 1:
        hessian = ((hessian,),)
    for i in range(len(positions)):
        for j in range(len(positions)):
            _close(hessian[i][j], blocks[i][j])


@pytest.mark.parametrize("name", NAMES)
def test_command_line(name, emitted):
    if name in CLI_REFUSED:
        pytest.skip(f"the command line refuses {name}: {CLI_REFUSED[name]}")
    args, positions = ARGUMENTS[name]
    grads, _, tangents, hvps = _expected(name)
    got = getattr(emitted, f"{name}_grad")(*args)
    for g, e in zip(got if len(grads) > 1 else (got,), grads):
        _close(g, e)
    wrt = [p for p in getattr(programs, name).__code__.co_varnames[:len(args)]]
    dots = {f"{wrt[p]}_dot": t for p, t in zip(positions, tangents)}
    product = getattr(emitted, f"{name}_grad_hvp")(*args, **dots)
    for g, e in zip(product if len(hvps) > 1 else (product,), hvps):
        _close(g, e)


def test_command_line_checks_the_annotated_class(emitted):
    """The code read LinearModel's methods for `model: LinearModel`: another class (a subclass
    overriding a method) stops at its first line rather than getting LinearModel's derivative."""
    class Other(programs.LinearModel):
        def predict(self, x):
            return x

    model, x = ARGUMENTS["model_argument"][0]
    with pytest.raises(TypeError, match="generated for a `model` of class LinearModel"):
        emitted.model_argument_grad(Other(model.W, model.b), x)


def test_command_line_hints_at_the_annotation(tmp_path):
    """Without the annotation the command line cannot know the argument's class: refused at the
    method call, the hint saying what to write."""
    text = Path(programs.__file__).read_text()
    lines = text.splitlines(keepends=True)
    kept = [line.replace("model: LinearModel", "model") for i, line in enumerate(lines) if not (
        line.startswith("@s2sgrad.differentiable") and not lines[i + 1].startswith("def model_argument("))]
    done = _emit(tmp_path, "".join(kept))
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first.startswith("new_user_programs.py:") and "`model.predict(...)`" in first, done.stderr
    assert "annotate that argument with its class: `model: LinearModel`" in done.stderr
