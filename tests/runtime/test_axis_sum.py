"""``s2s.axis_sum`` and ``s2s.axis_mean`` (runtime/sums.py) are numpy's sum and mean over axes
whichever way they compute them: a product with ones (a C-contiguous float array, adjacent axes, a
last axis up to PAIRWISE_MOST long) or numpy's own (every other case), with numpy's shape, dtype
and errors."""

import numpy as np
import pytest

from s2sgrad import runtime as s2s
from s2sgrad.runtime.sums import PAIRWISE_MOST, _plan

RNG = np.random.default_rng(11)

SHAPES_AXES = [((7, 3), 0), ((7, 3), 1), ((7, 3), -1), ((5, 6, 3), 1), ((5, 6, 3), 2), ((5, 6, 3), 0),
               ((5, 6, 3), (0, 1)), ((5, 6, 3), (1, 2)), ((5, 6, 3), (-1, -2)), ((5, 6, 3), (0, 2)),
               ((5, 6, 3), (0, 1, 2)), ((4,), 0), ((4,), (0,)), ((2, 1, 3), 1), ((3, PAIRWISE_MOST + 1), 1),
               ((3, PAIRWISE_MOST), 1), ((0, 3), 0), ((3, 0), 1), ((2, 3, 4, 5), (1, 2))]


@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_sum_numpy_takes(shape, axis, keepdims, dtype):
    x = RNG.normal(size=shape).astype(dtype)
    want = np.sum(x, axis=axis, keepdims=keepdims)
    got = s2s.axis_sum(x, axis, keepdims)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype is np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_mean_numpy_takes(shape, axis, keepdims, dtype):
    x = RNG.normal(size=shape).astype(dtype)
    with np.errstate(all="ignore"):  # (the mean over no entries: nan, as numpy's)
        want = np.mean(x, axis=axis, keepdims=keepdims)
        got = s2s.axis_mean(x, axis, keepdims)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype is np.float32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("shape", [(7, 3), (4,), (0, 3), (2, 3, 4), ()])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, bool])
def test_a_whole_sum_and_mean_are_numpys_exactly(shape, keepdims, dtype):
    """No axis: numpy's own reduction (its pairwise sum), the mean that sum over the count."""
    x = (RNG.normal(size=shape) * 3).astype(dtype)
    for ours, numpys in ((s2s.axis_sum, np.sum), (s2s.axis_mean, np.mean)):
        with np.errstate(all="ignore"):  # (the mean of no entries: nan, as numpy's)
            want, got = numpys(x, keepdims=keepdims), ours(x, None, keepdims)
        assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)
        np.testing.assert_array_equal(got, want)


def test_which_sums_are_products():
    assert _plan((63, 63, 3), 1, False) == (63, 63, 3, (63, 3))
    assert _plan((63, 63, 3), -1, True) == (3969, 3, 1, (63, 63, 1))
    assert _plan((100000, 3), 0, False) == (1, 100000, 3, (3,))
    assert _plan((8, 5, 4), (0, 1), False) == (1, 40, 4, (4,))
    assert _plan((5, 6, 3), (0, 2), False) is None  # axes apart
    assert _plan((3, PAIRWISE_MOST + 1), 1, False) is None  # numpy's pairwise sum, the more accurate
    assert _plan((7,), 0, False) is None  # a whole sum
    assert _plan((7, 3), (0, 0), False) is None  # numpy raises (a repeated axis)
    assert _plan((7, 3), 2, False) is None  # numpy raises (out of range)


@pytest.mark.parametrize("x", [np.arange(12).reshape(4, 3), np.ones((4, 3), bool),
                               np.asfortranarray(RNG.normal(size=(4, 3))), RNG.normal(size=(6, 4))[::2],
                               (RNG.normal(size=(4, 3)) + 1j).astype(complex), 2.5, [[1.0, 2.0], [3.0, 4.0]]])
def test_numpy_s_own_sum_elsewhere(x):
    for axis in (0, -1, None):
        want = np.sum(x, axis=axis)
        got = s2s.axis_sum(x, axis)
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
        try:
            want = np.mean(x, axis=axis)
        except np.exceptions.AxisError:  # (a number's axis 0: numpy's mean raises, as does the runtime's)
            with pytest.raises(np.exceptions.AxisError):
                s2s.axis_mean(x, axis)
            continue
        got = s2s.axis_mean(x, axis)
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_numpy_s_errors():
    x = RNG.normal(size=(4, 3))
    for axis in (2, (0, 0)):
        with pytest.raises((ValueError, np.exceptions.AxisError)):
            s2s.axis_sum(x, axis)


def test_the_result_is_a_new_array():
    x = RNG.normal(size=(5, 3))
    y = s2s.axis_sum(x, 1)
    y += 1.0  # (writable, not a view of x)
    np.testing.assert_allclose(y - 1.0, np.sum(x, axis=1))
    assert not np.shares_memory(y, x)


def test_a_loop_of_pairs_gradient_uses_it():
    """The adjoint of a broadcast operand in code made for the shapes sums with it."""
    import s2sgrad

    def energy(P):
        D = P[:, None, :] - P[None, :, :]
        return np.sum(np.sqrt(np.sum(D ** 2, axis=-1) + 1.0))

    P = RNG.normal(size=(6, 3))
    g = s2sgrad.grad(energy)
    first, second = g(P), g(P)
    D = P[:, None, :] - P[None, :, :]
    w = 1.0 / np.sqrt(np.sum(D ** 2, axis=-1) + 1.0)
    want = 2.0 * (np.sum(w[:, :, None] * D, axis=1))
    np.testing.assert_allclose(first, want, rtol=1e-12)
    np.testing.assert_allclose(second, want, rtol=1e-12)
    assert "s2s.axis_sum(" in s2sgrad.source(g, like=(P,))
