"""Elementwise helpers (numpy only): the pieces of elementwise derivatives that need more than
one expression, e.g. ties in max/min (``s2s.balanced_eq``), ``x**y`` at 0
(``s2s.safe_power_base``, ``s2s.safe_log_base``, ``s2s.exponent_slope``), clipping (``s2s.inside``), ``math.log`` with a
base (``s2s.log_vjp``), ``np.sinc`` (``s2s.sinc_slope``) and the adjoint of np.where's chosen
operand (``s2s.select``)."""

from __future__ import annotations

import numpy as np

from .broadcasting import _foreign, _ndarray, _operand

__all__ = [
    "balanced_eq",
    "safe_power_base",
    "safe_log_base",
    "exponent_slope",
    "inside",
    "log_vjp",
    "sinc_slope",
    "select",
]

_NUMBERS = (float, np.float64)
_BOOLS = (bool, np.bool_)


def balanced_eq(x, z, y):
    """1 where x wins a max/min (``z`` the result, ``y`` the other operand), 0.5 on ties
    (autograd's convention), 0 elsewhere: where nothing ties, the mask ``x == z`` itself (a
    product with it is the product with 1s and 0s; numpy's quotient of a mask by floats, the
    general form, costs twenty times the comparisons)."""
    won, tied = x == z, x == y
    if type(tied) is _ndarray and not tied.any() or type(tied) in _BOOLS and not tied:
        return won
    return won / (1.0 + tied)  # (another library's arrays too: no value read here)


def safe_power_base(x2):
    """The exponent in d/dx x**y = y * x**(y-1), safe where y == 0."""
    return np.where(x2, x2 - 1, 1.0) if np.ndim(x2) else (x2 - 1 if x2 != 0 else 1.0)


def safe_log_base(x1):
    """log(x) with x == 0 replaced by 1, so that d/dy x**y at x == 0 is 0, not NaN."""
    return np.log(np.where(x1 == 0, 1.0, x1)) if np.ndim(x1) else np.log(x1 if x1 != 0 else 1.0)


def exponent_slope(value, x, ans):
    """``value * log(x) * ans``, d x**y along the exponent's ``value`` (``ans`` is x**y; log(x)
    taken as 0 where x is 0), and 0 where ``value`` is 0: an exponent that does not move (an
    integer counter read back from a tape, a constant) adds nothing, even where log(x) is not
    real (x < 0)."""
    moves = _operand(value) != 0
    base = safe_log_base(np.where(moves, x, 1.0)) if np.ndim(moves) or np.ndim(x) else \
        (safe_log_base(x) if moves else 0.0)
    return np.where(moves, value * base * ans, 0.0) if np.ndim(moves) or np.ndim(base) else \
        (value * base * ans if moves else 0.0 * value)


def inside(a, a_min=None, a_max=None):
    """1.0 where ``a`` lies inside the clip interval (its gradient passes), 0.0 where clipped."""
    a = _operand(a)  # another library's array: its own mask, no in-place write into an ndarray
    mask = np.ones_like(a, dtype=bool) if _foreign(a) else np.ones(np.shape(a), dtype=bool)
    if a_min is not None:
        mask = mask & (a >= a_min)
    if a_max is not None:
        mask = mask & (a <= a_max)
    return mask


def log_vjp(g, x, base=None):
    """Adjoint of ``math.log(x, base)``."""
    return g / x if base is None else g / (x * np.log(base))


def sinc_slope(x):
    """d/dx sinc(x) = (cos(pi x) - sinc(x)) / x, and 0 at x == 0."""
    x = _operand(x)
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 0.0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)


def _power_or_zero(norm, power):
    """``norm ** power``, 0 where the norm is 0: at x = 0 a norm has no derivative, and its
    adjoint is taken as 0 there (a subgradient, and what central differences give)."""
    if type(norm) in _NUMBERS:  # one float64 norm (a vector's): no 0-d array made
        norm = np.float64(norm)  # (numpy's power: inf where it overflows, as below)
        return norm ** power if power >= 0 or norm != 0 else np.float64(0.0)
    if _foreign(norm):  # another library's array: no out= into it, no branch on its values
        norm = norm.astype(np.result_type(norm.dtype, np.float64))
        if power >= 0:
            return norm ** power
        nonzero = norm != 0
        return np.where(nonzero, np.where(nonzero, norm, 1.0) ** power, 0.0)
    norm = np.asarray(norm, dtype=np.result_type(norm, np.float64))
    if power >= 0 or np.all(norm != 0):
        return norm ** power
    out = np.zeros_like(norm)
    np.power(norm, power, out=out, where=norm != 0)
    return out


def select(condition, value, taken=True):
    """``np.where(condition, value, 0.0)`` (``taken``) or ``np.where(condition, 0.0, value)``:
    the adjoint of np.where's chosen operand (and of a clip bound). For a boolean array
    ``condition`` and a float array or number ``value``: ``value`` times the mask (numpy's select
    costs a branch per element, several times the product on a random mask), kept where its sum
    is finite (every element then is, and equals np.where's, a dropped one 0.0 or -0.0); else
    np.where's value (an infinity or nan that the mask drops)."""
    if type(condition) is _ndarray and condition.dtype == np.bool_ and type(value) in _NUMBERS and \
            value - value == 0:  # a finite number (an upstream standing for an array): no check
        return value * (condition if taken else ~condition)
    if type(condition) is _ndarray and condition.dtype == np.bool_ and (
            type(value) in _NUMBERS or (type(value) is _ndarray and value.dtype.kind in "fc")):
        with np.errstate(invalid="ignore", over="ignore"):  # inf * 0, a sum that overflows
            out = value * (condition if taken else ~condition)
            kept = np.isfinite(out.sum())
        if kept:
            return out
    return np.where(condition, value, 0.0) if taken else np.where(condition, 0.0, value)
