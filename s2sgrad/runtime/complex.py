"""Runtime helpers for complex numbers (numpy only; re-exported by s2sgrad.runtime): what
generated code calls for the adjoints and tangents of ``real``, ``imag``, ``abs`` and ``angle``.

The convention is autograd's and JAX's: for a real-valued ``f`` of a complex ``z = x + iy``, the
gradient is ``df/dx - i df/dy`` (the conjugate of the steepest-ascent direction), so a holomorphic
function's adjoint is ``g * f'(z)`` with no conjugate, and the adjoint of a real value is real.
The functions that are not holomorphic (``real``, ``imag``, ``conj``, ``abs``, ``angle``) state
their adjoints with these helpers.
"""

from __future__ import annotations

import numpy as np

from .broadcasting import broadcast

# Not in s2sgrad.runtime.__all__ (nor were they when this was runtime_complex.py, re-exported by
# name); generated code reads them as ``s2s.<name>`` all the same.
__all__ = [
    "complex_conj",
    "match_complex",
    "abs_slope",
    "angle_slope",
    "abs_slope_vjp",
    "angle_slope_vjp",
    "real_slope_zeros",
]


def _conj(x):
    """``np.conj(x)`` for a complex array (the adjoints of real functions of it), ``x`` else."""
    return np.conj(x) if x.dtype.kind == "c" else x


def complex_conj(x):
    """The conjugate of a complex ``x``; a real ``x`` itself (no copy): what the adjoint of a
    real function of ``x`` reads (``|x|^2``'s is ``2 g conj(x)``)."""
    return np.conj(x) if np.iscomplexobj(x) else x


def match_complex(x, g):
    """``g`` as the adjoint of ``x``: its real part when ``x`` is real, complex when ``x`` is; of
    ``x``'s shape where ``g`` is one number (a full sum's adjoint, which the builders pass on
    unbroadcast to a rule whose template reads its operand: ``np.sum(np.real(a @ b))``)."""
    if np.ndim(g) < np.ndim(x):
        g = broadcast(g, np.shape(x))
    if np.iscomplexobj(x):
        return g + 0j if not np.iscomplexobj(g) else g
    return np.real(g) if np.iscomplexobj(g) else g


def abs_slope(x):
    """``conj(x) / |x|`` (0 at 0): ``np.sign(x)`` for a real ``x``. ``g * abs_slope(x)`` is the
    adjoint of ``x`` in ``|x|``, ``real(t * abs_slope(x))`` its tangent."""
    if not np.iscomplexobj(x):
        return np.sign(x)
    size = np.abs(x)
    return np.conj(x) / np.where(size == 0, 1.0, size)


def angle_slope(x, deg=False):
    """``conj(1j * x) / |x|**2`` (0 at 0), in degrees with ``deg``: ``g * angle_slope(x)`` is the
    adjoint of ``x`` in ``np.angle(x)``, ``real(t * angle_slope(x))`` its tangent (0 for a real
    ``x``, whose angle is constant where it is differentiable)."""
    if not np.iscomplexobj(x):
        return np.zeros_like(x, dtype=np.result_type(x, 1.0)) if np.ndim(x) else 0.0
    size2 = np.real(x * np.conj(x))
    slope = -1j * np.conj(x) / np.where(size2 == 0, 1.0, size2)
    return slope * (180.0 / np.pi) if deg else slope



# ----- their derivatives, for reverse mode over generated forward-mode code (s2sgrad.hvp) ------


def abs_slope_vjp(g, x):
    """Adjoint of ``x`` in ``abs_slope(x)``: 0 for a real ``x`` (a sign is piecewise constant)."""
    if not np.iscomplexobj(x):
        return np.zeros(np.shape(x), np.result_type(x, 1.0)) if np.ndim(x) else 0.0
    size = np.abs(x)
    safe = np.where(size == 0, 1.0, size)
    out = np.conj(g) / safe - np.real(g * np.conj(x)) * np.conj(x) / safe ** 3
    return np.where(size == 0, 0.0, out)


def angle_slope_vjp(g, x, deg=False):
    """Adjoint of ``x`` in ``angle_slope(x, deg)``: 0 for a real ``x``."""
    if not np.iscomplexobj(x):
        return np.zeros(np.shape(x), np.result_type(x, 1.0)) if np.ndim(x) else 0.0
    g = g * (180.0 / np.pi) if deg else g
    size2 = np.real(x * np.conj(x))
    safe = np.where(size2 == 0, 1.0, size2)
    out = np.conj(-1j * g) / safe - 2.0 * np.real(-1j * g * np.conj(x)) * np.conj(x) / safe ** 2
    return np.where(size2 == 0, 0.0, out)


def real_slope_zeros(x):
    """The derivative in ``x`` of ``abs_slope_vjp`` and ``angle_slope_vjp`` for a real ``x``: 0
    (their values are piecewise constant there). Not written for a complex ``x``: raises."""
    if np.iscomplexobj(x):
        raise NotImplementedError("third derivatives of abs or angle of complex values")
    return np.zeros(np.shape(x), np.result_type(x, 1.0)) if np.ndim(x) else 0.0
