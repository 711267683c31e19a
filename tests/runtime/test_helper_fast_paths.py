"""Fast paths of small runtime helpers: the same values as their general forms, and the general
form where the fast one does not apply.

- ``balanced_eq`` (the adjoint mask of max/min): where nothing ties, the comparison mask itself;
  0.5 on ties; another library's arrays keep their type and stay lazy (dask: no compute);
- ``_power_or_zero`` of one float64 norm (a vector norm's adjoint): numpy's power, 0 at a zero
  norm, inf where it overflows (no Python OverflowError);
- ``stack_rows`` of plain rows (arrays or numbers): the rows stacked in the order of the array
  (a backward loop visits them last to first), zeros for the rows after those visited;
- ``tails`` / ``tails_vjp`` of rows of several numbers (a batched loop over ``x[t + 1:]``): rows
  taken by index, adjoints summed as products with the 0/1 mask where every product is finite,
  else masked as one flat row per step; the same as the elementwise forms, and a padded entry's
  adjoint (nan where a padded distance was 0, inf) never reaches the sum.
"""

import warnings

import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s
from s2sgrad.runtime.elementwise import _power_or_zero


def _general(x, z, y):
    return (x == z) / (1.0 + (x == y))


CASES = [
    (np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 1.0])),  # a tie in the middle
    (np.array([1.0, 3.0, 5.0]), np.array([2.0, 2.0, 1.0])),  # none
    (np.linspace(-1, 1, 12).reshape(3, 4), 0.25),  # a number on one side
    (np.linspace(-1, 1, 12).reshape(3, 4), np.array([0.0, 0.5, -2.0, 1.0])),  # broadcast
    (2.0, 2.0), (3.0, 1.0), (1.0, 3.0), (np.float64(2.0), 1.0),
]


@pytest.mark.parametrize("x, y", CASES)
@pytest.mark.parametrize("fn", [np.maximum, np.minimum])
def test_balanced_eq_equals_its_general_form(x, y, fn):
    z = fn(x, y)
    for a, b in ((x, y), (y, x)):
        got = s2s.balanced_eq(a, z, b)
        np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(_general(a, z, b)))
        g = np.full(np.shape(z), 3.0)
        np.testing.assert_array_equal(g * got, g * _general(a, z, b))


def test_balanced_eq_is_the_mask_without_ties_and_halves_ties():
    x, y = np.array([1.0, 3.0, 5.0]), np.array([2.0, 2.0, 1.0])
    mask = s2s.balanced_eq(x, np.maximum(x, y), y)
    assert mask.dtype == bool and mask.tolist() == [False, True, True]
    tied = s2s.balanced_eq(np.array([2.0, 3.0]), np.array([2.0, 3.0]), np.array([2.0, 1.0]))
    assert tied.tolist() == [0.5, 1.0]


def test_gradients_of_max_and_min_split_ties_in_float32_too():
    def f(x, y):
        return np.sum(np.maximum(x, y) * 2.0 + np.minimum(x, 0.5))

    x = np.array([0.5, 1.0, -1.0, 2.0], dtype=np.float32)
    y = np.array([0.5, 0.0, 3.0, 2.0], dtype=np.float32)
    gx, gy = s2sgrad.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [1.0 + 0.5, 2.0, 1.0, 1.0])
    np.testing.assert_allclose(gy, [1.0, 0.0, 2.0, 1.0])
    assert gx.dtype == np.float32 and gy.dtype == np.float32


def test_balanced_eq_of_dask_arrays_stays_lazy():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.array([1.0, 2.0, 3.0]), chunks=2)
    y = np.array([2.0, 2.0, 1.0])
    z = da.maximum(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = s2s.balanced_eq(x, z, y)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), [0.0, 0.5, 1.0])


