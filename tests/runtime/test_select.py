"""np.where's adjoint as ``s2s.select`` (a product with the mask where that is exact): its values
equal np.where's, the infinities and nans a mask drops included, and programs choosing with
np.where (or clipping) keep their gradients at first and second order."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s

from conftest import assert_gradients

RNG = np.random.default_rng(7)
MASK = RNG.uniform(size=(5, 6)) > 0.5


@pytest.mark.parametrize("value", [
    RNG.normal(size=(5, 6)),
    RNG.normal(size=(6,)),  # broadcast against the condition
    RNG.normal(size=(5, 6)).astype(np.float32),
    np.broadcast_to(np.float64(-2.0), (5, 6)),  # a full sum's adjoint: a read-only view
    -1.5,
    np.float64(2.5),
    RNG.normal(size=(5, 6)) + 1j * RNG.normal(size=(5, 6)),
    np.arange(30).reshape(5, 6),  # integers: np.where's own value and type
])
@pytest.mark.parametrize("taken", [True, False])
def test_select_is_np_where(value, taken):
    want = np.where(MASK, value, 0.0) if taken else np.where(MASK, 0.0, value)
    got = s2s.select(MASK, value, taken)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_dropped_infinity_or_nan_is_dropped(bad):
    value = RNG.normal(size=(5, 6))
    value[~MASK] = bad  # where the mask drops: np.where gives 0, a product would give nan
    value[0, 0] = 1.0
    for taken, cond in ((True, MASK), (False, ~MASK)):
        got = s2s.select(cond, value, taken)
        np.testing.assert_array_equal(got, np.where(MASK, value, 0.0))


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan, float("inf")])
def test_a_number_that_is_not_finite_is_np_wheres(bad):
    """A finite number is multiplied by the mask at once; an infinite or nan one takes np.where's
    value (0 where the mask drops it, not inf * 0)."""
    for taken in (True, False):
        want = np.where(MASK, bad, 0.0) if taken else np.where(MASK, 0.0, bad)
        np.testing.assert_array_equal(s2s.select(MASK, bad, taken), want)


def test_a_kept_nan_is_kept_and_a_condition_of_numbers_is_truthiness():
    value = RNG.normal(size=(5, 6))
    value[MASK] = np.nan
    np.testing.assert_array_equal(s2s.select(MASK, value), np.where(MASK, value, 0.0))
    numbers = MASK * 2.0 - 0.5 * ~MASK  # nonzero everywhere: all true
    np.testing.assert_array_equal(s2s.select(numbers, value), np.where(numbers, value, 0.0))


def huber(pred, target, delta):
    r = pred - target
    a = np.abs(r)
    return np.sum(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def clipped(x, lo, hi):
    return np.sum(np.sin(np.clip(x, lo, hi)) * x)


def guarded_sqrt(x):
    # the adjoint reaching the chosen value is infinite where the other side (0) is chosen
    return np.sum(np.sqrt(np.where(x > 0.0, x, 0.0)) * np.cos(x))


def test_gradients_through_where_and_clip():
    pred, target = RNG.normal(size=40) * 2.0, RNG.normal(size=40)
    assert_gradients(huber, pred, target, 1.0, argnums=(0, 1))
    x = RNG.normal(size=30)
    bounds = RNG.uniform(-0.5, 0.0, size=30), RNG.uniform(0.0, 0.5, size=30)
    assert_gradients(clipped, x, *bounds, autograd_oracle=False)  # autograd: no clip bound gradients
    assert_gradients(clipped, x, *bounds, argnums=(0,))


def test_an_infinite_adjoint_the_choice_drops_gives_zero_not_nan():
    x = np.array([0.5, -0.3, 1.2, -2.0, 0.0])
    with np.errstate(divide="ignore"):
        got = s2sgrad.grad(guarded_sqrt)(x)
        want = autograd.grad(lambda x: anp.sum(anp.sqrt(anp.where(x > 0.0, x, 0.0)) * anp.cos(x)))(x)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    np.testing.assert_allclose(got[x != 0.0], want[x != 0.0], rtol=1e-12)


def test_second_order_through_where():
    x = RNG.normal(size=8) * 2.0
    target = RNG.normal(size=8)

    def smooth(p):
        r = p - target
        return np.sum(np.where(np.abs(r) <= 1.0, np.sin(r) * r ** 2, np.cos(r) * r))

    def smooth_ag(p):
        r = p - target
        return anp.sum(anp.where(anp.abs(r) <= 1.0, anp.sin(r) * r ** 2, anp.cos(r) * r))

    np.testing.assert_allclose(s2sgrad.hessian(smooth)(x), autograd.hessian(smooth_ag)(x),
                               rtol=1e-9, atol=1e-12)
    tangent = RNG.normal(size=8)
    np.testing.assert_allclose(s2sgrad.hvp(smooth, (x,), (tangent,))[0],
                               autograd.hessian(smooth_ag)(x) @ tangent, rtol=1e-9, atol=1e-12)
