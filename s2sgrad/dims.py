"""Shapes known at transform time: operands' shapes -> a result's shape (Rule.result_shape).

Code specialized for a call's array shapes (specialize.shape_signature) knows each array
parameter's shape as a tuple of dims: a literal length (``0``, ``1``), or a label (``"n0"``,
``"n1"``, ...) standing for one length of 2 or more (in a signature, two labels are two lengths,
numbered in increasing order: ``n0 < n1 < ...``, so ``n1 - n0 + 1`` is 2 or more).
A length that is a small multiple of another (at most MULTIPLE_MOST times the least length it is
a multiple of) is labelled as that multiple (``"4*n0"``): one length, one label, so arithmetic of
lengths (``a[H:2 * H]`` of an ``a`` of length ``4*n0``, ``H`` of ``n0``) gives labels too. A
length the code writes as a literal (``np.zeros((3, 4))``, ``w.reshape(10, 10)``) is that int. A
computed multiple or a literal may be the length of another label, so dims are compared only for
equality, never to conclude that two lengths differ.

Lengths computed from lengths are sums (Linear: labels times ints, plus an int): a trimmed dim
``(dim, k)`` is ``dim`` less ``k`` (``x[1:]``'s, ``x[:-1]``'s: ``("n0", 1)``), any other sum is its
Linear (``m = len(x) - len(w) + 1``: ``n1 - n0 + 1``). Such a dim is one length for every read,
``max(0, sum)`` (a slice past its bounds is empty; a maker given a negative length raises), which
may be 1 or 0. ``None`` is a dim not known. Each function takes the operands' shapes (``None`` for
an operand whose shape is not known; a list of its items' shapes for a list or tuple display,
read only by the functions in TAKES_ITEMS) and returns the result's shape, or None where it is
not known (or the call would raise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

UNKNOWN = None  # a dim not known
MULTIPLE_MOST = 8  # the largest multiple of a length a label writes as one
LEAST_LABEL = 2  # the least length a label stands for


@dataclass(frozen=True)
class Linear:
    """An integer ``sum(coefficient * symbol) + constant``: ``terms`` are ``(symbol,
    coefficient)`` pairs (no coefficient 0, in one order); a symbol is a label or another
    name of an integer (a loop counter's key, whose bounds the caller knows)."""

    terms: tuple = ()
    constant: int = 0

    @staticmethod
    def of(terms: Mapping, constant: int) -> "Linear":
        return Linear(tuple(sorted(((s, c) for s, c in terms.items() if c), key=repr)), constant)

    @staticmethod
    def symbol(name) -> "Linear":
        return Linear(((name, 1),), 0)

    def __add__(self, other: "Linear") -> "Linear":
        terms = dict(self.terms)
        for s, c in other.terms:
            terms[s] = terms.get(s, 0) + c
        return Linear.of(terms, self.constant + other.constant)

    def __sub__(self, other: "Linear") -> "Linear":
        return self + other.times(-1)

    def times(self, k: int) -> "Linear":
        return Linear.of({s: c * k for s, c in self.terms}, self.constant * k)

    def symbols(self) -> set:
        return {s for s, _ in self.terms}


def linear(dim) -> Optional[Linear]:
    """A dim (or a Linear) as a Linear; None for a dim not known."""
    if isinstance(dim, Linear):
        return dim
    if type(dim) is int:
        return Linear((), dim)
    if is_label(dim):
        k, base = multiple(dim)
        return Linear(((base, k),), 0)
    if isinstance(dim, tuple) and len(dim) == 2:
        found = linear(dim[0])
        return None if found is None else found - Linear((), dim[1])
    return None


def length_of(form: Optional[Linear]):
    """The dim of the length ``max(0, form)``: a literal, a label, a trimmed dim or the Linear
    itself (one canonical dim per length written). A form of other symbols (a loop counter's:
    a length that changes from step to step) is its Linear: the shape analysis keeps it only for
    names read in the step that bound them (integers.step_names)."""
    if form is None:
        return UNKNOWN
    if any(not is_label(s) for s in form.symbols()):
        return form
    if not form.terms:
        return max(0, form.constant)
    if len(form.terms) == 1 and 1 <= form.terms[0][1] <= MULTIPLE_MOST and form.constant <= 0:
        base, k = form.terms[0]
        label = base if k == 1 else f"{k}*{base}"
        return label if form.constant == 0 else (label, -form.constant)
    return form


def least(form: Optional[Linear], bounds: Optional[Callable] = None) -> Optional[int]:
    """The least value ``form`` takes, the labels ``n0 < n1 < ...`` being LEAST_LABEL or more
    (``n<i>`` is LEAST_LABEL + i or more, and each one more than the one before); a symbol that is
    no label is replaced by its lower or upper bound (``bounds(symbol)``: ``(low, high)``, Linears
    of labels, or None) as its coefficient's sign asks; None where ``form`` has no least value
    known (labels whose coefficients, summed from the longest down, fall below 0: ``n0 - n1``;
    a symbol without bounds)."""
    if form is None:
        return None
    for symbol, c in form.terms:
        if is_label(symbol):
            continue
        found = bounds(symbol) if bounds is not None else None
        if found is None:
            return None
        bound = found[0] if c > 0 else found[1]
        if bound is None or any(not is_label(s) for s in bound.symbols()):
            return None
        form = form - Linear(((symbol, c),), 0) + bound.times(c)
    # n<i> = LEAST_LABEL + i + e_i with 0 <= e_0 <= e_1 <= ...: the sum of c_i e_i is 0 or more
    # for every such e exactly when each sum of the coefficients from a label up is
    # (a label not so numbered: LEAST_LABEL or more, in no known order with the others)
    if any(c < 0 and _rank(s) is None for s, c in form.terms):
        return None
    above = 0
    for _, c in sorted(((_rank(s), c) for s, c in form.terms if _rank(s) is not None), reverse=True):
        above += c
        if above < 0:
            return None
    return form.constant + sum(c * (LEAST_LABEL + (_rank(s) or 0)) for s, c in form.terms)


def _rank(label):
    """``i`` of a label ``"n<i>"`` (its place in the signature's increasing order), else None."""
    return int(label[1:]) if label[:1] == "n" and label[1:].isdigit() else None


def nonnegative(dim, bounds: Optional[Callable] = None, facts: tuple = ()) -> bool:
    """Whether the dim (or Linear) is certainly 0 or more, so a length of that dim is exactly
    it; ``facts``: Linears known to be 0 or more where it is read (the form less one of them is
    0 or more)."""
    form = linear(dim)
    if form is None:
        return False
    return any(found is not None and found >= 0
               for found in [least(form, bounds)] + [least(form - fact, bounds) for fact in facts])


def times(dim, k: int):
    """``k`` times the length ``dim`` (1, a label or a literal length) as a label (a literal
    length for a literal); None where that is not one (beyond MULTIPLE_MOST times a least
    length, or a length not known)."""
    if type(dim) is int and k >= 1:
        return dim * k
    found = multiple(dim)
    if found is None or k < 1 or found[0] * k > MULTIPLE_MOST:
        return UNKNOWN
    return length_of(linear(dim).times(k))


def multiple(dim) -> Optional[tuple]:
    """``(k, base)`` for a label ``k*base`` (``(1, label)`` for a plain label); None otherwise."""
    if not is_label(dim):
        return None
    if "*" not in dim:
        return 1, dim
    k, base = dim.split("*", 1)
    return int(k), base


def sliced(dim, lower, upper, bounds: Optional[Callable] = None, facts: tuple = ()):
    """The length of ``x[lower:upper]`` along an axis of length ``dim`` (certainly 0 or more):
    ``lower`` a dim or Linear certainly 0 or more, ``upper`` one certainly 0 or more or None (the
    end); ``bounds`` and ``facts``: least's and nonnegative's, for symbols other than labels
    (loop counters) and what is known where the slice is read. UNKNOWN where not known: a bound
    that may be negative (it counts from the end), an end that may be past the axis's or not.
    A length that changes with a loop's counter is a Linear of it (length_of)."""
    whole, start = linear(dim), linear(lower)
    stop = whole if upper is None else linear(upper)
    if whole is None or start is None or stop is None or not nonnegative(whole, bounds, facts) or \
            not nonnegative(start, bounds, facts) or not nonnegative(stop, bounds, facts):
        return UNKNOWN
    if nonnegative(whole - stop, bounds, facts):
        end = stop
    elif nonnegative(stop - whole, bounds, facts):
        end = whole  # numpy clips a stop past the end
    else:
        return UNKNOWN
    return length_of(end - start)


def is_label(dim) -> bool:
    """Whether ``dim`` is a label (a length of the signature, not 1)."""
    return isinstance(dim, str)


def is_literal(dim) -> bool:
    """Whether ``dim`` is a literal length other than 1 (an int >= 2)."""
    return type(dim) is int and dim >= 2


def not_one(dim) -> bool:
    """Whether ``dim`` is a length known not to be 1: a label, a literal other than 1, a sum
    certainly 2 or more."""
    if is_label(dim) or (type(dim) is int and dim != 1):
        return True
    found = least(linear(dim)) if isinstance(dim, (tuple, Linear)) else None
    return found is not None and found >= 2


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
    return length_of(linear(dim) - Linear((), k))


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
    """``np.linalg.norm(x)``, ``np.linalg.norm(x, ord)`` (no axis), ``np.vdot(a, b)``,
    ``s2s.sum_of_products(a, b)``: one number, whatever the shapes (the first two positional
    operands' only)."""
    return () if 1 <= len(shapes) <= 2 and all(shape is not None for shape in shapes) else None


def trace(shapes: tuple) -> Optional[tuple]:
    """``np.trace(a)`` of a matrix: one number."""
    return () if len(shapes) == 1 and shapes[0] is not None and len(shapes[0]) == 2 else None


def joined(shapes: tuple) -> Optional[tuple]:
    """``np.concatenate(arrays)`` of a list or tuple display (axis 0): the items' one rank (1 or
    more) and their other dims (equal, or the call raises), the sum of their first lengths where
    each is certainly 0 or more."""
    if len(shapes) != 1 or not isinstance(shapes[0], list) or not shapes[0]:
        return None
    items = shapes[0]
    if any(not isinstance(s, tuple) or not s or len(s) != len(items[0]) for s in items):
        return None
    rest = []
    for axis in range(1, len(items[0])):
        found = {s[axis] for s in items}
        labels = {d for d in found if is_label(d)}
        if len(found) != 1 and len(labels) != 1:
            return None
        rest.append(labels.pop() if labels else found.pop())  # one label: the others equal it
    total = Linear()
    for s in items:
        if not nonnegative(s[0]):
            return None
        total = total + linear(s[0])
    first = length_of(total)
    return None if first is UNKNOWN else (first,) + tuple(rest)


def stacked(shapes: tuple) -> Optional[tuple]:
    """``np.stack(arrays)`` of a list or tuple display (axis 0): as many as its items, each of
    their one shape."""
    if len(shapes) != 1 or not isinstance(shapes[0], list) or not shapes[0]:
        return None
    found = set(shapes[0])
    if len(found) != 1 or not known(shapes[0][0]):
        return None
    return (len(shapes[0]),) + shapes[0][0]


def split_points(firsts: list, total) -> Optional[list]:
    """Where ``np.concatenate``'s items of first lengths ``firsts`` (dims certainly 0 or more)
    lie in a result of first length ``total``: a ``(start, stop)`` slice of it each, a bound an
    int literal, a negative one counting from the end or None (the start, the end); None where
    a bound is neither a literal nor a literal before the end."""
    whole, ends = linear(total), [linear(d) for d in firsts]
    if whole is None or None in ends:
        return None
    offsets, at = [Linear()], Linear()
    for end in ends:
        at = at + end
        offsets.append(at)
    found = []
    for first, last in zip(offsets, offsets[1:]):
        bounds = []
        for offset, is_start in ((first, True), (last, False)):
            left = whole - offset
            if not offset.terms:
                bounds.append(None if is_start and offset.constant == 0 else offset.constant)
            elif not left.terms and left.constant > 0:
                bounds.append(-left.constant)
            elif not left.terms and left.constant == 0 and not is_start:
                bounds.append(None)
            else:
                return None
        found.append(tuple(bounds))
    return found


TAKES_ITEMS = (joined, stacked)  # the functions reading a display's items' shapes (a list)


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


def symbols(shape) -> set:
    """The symbols of a shape's dims: labels, and those of sums (loop counters)."""
    found: set = set()
    for dim in shape:
        form = linear(dim) if dim is not UNKNOWN else None
        if form is not None:
            found |= form.symbols()
    return found


def known(shape) -> bool:
    """Whether ``shape`` is a tuple of known dims (its arrays' shapes all equal)."""
    return isinstance(shape, tuple) and UNKNOWN not in shape