@pytest.mark.parametrize("norm", [np.float64(3.0), 3.0, 0.0, np.float64(0.0), 1e300, 1e-300])
@pytest.mark.parametrize("power", [-1.0, -2.0, 1.0, 2.0, 0.0])
def test_power_or_zero_of_one_norm_equals_the_array_form(norm, power):
    with np.errstate(over="ignore", divide="ignore"):
        got = _power_or_zero(norm, power)
        expected = _power_or_zero(np.array([norm]), power)[0]
    assert type(got) is np.float64
    assert got == expected or (np.isinf(got) and np.isinf(expected))


def test_stack_rows_of_plain_rows():
    rows = [np.full(2, 1.0), np.full(2, 2.0)]  # visited last to first
    np.testing.assert_array_equal(s2s.stack_rows(rows, (2, 2)), [[2.0, 2.0], [1.0, 1.0]])
    np.testing.assert_array_equal(s2s.stack_rows(rows, (3, 2)), [[2.0, 2.0], [1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(s2s.stack_rows([1.0, np.float64(2.0)], (3,)), [2.0, 1.0, 0.0])
    parts = s2s.stack_rows([(np.ones(2), 1.0)], (2, None))  # rows that do not stack: one each
    assert len(parts) == 2


@pytest.mark.parametrize("shape, axis", [((6, 4), 0), ((6, 4), 1), ((6, 4), -1), ((3, 4, 5), 1), ((7,), 0)])
def test_cumprod_vjp_without_zeros_equals_the_exact_form(shape, axis):
    """Without a zero in x the adjoint is the backwards running sum of g * ans over x; the exact
    form (one product per position, taken where x has a zero) gives the same."""
    rng = np.random.default_rng(1)
    x, g = rng.uniform(0.5, 1.5, size=shape), rng.normal(size=shape)
    ans = np.cumprod(x, axis=axis)
    fast = s2s.cumprod_vjp(g, ans, x, axis)
    with_zero = x.copy()
    with_zero.flat[0] = 0.0
    exact = s2s.cumprod_vjp(g, np.cumprod(with_zero, axis=axis), with_zero, axis)
    assert fast.shape == shape and fast.flags.c_contiguous
    np.testing.assert_allclose(fast, np.flip(np.cumsum(np.flip(g * ans, axis), axis), axis) / x, rtol=1e-14)
    moved = np.moveaxis(x, axis, -1)  # the exact form's entries away from the zero's line agree
    away = np.ones(moved.shape, dtype=bool)
    away[(0,) * (moved.ndim - 1)] = False
    np.testing.assert_allclose(np.moveaxis(exact, axis, -1)[away], np.moveaxis(fast, axis, -1)[away], rtol=1e-12)


@pytest.mark.parametrize("row", [(), (3,), (2, 3)])
@pytest.mark.parametrize("at_padded", [np.nan, np.inf, 2.5])
def test_tails_of_rows_equal_the_elementwise_forms(row, at_padded):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(7,) + row)
    padded = np.tri(5, 6, k=-1, dtype=bool)
    mask = padded.reshape(padded.shape + (1,) * len(row))
    np.testing.assert_array_equal(s2s.tails(x, 1, padded), np.where(mask, x[-1], x[1:]))
    np.testing.assert_array_equal(s2s.tails(x, 1, padded, fill=False), np.where(mask, 0, x[1:]))
    value = rng.normal(size=(5, 6) + row)
    value[np.broadcast_to(mask, value.shape)] = at_padded  # adjoints of padded entries
    got = s2s.tails_vjp(value, x, 1, padded)
    expected = np.zeros_like(x)
    expected[1:] = np.sum(np.where(mask, 0, value), axis=0)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_tails_of_rows_of_a_loop_of_no_step():
    x = np.arange(6.0).reshape(3, 2)
    padded = np.tri(0, 2, k=-1, dtype=bool)
    assert s2s.tails(x, 1, padded).shape == (0, 2, 2)
    np.testing.assert_array_equal(s2s.tails_vjp(np.zeros((0, 2, 2)), x, 1, padded), np.zeros((3, 2)))
    np.testing.assert_array_equal(s2s.tails_vjp(np.zeros((0, 2)), x[:, 0], 1, padded), np.zeros(3))
