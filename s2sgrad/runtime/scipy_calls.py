"""scipy's functions as the derivatives of its signal and linalg functions call them, each with the
rule of the scipy function it calls, so every order reads them again: ``s2s.signal_convolve``
(the n-dimensional ``convolve``), ``s2s.sylvester`` (``solve_sylvester``), ``s2s.solve_triangular``;
the window a convolution's mode cuts from the full result (``s2s.signal_window``) with its
transpose (``s2s.signal_embed``: an adjoint put back at that window of zeros of the full shape);
a triangle of a matrix (``s2s.triangle_part``) and the ``trans`` of a triangular solve's adjoint
(``s2s.adjoint_trans``).

scipy is not a dependency of s2sgrad: generated code calls these only where the user's code called
scipy, so scipy is imported when a helper first runs."""

from __future__ import annotations

import importlib

import numpy as np

__all__ = ["signal_convolve", "signal_window", "signal_embed", "sylvester", "solve_triangular", "triangle_part",
           "banded_dense", "dense_band",
           "adjoint_trans"]


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


def sylvester(a, b, q):
    """The ``x`` with ``a @ x + x @ b == q`` (scipy's ``solve_sylvester``)."""
    return importlib.import_module("scipy").linalg.solve_sylvester(a, b, q)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """scipy's ``solve_triangular(a, b, trans, lower, unit_diagonal)``."""
    return importlib.import_module("scipy").linalg.solve_triangular(a, b, trans, lower, unit_diagonal)


def triangle_part(x, lower=False, unit_diagonal=False):
    """The triangle of ``x`` a triangular solve reads (without the diagonal where it is taken
    to be ones): a projection, its own transpose."""
    if lower:
        return np.tril(x, -1 if unit_diagonal else 0)
    return np.triu(x, 1 if unit_diagonal else 0)


def adjoint_trans(trans=0):
    """The ``trans`` of the solve in a triangular solve's adjoint (real matrices): 1 (transposed)
    where ``trans`` is 0 or 'N', else 0."""
    return 1 if trans in (0, "N") else 0


def banded_dense(l_and_u, ab):
    """The square matrix whose band ``ab`` holds in scipy's ``solve_banded`` storage
    (``ab[u + i - j, j] == a[i, j]``, ``(l, u) = l_and_u``); linear in ``ab``, the entries of
    ``ab`` outside the matrix (its corners) read as nothing."""
    lower, upper = (int(k) for k in l_and_u)
    ab = np.asarray(ab)
    n = ab.shape[-1]
    out = np.zeros(ab.shape[:-2] + (n, n), dtype=ab.dtype)
    for row in range(lower + upper + 1):
        offset = upper - row  # the diagonal this row of ab holds: a[i, i + offset]
        cols = np.arange(max(offset, 0), min(n, n + offset))
        out[..., cols - offset, cols] = ab[..., row, cols]
    return out


def dense_band(l_and_u, a):
    """The transpose of ``banded_dense``: the band of the square matrix ``a`` in ``solve_banded``'s
    storage, zeros at the corners that hold no entry."""
    lower, upper = (int(k) for k in l_and_u)
    a = np.asarray(a)
    n = a.shape[-1]
    out = np.zeros(a.shape[:-2] + (lower + upper + 1, n), dtype=a.dtype)
    for row in range(lower + upper + 1):
        offset = upper - row
        cols = np.arange(max(offset, 0), min(n, n + offset))
        out[..., row, cols] = a[..., cols - offset, cols]
    return out
