"""Adjoints of the discrete Fourier transforms (numpy only): ``np.fft.fft``, ``ifft``, ``fft2``,
``ifft2``, ``fftn``, ``ifftn``, ``rfft``, ``irfft`` and the 2-D and n-D real ones (``s2s.fft_vjp``, ``fft2_vjp``,
``fftn_vjp``: one per signature, so each declares its transforms' defaults), and the transforms
themselves by name (``s2s.fft_apply``, ...: the adjoints of those).

Each transform is linear; its matrix is symmetric (the DFT, scaled by ``norm``), so under the
convention of s2sgrad's complex numbers (no conjugate: autograd's and JAX's) its adjoint is the
same transform of the upstream, then the input's resizing (``n``, ``s``: zeros cut or added)
undone. ``rfft`` keeps the first ``n // 2 + 1`` outputs of the full transform of a real input;
``irfft`` reads the real parts of the first and (even ``n``) last input and the others twice.
"""

from __future__ import annotations

import numpy as np

from .complex import match_complex

__all__ = ["fft_vjp", "fft2_vjp", "fftn_vjp", "fft_apply", "fft2_apply", "fftn_apply"]


def fft_apply(x, kind, n=None, axis=-1, norm=None):
    """``np.fft.<kind>(x, n, axis, norm)``: ``fft``, ``ifft``, ``rfft``, ``irfft``."""
    return getattr(np.fft, kind)(x, n, axis, norm)


def fft2_apply(x, kind, s=None, axes=(-2, -1), norm=None):
    """``np.fft.<kind>(x, s, axes, norm)``: ``fft2``, ``ifft2``, ``rfft2``, ``irfft2``."""
    return getattr(np.fft, kind)(x, s, axes, norm)


def fftn_apply(x, kind, s=None, axes=None, norm=None):
    """``np.fft.<kind>(x, s, axes, norm)``: ``fftn``, ``ifftn``, ``rfftn``, ``irfftn`` (sizes with
    no axes name the last ``len(s)`` axes, written out as numpy 2 asks)."""
    if s is not None and axes is None:
        axes = tuple(range(-len(s), 0))
    return getattr(np.fft, kind)(x, s, axes, norm)


def fft_vjp(g, a, kind, n=None, axis=-1, norm=None):
    """Adjoint of ``a`` in ``np.fft.<kind>(a, n, axis, norm)`` (fft, ifft, rfft, irfft)."""
    return _adjoint(g, a, n, axis, norm, kind)


def fft2_vjp(g, a, kind, s=None, axes=(-2, -1), norm=None):
    """Adjoint of ``a`` in ``np.fft.<kind>(a, s, axes, norm)`` (fft2, ifft2, rfft2, irfft2)."""
    return _adjoint(g, a, s, axes, norm, kind)


def fftn_vjp(g, a, kind, s=None, axes=None, norm=None):
    """Adjoint of ``a`` in ``np.fft.<kind>(a, s, axes, norm)`` (fftn, ifftn, rfftn, irfftn)."""
    return _adjoint(g, a, s, axes, norm, kind)


def _axes(kind, s, axes, ndim):
    """The transformed axes (non-negative) and their lengths as given (None: unchanged)."""
    if kind in ("fft", "ifft", "rfft", "irfft"):
        return [axes % ndim], [s]
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    axes = [a % ndim for a in axes]
    return axes, list(s) if s is not None else [None] * len(axes)


def _resized(x, axis, length):
    """``x`` cut or padded with zeros along ``axis`` to ``length``."""
    have = x.shape[axis]
    if have >= length:
        return np.take(x, np.arange(length), axis=axis)
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, length - have)
    return np.pad(x, widths)


def _adjoint(g, a, s, axes, norm, kind):
    """Adjoint of ``a`` in ``np.fft.<kind>(a, s, axes, norm)`` (``n``, ``axis`` for the 1-D
    kinds), ``g`` the output's."""
    g = np.asarray(g)
    a_shape = np.shape(a)
    if g.ndim < len(a_shape):  # one number standing for the output's array
        g = np.broadcast_to(g, getattr(np.fft, kind)(
            np.zeros(a_shape), s, tuple(range(-len(s), 0)) if s is not None and axes is None
            else axes, norm).shape)
    axes, lengths = _axes(kind, s, axes, len(a_shape))
    last = axes[-1]
    if kind.startswith("rfft"):  # the full transform's first n // 2 + 1 outputs on the last axis
        n = lengths[-1] if lengths[-1] is not None else a_shape[last]
        out = np.fft.fftn(_resized(g, last, n), axes=axes, norm=norm)
    elif kind.startswith("irfft"):  # y = Re(L x): L^T g, the inverse of g cut, doubled inside
        n = g.shape[last]
        half = n // 2 + 1
        out = _resized(np.fft.ifftn(g, axes=axes, norm=norm), last, half)
        twice = np.full(half, 2.0)
        twice[0] = 1.0
        if n % 2 == 0:
            twice[-1] = 1.0
        out = out * twice.reshape((-1,) + (1,) * (g.ndim - 1 - last))
    else:  # the transform of g itself: its matrix is symmetric
        out = getattr(np.fft, kind)(g, None, axes[0] if kind in ("fft", "ifft") else tuple(axes), norm)
    for axis in axes:
        out = _resized(out, axis, a_shape[axis])
    return match_complex(a, out)
