"""Shapes known at transform time: operands' shapes -> a result's shape (Rule.result_shape).

Code specialized for a call's array shapes (specialize.shape_signature) knows each array
parameter's shape as a tuple of dims: the literal ``1``, or a label (``"n0"``, ``"n1"``, ...)
standing for one length other than 1 (in a signature, two labels are two lengths). A length that is a small
multiple of another (at most MULTIPLE_MOST times the least length it is a multiple of) is
labelled as that multiple (``"4*n0"``): one length, one label, so arithmetic of lengths
(``a[H:2 * H]`` of an ``a`` of length ``4*n0``, ``H`` of ``n0``) gives labels too. A length the
code writes as a literal (``np.zeros((3, 4))``, ``w.reshape(10, 10)``) is that int. A computed
multiple or a literal may be the length of another label, so dims are compared only for
equality, never to conclude that two lengths differ. A trimmed dim
``(dim, k)`` is ``dim`` less ``k`` (``x[1:]``'s, ``x[:-1]``'s: ``("n0", 1)``): one length for
every read, which may be 1. ``None`` is a dim not known. Each function takes the operands'
shapes (``None`` for an operand whose shape is not known) and returns the result's shape, or
None where it is not known (or the call would raise).
"""

from __future__ import annotations

from typing import Callable, Optional

UNKNOWN = None  # a dim not known
MULTIPLE_MOST = 8  # the largest multiple of a length a label writes as one


def times(dim, k: int):
    """``k`` times the length ``dim`` (1, a label or a literal length) as a label (a literal
    length for a literal); None where that is not one (beyond MULTIPLE_MOST times a least
    length, or a length not known)."""
    if type(dim) is int and k >= 1:
        return dim * k
    found = multiple(dim)
    if found is None or k < 1:
        return UNKNOWN
    coefficient, base = found
    if coefficient * k > MULTIPLE_MOST:
        return UNKNOWN
    return base if coefficient * k == 1 else f"{coefficient * k}*{base}"


def multiple(dim) -> Optional[tuple]:
    """``(k, base)`` for a label ``k*base`` (``(1, label)`` for a plain label); None otherwise."""
    if not is_label(dim):
        return None
    if "*" not in dim:
        return 1, dim
    k, base = dim.split("*", 1)
    return int(k), base


def sliced(dim, lower, upper):
    """The length of ``x[lower:upper]`` along an axis of length ``dim``: ``lower`` 0 or a length
    (a dim), ``upper`` a length or None (the end); UNKNOWN where not known (the bounds are not
    multiples of one length inside the axis)."""
    if upper is None or upper == dim:
        if lower == 0:
            return dim
        upper = dim
    if type(dim) is int and type(lower) is int and type(upper) is int:  # literal lengths
        length = min(upper, dim) - lower
        return length if length >= 1 else UNKNOWN
    ends = [multiple(d) for d in (dim, upper)] + [(0, None) if lower == 0 else multiple(lower)]
    if None in ends or len({base for _, base in ends} - {None}) != 1:
        return UNKNOWN
    (whole, base), (stop, _), (start, _) = ends
    if not 0 <= start < stop <= whole:
        return UNKNOWN
    return base if stop - start == 1 else f"{stop - start}*{base}"


def is_label(dim) -> bool:
    """Whether ``dim`` is a label (a length of the signature, not 1)."""
    return isinstance(dim, str)


def is_literal(dim) -> bool:
    """Whether ``dim`` is a literal length other than 1 (an int >= 2)."""
    return type(dim) is int and dim >= 2


def not_one(dim) -> bool:
    """Whether ``dim`` is a length known not to be 1: a label or a literal length."""
    return is_label(dim) or is_literal(dim)


def broadcast(*shapes: Optional[tuple]) -> Optional[tuple]:
    """The shape numpy broadcasting gives ``shapes``: per axis (aligned on the right) the one
    label there (every other dim there is 1 or that length, or the call raises), else the one
    trimmed dim with ones, ``1`` where every dim is 1, unknown otherwise; None where two labels
    meet (the call raises) or a shape is not known."""
    if any(shape is None for shape in shapes):
        return None
    rank = max((len(shape) for shape in shapes), default=0)
    out = []
    for axis in range(rank):
        dims = {shape[axis - rank + len(shape)] for shape in shapes if axis - rank + len(shape) >= 0}
        labels = {d for d in dims if is_label(d)}
        others = dims - labels - {1}
        if len(labels) > 1:
            return None
        out.append(labels.pop() if labels else 1 if not others else
                   others.pop() if len(others) == 1 and UNKNOWN not in others else UNKNOWN)
    return tuple(out)


