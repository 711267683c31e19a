"""End-to-end checks of the rules of the reduction, scan, elementwise and complex helpers
(s2sgrad/rules/helpers/{reductions,scans,elementwise,complex}.py): s2sgrad reads the gradient it
generated for a small function (its ``<f>_fwd`` and ``<f>_bwd``, which call ``s2s.sum_vjp``,
``s2s.extremum_vjp``, ...) and differentiates it again, in reverse mode (grad of grad) and in
forward mode (jvp of grad), against central differences.

The generated backward sweep frees residuals with ``del`` lines (differentiate/release.py), which
s2sgrad's reader refuses (read/fence.py); ``_generated`` leaves them out, which changes no value.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys

import numpy as np
import pytest
import scipy.special

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.forward_code import build_jvp
from s2sgrad.checks import numerical_grad
from s2sgrad import runtime as s2s
from s2sgrad import derive as service

RNG = np.random.default_rng(2024)
X = RNG.uniform(-0.9, 0.9, (3, 4))
POS = RNG.uniform(0.5, 1.5, (3, 4))
V = RNG.uniform(-1.0, 1.0, 4)
W = RNG.uniform(-1.0, 1.0, (3, 4))
WT = RNG.uniform(0.5, 1.5, 4)


def f_mean(x): return np.sum(np.sin(np.mean(x, axis=1)))
def f_sum_keep(x): return np.sum(np.sin(np.sum(x, axis=0, keepdims=True) * x))
def f_max_v(x): return np.sum(np.sin(np.max(x, axis=0) * V))
def f_min_all(x): return np.min(x) * np.sum(x ** 2)
def f_std(x): return np.std(x)
def f_std_axis(x): return np.sum(np.sin(np.std(x, axis=1, ddof=1)))
def f_std_single(x): return np.sum(np.sin(np.std(x, axis=0) + x))
def f_var(x): return np.sum(np.sin(np.var(x, axis=0)))


def f_logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def f_logsumexp_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(np.sin(m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))))


def f_scipy_logsumexp(x): return scipy.special.logsumexp(x)
def f_scipy_logsumexp_rows(x): return np.sum(np.sin(scipy.special.logsumexp(x, axis=1)))
def f_cumsum(x): return np.sum(np.sin(np.cumsum(x)))
def f_cumsum_rows(x): return np.sum(np.sin(np.cumsum(x, axis=1) * W))
def f_diff(x): return np.sum(np.sin(np.diff(x)))
def f_diff_extras(x): return np.sum(np.sin(np.diff(x, n=2, axis=0, prepend=0.5)))
def f_prod(x): return np.sum(np.sin(np.prod(x, axis=1)))
def f_cumprod(x): return np.sum(np.sin(np.cumprod(x, axis=1) * W))
def f_nansum(x): return np.sum(np.sin(np.nansum(x, axis=1)))
def f_nanmean(x): return np.sin(np.nanmean(x)) * 2.0
def f_ptp(x): return np.sum(np.sin(np.ptp(x, axis=1)))
def f_average(x): return np.sum(np.sin(np.average(x, axis=1, weights=WT)))
def f_average_weights(x): return np.sum(np.sin(np.average(POS, axis=1, weights=x)))
def f_math_log(x): return math.log(x * x + 1.0, 3.0)
def f_sinc(x): return np.sum(np.sin(np.sinc(x) * W))
def f_max_matmul(x): return np.max(x, axis=0) @ V
def f_cumsum_weighted(x): return np.sum(np.sin(np.cumsum(x, axis=1)) * W)


# functions and points; forward mode over their gradients is checked where the primitives they
# call have tangent rules (FORWARD_REFUSED: the rules of numpy's functions, not the helpers')
CASES = [
    (f_mean, X), (f_sum_keep, X), (f_max_v, X), (f_min_all, X), (f_std, X), (f_std_axis, X),
    (f_std_single, X[:1]),
    (f_var, X), (f_logsumexp, X), (f_logsumexp_rows, X), (f_scipy_logsumexp, X),
    (f_scipy_logsumexp_rows, X), (f_cumsum, X), (f_cumsum_rows, X), (f_diff, X),
    (f_diff_extras, X), (f_prod, POS), (f_cumprod, POS), (f_nansum, X), (f_nanmean, X),
    (f_ptp, X), (f_average, X), (f_average_weights, WT), (f_math_log, 0.7), (f_sinc, X),
]
FORWARD_REFUSED = {
    f_std: "numpy.std", f_std_axis: "numpy.std", f_std_single: "numpy.std", f_var: "numpy.var",
    f_diff: "numpy.diff", f_diff_extras: "numpy.diff", f_prod: "numpy.prod",
    f_cumprod: "numpy.cumprod", f_nanmean: "numpy.nanmean", f_ptp: "numpy.ptp",
    f_average: "numpy.average", f_average_weights: "numpy.average",
}
IDS = [f.__name__ for f, _ in CASES]


def _generated(fn, tmp_path):
    """``fn``'s generated gradient ``x -> d fn / dx``, as a module s2sgrad can read."""
    text, _ = service.build(fn, ("x",))
    text = "\n".join(line for line in text.splitlines() if not re.match(r"\s*del ", line))
    name = f"gen_{fn.__name__}_{abs(hash(str(tmp_path)))}"
    path = tmp_path / f"{name}.py"
    path.write_text(text + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    for key in ("X", "POS", "V", "W", "WT"):  # the values the generated code captured
        module.__dict__.setdefault(key, globals()[key])
    fwd, bwd = getattr(module, f"{fn.__name__}_fwd"), getattr(module, f"{fn.__name__}_bwd")

    def gradf(x): return bwd(fwd(x)[1], 1.0)[0]
    return gradf


def _like(x, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, np.shape(x)) if np.ndim(x) else float(RNG.uniform(lo, hi))


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_grad_of_grad(fn, x, tmp_path):
    gradf = _generated(fn, tmp_path)
    np.testing.assert_allclose(gradf(x), numerical_grad(fn, (x,), 0), rtol=1e-5, atol=1e-7)
    weights = _like(x)

    def h(x): return np.sum(gradf(x) * weights)
    np.testing.assert_allclose(s2sgrad.grad(h)(x), numerical_grad(h, (x,), 0), rtol=1e-5, atol=1e-7)


# These call helpers of other banners too: matmul_vjp_a, and s2s.broadcast(g, shape) with a
# shape read from a residual (its rule is constant in the shape).
OUTSIDE = [(f_max_matmul, X), (f_cumsum_weighted, X)]


@pytest.mark.parametrize("fn, x", OUTSIDE, ids=[f.__name__ for f, _ in OUTSIDE])
def test_with_other_banners_helpers(fn, x, tmp_path):
    test_grad_of_grad(fn, x, tmp_path)
    test_jvp_of_grad(fn, x, tmp_path)


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_jvp_of_grad(fn, x, tmp_path):
    gradf = _generated(fn, tmp_path)
    t = _like(x)
    if fn in FORWARD_REFUSED:  # forward mode refuses the primal function, not a helper; jvp
        # then takes reverse mode over the gradient's gradient (s2sgrad/transpose.py)
        with pytest.raises(TransformError, match=re.escape(FORWARD_REFUSED[fn])):
            build_jvp(gradf, ("x",))
        if fn is f_std_single:  # a spread of 0: third derivatives through std's helpers are
            return  # 0 / 0 there (NaN; std of one element is constant), not fixed yet
    value, tangent = s2sgrad.jvp(gradf, (x,), (t,))
    np.testing.assert_allclose(value, gradf(x), rtol=1e-12)
    eps = 1e-6
    want = (gradf(x + eps * t) - gradf(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-7)


def test_sinc_slope_at_zero():
    """sinc'' (0) = -pi**2 / 3: the one point the rule's formula replaces (differences cancel)."""
    got = s2sgrad.grad(lambda_free_sinc_slope)(np.zeros(3))
    np.testing.assert_allclose(got, -np.pi ** 2 / 3 * np.ones(3), rtol=1e-12)


def lambda_free_sinc_slope(x): return np.sum(s2s.sinc_slope(x))


def _complex_gradient(f, v, eps=1e-6):
    """df/dRe v - i df/dIm v of a real f (the convention of s2sgrad's adjoints)."""
    out = np.zeros(v.shape, complex)
    for i in range(v.size):
        e = np.zeros(v.shape)
        e.flat[i] = eps
        out.flat[i] = (f(v + e) - f(v - e) - 1j * (f(v + 1j * e) - f(v - 1j * e))) / (2 * eps)
    return out


def test_complex_slope_transposes():
    """The value templates of abs_slope_vjp, angle_slope_vjp and match_complex, and the tangents
    of abs_slope and angle_slope, for complex values (the rule cases are real)."""
    rng = np.random.default_rng(3)
    x, t, g, v = (rng.normal(size=5) + 1j * rng.normal(size=5) for _ in range(4))
    xr = rng.normal(size=5)
    checks = [
        (lambda u: s2s.abs_slope_vjp(u, x), s2s.abs_slope_vjp(g, x)),
        (lambda u: s2s.angle_slope_vjp(u, x), -1j * s2s.angle_slope_vjp(1j * g, x)),
        (lambda u: s2s.angle_slope_vjp(u, x, True), -1j * s2s.angle_slope_vjp(1j * g, x, True)),
        (lambda u: s2s.match_complex(xr, u), s2s.match_complex(v, s2s.match_complex(xr, g))),
    ]
    for fn, want in checks:
        np.testing.assert_allclose(_complex_gradient(lambda u: np.real(np.sum(g * fn(u))), v), want,
                                   rtol=1e-6, atol=1e-8)
    eps = 1e-6
    for deg in (False, True):
        fd = (s2s.angle_slope(x + eps * t, deg) - s2s.angle_slope(x - eps * t, deg)) / (2 * eps)
        turned = -1j * s2s.angle_slope_vjp(1j * t, x, deg)
        tangent = s2s.match_complex(s2s.angle_slope(x, deg), turned)
        np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)
    fd = (s2s.abs_slope(x + eps * t) - s2s.abs_slope(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(s2s.abs_slope_vjp(t, x), fd, rtol=1e-6, atol=1e-8)
    with pytest.raises(NotImplementedError):
        s2s.real_slope_zeros(x)


def test_generated_code_is_read_as_written():
    """Its ``del`` lines included: deleting a name carries no derivative."""
    text, (fwd, bwd, _) = service.build(f_sum_keep, ("x",))
    assert "del " in text

    def gradf(x): return bwd(fwd(x)[1], 1.0)[0]
    h = lambda_free_sum(gradf)
    np.testing.assert_allclose(s2sgrad.grad(h)(X), numerical_grad(h, (X,), 0), rtol=1e-6, atol=1e-9)


def lambda_free_sum(gradf):
    def h(x): return np.sum(gradf(x))
    return h


def h_max_rows(x): return np.sum(np.max(x, axis=1) ** 2)
def h_abs(x): return np.sum(np.abs(x) * x ** 2)
def h_sinc(x): return np.sum(np.sin(np.sinc(x)))


@pytest.mark.parametrize("fn", [h_max_rows, h_abs, h_sinc], ids=lambda f: f.__name__)
def test_hvp(fn):
    """Reverse mode over generated forward-mode code, which calls extremum_jvp, abs_slope and
    sinc_slope."""
    t = _like(X)
    got = s2sgrad.hvp(fn, (X,), (t,))[0]
    gradient, eps = s2sgrad.grad(fn), 1e-6
    want = (gradient(X + eps * t) - gradient(X - eps * t)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn", [f_prod, f_cumprod], ids=lambda f: f.__name__)
def test_products_with_a_zero_factor_raise(fn, tmp_path):
    """Second derivatives of products are written for factors without zeros: one raises."""
    gradf = _generated(fn, tmp_path)
    x = POS.copy()
    x[0, 1] = 0.0
    np.testing.assert_allclose(gradf(x), numerical_grad(fn, (x,), 0), rtol=1e-5, atol=1e-7)

    def h(x): return np.sum(gradf(x))
    with pytest.raises(ValueError, match="zero factor"):
        s2sgrad.grad(h)(x)
