"""scipy.special, scipy.stats and np.convolve as a user writes them: a Student-t likelihood through
gammaln and through scipy.stats.t.logpdf, a negative-binomial likelihood, a Gaussian mixture
through scipy.stats.norm.logpdf and logsumexp, a 1-D convolution loss, a smoothness penalty
through np.gradient, a Dirichlet likelihood, a multivariate Gaussian likelihood in its mean and a
Cholesky factor, a 2-D filter through scipy.signal.convolve, scipy.linalg's solve_triangular, sqrtm and
solve_sylvester, np.partition and np.select; grad, jvp and hessian
against autograd and against differences. Then the mechanism: each derivative of the gamma and
Bessel families is the next function of its family (third order reads generated code again), a
varied order is refused where it stands, the command line writes code that runs, and importing
s2sgrad does not import scipy."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import autograd
import autograd.numpy as anp
import autograd.scipy.linalg as alinalg
import autograd.scipy.signal as asignal
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
from scipy import linalg as scipy_linalg
from scipy import signal as scipy_signal
from scipy import special, stats
from scipy.special import gammaln, logsumexp
from scipy.stats import norm

import s2sgrad
from conftest import assert_every_mode
from s2sgrad.checks import numerical_grad

RNG = np.random.default_rng(2027)
Y = RNG.standard_t(3.0, size=12) * 1.5 + 0.4
COUNTS = RNG.poisson(3.0, size=10).astype(float)
X = np.concatenate([RNG.normal(-1.0, 0.5, size=8), RNG.normal(1.5, 0.8, size=8)])
SIGNAL = RNG.normal(size=16)
TARGET = np.convolve(SIGNAL, np.array([0.2, 0.5, -0.3]), "same") + 0.05 * RNG.normal(size=16)


# ----- the user cases, each with its autograd twin ----------------------------------------------

def student_t_nll(theta):
    mu, sigma, nu = theta[0], np.exp(theta[1]), np.exp(theta[2])
    z = (Y - mu) / sigma
    ll = gammaln((nu + 1.0) / 2.0) - gammaln(nu / 2.0) - 0.5 * np.log(nu * np.pi) - np.log(sigma) \
        - (nu + 1.0) / 2.0 * np.log1p(z * z / nu)
    return -np.sum(ll)


def student_t_nll_ag(theta):
    mu, sigma, nu = theta[0], anp.exp(theta[1]), anp.exp(theta[2])
    z = (Y - mu) / sigma
    ll = aspecial.gammaln((nu + 1.0) / 2.0) - aspecial.gammaln(nu / 2.0) - 0.5 * anp.log(nu * anp.pi) \
        - anp.log(sigma) - (nu + 1.0) / 2.0 * anp.log1p(z * z / nu)
    return -anp.sum(ll)


def student_t_stats(theta):
    return -np.sum(stats.t.logpdf(Y, np.exp(theta[2]), theta[0], np.exp(theta[1])))


def student_t_stats_ag(theta):
    return -anp.sum(astats.t.logpdf(Y, anp.exp(theta[2]), theta[0], anp.exp(theta[1])))


def negative_binomial_nll(theta):
    r, p = np.exp(theta[0]), special.expit(theta[1])
    ll = gammaln(COUNTS + r) - gammaln(r) - gammaln(COUNTS + 1.0) + r * np.log1p(-p) + COUNTS * np.log(p)
    return -np.sum(ll)


def negative_binomial_nll_ag(theta):
    r, p = anp.exp(theta[0]), aspecial.expit(theta[1])
    ll = aspecial.gammaln(COUNTS + r) - aspecial.gammaln(r) - aspecial.gammaln(COUNTS + 1.0) \
        + r * anp.log1p(-p) + COUNTS * anp.log(p)
    return -anp.sum(ll)


def gaussian_mixture(theta):
    logits, means, log_sds = theta[0:2], theta[2:4], theta[4:6]
    log_weights = logits - logsumexp(logits)
    joint = norm.logpdf(X[:, None], means, np.exp(log_sds)) + log_weights
    return -np.sum(logsumexp(joint, axis=1))


def gaussian_mixture_ag(theta):
    logits, means, log_sds = theta[0:2], theta[2:4], theta[4:6]
    log_weights = logits - aspecial.logsumexp(logits)
    joint = astats.norm.logpdf(X[:, None], means, anp.exp(log_sds)) + log_weights
    return -anp.sum(aspecial.logsumexp(joint, axis=1))


def convolution_loss(kernel):
    pred = np.convolve(SIGNAL, kernel, "same")
    return np.sum((pred - TARGET) ** 2) + 0.1 * np.sum(kernel ** 4)


def convolution_loss_ag(kernel):
    # autograd's np.convolve has no gradient: its scipy.signal.convolve, "same" cut from "full"
    pred = asignal.convolve(SIGNAL, kernel, mode="full")[1:17]
    return anp.sum((pred - TARGET) ** 2) + 0.1 * anp.sum(kernel ** 4)


def smoothness_penalty(u):  # a 2-D field's squared gradient and a spacing-aware curvature
    dy, dx = np.gradient(u)
    return np.sum(dy ** 2 + dx ** 2) + np.sum(np.sin(np.gradient(u, axis=1)) ** 3)


def smoothness_penalty_ag(u):
    dy, dx = anp.gradient(u)
    return anp.sum(dy ** 2 + dx ** 2) + anp.sum(anp.sin(anp.gradient(u, axis=1)) ** 3)


PROPORTIONS = np.array([[0.2, 0.5, 0.3], [0.1, 0.3, 0.6], [0.4, 0.4, 0.2], [0.25, 0.15, 0.6]]).T
POINTS = RNG.normal(size=(6, 3)) @ np.array([[1.0, 0.3, 0.0], [0.0, 0.8, 0.2], [0.0, 0.0, 0.5]])
IMAGE = RNG.normal(size=(5, 6))


def dirichlet_nll(theta):  # concentrations exp(theta) of proportions, components along axis 0
    return -np.sum(stats.dirichlet.logpdf(PROPORTIONS, np.exp(theta)))


def dirichlet_nll_ag(theta):  # autograd's dirichlet reads one vector at a time
    alpha = anp.exp(theta)
    return -sum(astats.dirichlet.logpdf(PROPORTIONS[:, j], alpha) for j in range(4))


def gaussian_nll(theta):  # mean and a Cholesky factor's entries: cov = L L^T + 0.1 I
    lower = np.array([[np.exp(theta[3]), 0.0, 0.0], [theta[4], np.exp(theta[5]), 0.0],
                      [theta[6], theta[7], np.exp(theta[8])]])
    cov = lower @ lower.T + 0.1 * np.eye(3)
    return -np.sum(stats.multivariate_normal.logpdf(POINTS, theta[0:3], cov)) \
        + np.sum(stats.multivariate_normal.pdf(POINTS[:2], mean=theta[0:3], cov=cov))


def gaussian_nll_ag(theta):
    lower = anp.array([[anp.exp(theta[3]), 0.0, 0.0], [theta[4], anp.exp(theta[5]), 0.0],
                       [theta[6], theta[7], anp.exp(theta[8])]])
    cov = anp.dot(lower, lower.T) + 0.1 * anp.eye(3)
    return -anp.sum(astats.multivariate_normal.logpdf(POINTS, theta[0:3], cov)) \
        + anp.sum(astats.multivariate_normal.pdf(POINTS[:2], theta[0:3], cov))


def image_filter_loss(kernel):  # a 2-D filter through scipy.signal.convolve, its three modes
    k = np.reshape(kernel, (2, 3))
    return np.sum(np.tanh(scipy_signal.convolve(IMAGE, k, "same")) ** 2) \
        + np.sum(scipy_signal.convolve(IMAGE, k, mode="valid") ** 3) + np.sum(np.sin(scipy_signal.convolve(k, IMAGE)))


def image_filter_loss_ag(kernel):  # autograd's has no "same": cut from "full" (rows 0.., columns 1..)
    k = anp.reshape(kernel, (2, 3))
    full = asignal.convolve(IMAGE, k, mode="full")
    return anp.sum(anp.tanh(full[0:5, 1:7]) ** 2) + anp.sum(asignal.convolve(IMAGE, k, mode="valid") ** 3) \
        + anp.sum(anp.sin(asignal.convolve(k, IMAGE, mode="full")))


def scipy_linalg_loss(theta):  # a triangular solve, a matrix square root, a Sylvester equation
    a = np.reshape(theta, (3, 3))
    lower = np.tril(a) + 3.0 * np.eye(3)
    x = scipy_linalg.solve_triangular(lower, IMAGE[:3, :2], lower=True)
    root = scipy_linalg.sqrtm(a @ a.T + np.eye(3))
    y = scipy_linalg.solve_sylvester(root, np.eye(2) * 2.0 + a[:2, :2], x)
    return np.sum(np.sin(y)) + np.sum(root ** 2) + stats.multivariate_normal.entropy(None, root)


def scipy_linalg_loss_ag(theta):
    a = anp.reshape(theta, (3, 3))
    lower = anp.tril(a) + 3.0 * anp.eye(3)
    x = alinalg.solve_triangular(lower, IMAGE[:3, :2], lower=True)
    root = alinalg.sqrtm(anp.dot(a, a.T) + anp.eye(3))
    y = alinalg.solve_sylvester(root, anp.eye(2) * 2.0 + a[:2, :2], x)
    return anp.sum(anp.sin(y)) + anp.sum(root ** 2) + 0.5 * (3 * anp.log(2 * anp.pi * anp.e) + anp.linalg.slogdet(root)[1])


def banded_system_loss(theta):  # a tridiagonal system, its band in solve_banded's storage
    band = np.reshape(theta, (3, 4)) + np.array([[0.0], [4.0], [0.0]])
    x = scipy_linalg.solve_banded((1, 1), band, IMAGE[:4, 0])  # (autograd's rule fails on a 2-D b)
    return np.sum(np.sin(x)) + np.sum(scipy_linalg.solve_banded((1, 1), band, x * x) ** 2)


def banded_system_loss_ag(theta):
    band = anp.reshape(theta, (3, 4)) + anp.array([[0.0], [4.0], [0.0]])
    x = alinalg.solve_banded((1, 1), band, IMAGE[:4, 0])  # (autograd's rule fails on a 2-D b)
    return anp.sum(anp.sin(x)) + anp.sum(alinalg.solve_banded((1, 1), band, x * x) ** 2)


def index_trick_loss(x):  # np.r_ and np.c_ of differentiated arrays and numbers
    m = np.reshape(x, (2, 3))
    stacked = np.c_[m.T, np.sin(m[0]), m[1] ** 2]
    return np.sum(np.tanh(stacked) ** 2 * IMAGE[:3, :4]) + np.sum(np.r_[m[0], x[4] * 2.0, 1:3, np.cos(m[1])] ** 3)


def index_trick_loss_ag(x):
    m = anp.reshape(x, (2, 3))
    stacked = anp.c_[m.T, anp.sin(m[0]), m[1] ** 2]
    return anp.sum(anp.tanh(stacked) ** 2 * IMAGE[:3, :4]) + anp.sum(anp.r_[m[0], x[4] * 2.0, 1:3, anp.cos(m[1])] ** 3)


def ranked_selection_loss(x):  # no autograd twin: autograd's partition is 1-D, its select composite
    m = np.reshape(x, (3, 4))
    return np.sum(np.partition(m, 1) ** 3 * np.arange(12.0).reshape(3, 4)) \
        + np.sum(np.sin(np.select([m > 0.2, m < -0.3], [m ** 2, np.exp(m)], m * 3.0)) ** 2)


def softmax_cross_entropy(w):  # no autograd twin: autograd has no softmax, log_softmax, xlogy
    logits = np.reshape(w, (2, 3)) * X[:2, None]
    p = special.softmax(logits, axis=1)
    return -np.sum(special.log_softmax(logits, axis=1)[:, 0]) + np.sum(special.xlogy(p, p + 0.5))


def gamma_and_bessel(x):  # no autograd twin: autograd has no jv or ive's order-0 slope
    return np.sum(special.polygamma(1, x) * special.jv(1.5, x) + special.betaln(x, 2.0 * x)
                  + special.ive(1, x - 1.0) + special.y1(x) ** 2 + special.multigammaln(x + 1.0, 2))


CASES = [
    (student_t_nll, student_t_nll_ag, np.array([0.3, 0.2, 1.0])),
    (student_t_stats, student_t_stats_ag, np.array([0.3, 0.2, 1.0])),
    (negative_binomial_nll, negative_binomial_nll_ag, np.array([0.5, 0.2])),
    (gaussian_mixture, gaussian_mixture_ag, np.array([0.1, -0.2, -1.0, 1.0, -0.5, -0.3])),
    (convolution_loss, convolution_loss_ag, np.array([0.1, 0.4, -0.2])),
    (smoothness_penalty, smoothness_penalty_ag, RNG.normal(size=(4, 4))),  # autograd: square only
    (softmax_cross_entropy, None, RNG.normal(size=6)),
    (gamma_and_bessel, None, np.array([0.8, 1.7, 2.6])),
    (dirichlet_nll, dirichlet_nll_ag, np.array([0.3, -0.2, 0.5])),
    (gaussian_nll, gaussian_nll_ag, RNG.normal(size=9) * 0.3),
    (image_filter_loss, image_filter_loss_ag, RNG.normal(size=6) * 0.5),
    (scipy_linalg_loss, scipy_linalg_loss_ag, RNG.normal(size=9) * 0.5),
    (banded_system_loss, banded_system_loss_ag, RNG.normal(size=12) * 0.5),
    (index_trick_loss, index_trick_loss_ag, RNG.normal(size=6)),
    (ranked_selection_loss, None, RNG.normal(size=12)),
]


@pytest.mark.parametrize("fn,twin,x", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_jvp_and_hessian_agree_with_autograd_and_differences(fn, twin, x):
    assert_every_mode(fn, x, twin, RNG.normal(size=x.shape))


# ----- third order: grad of grad of grad, each level generated code read again --------------------

DIRECTION = np.array([0.4, -0.7, 0.2])
FIRST = SECOND = None  # set by the test: the gradients the levels above call


def along_first(x):
    return np.sum(FIRST(x) * DIRECTION)


def along_second(x):
    return np.sum(SECOND(x) * DIRECTION)


def gamma_family_cubic(x):
    return np.sum(gammaln(x) * x + special.digamma(x) + special.gamma(x) + special.beta(x, 1.5))


def bessel_cubic(x):
    return np.sum(special.i0(x) * special.i1(x) + special.j0(x) + special.yv(2.5, x) + special.ive(0.5, x))


# bessel_cubic stays in the default tier: its orders 0.5 and 2.5 become -0.5 and 3.5 as the levels
# go (differentiate/simplify.py folds ``0.5 - 1``: a name bound to it was read as varied)
@pytest.mark.parametrize("fn", [pytest.param(gamma_family_cubic, marks=pytest.mark.slow), bessel_cubic,
                                pytest.param(student_t_stats, marks=pytest.mark.slow)],
                         ids=lambda f: f.__name__)
def test_third_derivatives_call_the_next_function_of_each_family(fn):
    global FIRST, SECOND
    x = np.array([0.9, 1.6, 2.3])
    FIRST = s2sgrad.grad(fn)
    SECOND = s2sgrad.grad(along_first)
    third = s2sgrad.grad(along_second)(x)
    np.testing.assert_allclose(third, numerical_grad(along_second, (x,), 0), rtol=1e-4, atol=1e-5)


def test_polygamma_of_each_order_differentiates_to_the_next():
    x = np.array([0.7, 1.9, 3.2])
    for n in range(4):
        np.testing.assert_allclose(s2sgrad.grad(polygamma_sum)(x, n), special.polygamma(n + 1, x), rtol=1e-12)
    hessian = s2sgrad.hessian(polygamma_sum)(x, 2)
    np.testing.assert_allclose(hessian, np.diag(special.polygamma(4, x)), rtol=1e-12)


def polygamma_sum(x, n):
    return np.sum(special.polygamma(n, x))


# ----- refusals: an order is a number, not a variable -------------------------------------------

def varied_bessel_order(v, x):
    return np.sum(special.iv(v, x))


def varied_polygamma_order(x):
    n = x[0]
    return np.sum(special.polygamma(n, x))


def varied_poisson_count(k, mu):
    return np.sum(stats.poisson.logpmf(k, mu))


@pytest.mark.parametrize("fn,args,param", [
    (varied_bessel_order, (1.5, np.array([0.5, 1.0])), "v"),
    (varied_polygamma_order, (np.array([1.5, 2.0]),), "n"),
    (varied_poisson_count, (np.array([1.0, 2.0]), 1.5), "k"),
], ids=["iv", "polygamma", "poisson"])
def test_a_varied_order_or_count_is_refused_where_it_stands(fn, args, param):
    argnums = tuple(range(len(args)))
    with pytest.raises(s2sgrad.TransformError, match=f"with respect to `{param}`") as info:
        s2sgrad.grad(fn, argnums=argnums)(*args)
    assert "test_special_functions.py" in str(info.value)
    with pytest.raises(s2sgrad.TransformError):
        s2sgrad.jvp(fn, args, tuple(np.ones_like(a) for a in args))


# ----- generated code as the command line writes it; s2sgrad imports scipy only when used -------

MODEL = '''\
import numpy as np
from scipy.special import gammaln
import scipy.stats

from s2sgrad import differentiable


@differentiable
def nll(theta, y):
    nu = np.exp(theta[1])
    return -np.sum(scipy.stats.t.logpdf(y, nu, theta[0], 1.0)) + np.sum(gammaln(nu + y * y))
'''


def test_the_command_line_writes_code_that_imports_what_it_calls(tmp_path, monkeypatch):
    (tmp_path / "tmodel.py").write_text(textwrap.dedent(MODEL))
    result = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "tmodel.py", "-o", "gen"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "gen" / "tmodel_grad.py").read_text()
    assert "from scipy.special import gammaln" in text and "import scipy.stats" in text
    assert "s2s.polygamma(0, " in text
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path / "gen"))
    gen = importlib.import_module("tmodel_grad")
    model = importlib.import_module("tmodel")
    theta, y = np.array([0.2, 1.1]), RNG.normal(size=5)
    np.testing.assert_allclose(gen.nll_grad(theta, y), numerical_grad(model.nll, (theta, y), 0),
                               rtol=1e-6, atol=1e-8)


def test_importing_s2sgrad_does_not_import_scipy():
    code = "import sys, s2sgrad, s2sgrad.runtime; assert 'scipy' not in sys.modules, 'scipy imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_float32_stays_float32_through_the_helpers():
    x = np.array([0.8, 1.7, 2.6], dtype=np.float32)
    got = s2sgrad.grad(gamma_and_bessel)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, s2sgrad.grad(gamma_and_bessel)(x.astype(np.float64)), rtol=1e-3)


def xlogy_sum(x, y):
    return np.sum(special.xlogy(x, y) + special.xlog1py(x, y - 1.0))


def test_x_log_y_has_a_zero_slope_in_y_where_x_is_zero():
    x, y = np.array([0.0, 0.5, 0.0]), np.array([0.0, 2.0, 1.5])
    dy = s2sgrad.grad(xlogy_sum, argnums=1)(x, y)
    np.testing.assert_array_equal(dy[[0, 2]], [0.0, 0.0])  # as JAX: 0, not the nan of 0 / 0
    np.testing.assert_allclose(dy[1], 0.5 / 2.0 + 0.5 / 2.0, rtol=1e-12)
