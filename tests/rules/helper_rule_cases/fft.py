"""Cases for the rules of the helpers of s2sgrad/runtime/fft.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."


def _out(y):
    """A real scalar of a helper's output (complex outputs by both parts)."""
    weights = np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5)
    return np.sum(np.real(y) * weights) + np.sum(np.imag(y) * weights * 0.5)


def h_fft_vjp(g, a): return _out(s2s.fft_vjp(g, a, "fft"))
def h_fft_vjp_n(g, a): return _out(s2s.fft_vjp(g, a, "ifft", 7, 0, "ortho"))
def h_fft_vjp_rfft(g, a): return _out(s2s.fft_vjp(g, a, "rfft"))
def h_fft_vjp_irfft(g, a): return _out(s2s.fft_vjp(g, a, "irfft", 8))
def h_fft2_vjp(g, a): return _out(s2s.fft2_vjp(g, a, "fft2", (3, 5)))
def h_fftn_vjp(g, a): return _out(s2s.fftn_vjp(g, a, "ifftn", None, (0,), "ortho"))
def h_fft2_vjp_irfft2(g, a): return _out(s2s.fft2_vjp(g, a, "irfft2"))
def h_fftn_vjp_rfftn(g, a): return _out(s2s.fftn_vjp(g, a, "rfftn", (3, 4)))
def h_fft_apply(x): return _out(s2s.fft_apply(x, "fft"))
def h_fft_apply_irfft(x): return _out(s2s.fft_apply(x, "irfft", 6, -1, "forward"))
def h_fft2_apply(x): return _out(s2s.fft2_apply(x, "ifft2"))
def h_fftn_apply(x): return _out(s2s.fftn_apply(x, "ifftn"))


def _u(*shapes):
    return tuple(uniform(s) for s in shapes)


CASES = [
    (R + "fft_vjp", h_fft_vjp, _u((2, 6), (2, 6)), (0,), 1e-5),
    (R + "fft_vjp", h_fft_vjp_n, _u((7, 2), (5, 2)), (0,), 1e-5),
    (R + "fft_vjp", h_fft_vjp_rfft, _u((4,), (6,)), (0,), 1e-5),
    (R + "fft_vjp", h_fft_vjp_irfft, _u((8,), (5,)), (0,), 1e-5),
    (R + "fft2_vjp", h_fft2_vjp, _u((3, 5), (4, 4)), (0,), 1e-5),
    (R + "fftn_vjp", h_fftn_vjp, _u((3, 4), (3, 4)), (0,), 1e-5),
    (R + "fft2_vjp", h_fft2_vjp_irfft2, _u((3, 4), (3, 3)), (0,), 1e-5),
    (R + "fftn_vjp", h_fftn_vjp_rfftn, _u((3, 3), (2, 4)), (0,), 1e-5),
    (R + "fft_apply", h_fft_apply, _u((3, 4)), None, 1e-5),
    (R + "fft_apply", h_fft_apply_irfft, _u((4,)), None, 1e-5),
    (R + "fft2_apply", h_fft2_apply, _u((3, 4)), None, 1e-5),
    (R + "fftn_apply", h_fftn_apply, _u((3, 4)), None, 1e-5),
]
