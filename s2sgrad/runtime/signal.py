"""The convolution of scipy's signal module as its derivatives call it: ``s2s.signal_convolve`` (scipy's
n-dimensional ``convolve``, whose rule is scipy.signal.convolve's, so every order reads it again),
and the window a mode cuts from the full result (``s2s.signal_window``) with its transpose
(``s2s.signal_embed``: an adjoint put back at that window of zeros of the full shape).

scipy is not a dependency of s2sgrad: generated code calls these only where the user's code called
scipy.signal, so scipy is imported when a helper first runs."""

from __future__ import annotations

import importlib

import numpy as np

__all__ = ["signal_convolve", "signal_window", "signal_embed"]


def signal_convolve(in1, in2, mode="full"):
    """scipy's n-dimensional ``convolve(in1, in2, mode)`` (scipy loads its signal module when
    first read)."""
    return importlib.import_module("scipy").signal.convolve(in1, in2, mode)


def _window(shape1, shape2, mode):
    """The index of the part of a full convolution of arrays of shapes ``shape1`` and ``shape2``
    that ``mode`` keeps: all of it (full), centred on ``in1`` (same), where the two overlap
    fully (valid; scipy swaps the operands when ``in2`` is the larger)."""
    if mode == "full":
        return tuple(slice(None) for _ in shape1)
    if mode == "same":
        return tuple(slice((n2 - 1) // 2, (n2 - 1) // 2 + n1) for n1, n2 in zip(shape1, shape2))
    if mode == "valid":
        return tuple(slice(min(n1, n2) - 1, max(n1, n2)) for n1, n2 in zip(shape1, shape2))
    raise ValueError(f"convolve: unknown mode {mode!r} (full, same or valid)")


def signal_window(value, shape1, shape2, mode="full"):
    """The part of ``value`` (a full convolution of arrays of shapes ``shape1``, ``shape2``)
    that ``mode`` keeps (linear)."""
    return value[_window(tuple(shape1), tuple(shape2), mode)]


def signal_embed(value, shape1, shape2, mode="full"):
    """The transpose of ``signal_window``: zeros of the full convolution's shape with ``value``
    at the window ``mode`` keeps."""
    full = tuple(n1 + n2 - 1 for n1, n2 in zip(shape1, shape2))
    out = np.zeros(full, dtype=np.result_type(value, 0.0))
    out[_window(tuple(shape1), tuple(shape2), mode)] = value
    return out