def trimmed(dim, k: int):
    """``dim`` less ``k`` (``k`` > 0): a trimmed dim (module docstring), a literal length less
    ``k`` (none where that is not a positive length); None where not known."""
    if dim is UNKNOWN:
        return UNKNOWN
    if type(dim) is int:
        return dim - k if dim - k >= 1 else UNKNOWN
    if isinstance(dim, tuple):
        return (dim[0], dim[1] + k)
    return (dim, k)


def matmul(shapes: tuple) -> Optional[tuple]:
    """``a @ b`` for vectors and matrices (stacks of them: not known)."""
    if len(shapes) != 2 or any(s is None or not 1 <= len(s) <= 2 for s in shapes):
        return None
    a, b = shapes
    return a[:-1] + b[1:]


def dot(shapes: tuple) -> Optional[tuple]:
    """``np.dot(a, b)``: matmul's shape for vectors and matrices; a number's shape is the other's."""
    if len(shapes) == 2 and () in shapes:
        return broadcast(*shapes)
    return matmul(shapes)


def outer(shapes: tuple) -> Optional[tuple]:
    """``np.outer(a, b)`` of numbers and vectors: one axis per operand, its length (1 for a number)."""
    if len(shapes) != 2 or any(s is None or len(s) > 1 for s in shapes):
        return None
    return tuple(s[0] if s else 1 for s in shapes)


def transpose(shapes: tuple) -> Optional[tuple]:
    """``a.T``, ``np.transpose(a)`` (no axes given)."""
    return shapes[0][::-1] if len(shapes) == 1 and shapes[0] is not None else None


def square(shapes: tuple) -> Optional[tuple]:
    """``np.linalg.inv(a)``, ``np.linalg.cholesky(a)``: a square matrix's (a stack's) shape."""
    return shapes[0] if len(shapes) == 1 and shapes[0] is not None and len(shapes[0]) >= 2 else None


def solve(shapes: tuple) -> Optional[tuple]:
    """``np.linalg.solve(a, b)`` of one matrix ``a``: ``b``'s shape (a vector or a matrix)."""
    if len(shapes) != 2 or shapes[0] is None or len(shapes[0]) != 2 or shapes[1] is None:
        return None
    return shapes[1] if 1 <= len(shapes[1]) <= 2 else None


def determinant(shapes: tuple) -> Optional[tuple]:
    """``np.linalg.det(a)``: one number a matrix of the stack."""
    return shapes[0][:-2] if len(shapes) == 1 and shapes[0] is not None and len(shapes[0]) >= 2 else None


def sign_and_log(shapes: tuple) -> Optional[tuple]:
    """``np.linalg.slogdet(a)``'s two outputs: one number each a matrix of the stack."""
    found = determinant(shapes)
    return None if found is None else (found, found)


def diagonal_of(shapes: tuple) -> Optional[tuple]:
    """``np.diag(v)``: a vector's square matrix, a square matrix's diagonal (other shapes: not
    known here)."""
    if len(shapes) != 1 or shapes[0] is None:
        return None
    (shape,) = shapes
    if len(shape) == 1:
        return (shape[0], shape[0])
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] is not UNKNOWN:
        return (shape[0],)
    return None


def number(shapes: tuple) -> Optional[tuple]:
    """``np.linalg.norm(x)``, ``np.linalg.norm(x, ord)`` (no axis), ``np.vdot(a, b)``: one number,
    whatever the shapes (the first two positional operands' only)."""
    return () if 1 <= len(shapes) <= 2 and all(shape is not None for shape in shapes) else None


def trace(shapes: tuple) -> Optional[tuple]:
    """``np.trace(a)`` of a matrix: one number."""
    return () if len(shapes) == 1 and shapes[0] is not None and len(shapes[0]) == 2 else None


def rows_product(product: Callable, right: bool = False) -> Callable:
    """The shape of a loop's per-step products stacked: ``s2s.rows_matmul(a, n, b)`` is ``a[t] @ b``
    for ``t < n`` (``right``: ``b @ a[t]``, ``s2s.rows_rmatmul``), ``n`` rows (a length not known
    here) of ``product``'s shape."""

    def shape(shapes: tuple) -> Optional[tuple]:
        if len(shapes) != 3 or not shapes[0]:
            return None
        row = product((shapes[2], shapes[0][1:]) if right else (shapes[0][1:], shapes[2]))
        return None if row is None else (UNKNOWN,) + row

    return shape


def known(shape) -> bool:
    """Whether ``shape`` is a tuple of known dims (its arrays' shapes all equal)."""
    return isinstance(shape, tuple) and UNKNOWN not in shape
