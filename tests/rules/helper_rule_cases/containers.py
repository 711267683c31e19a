"""Cases for the rules of the helpers of s2sgrad/runtime/containers.py (see __init__.py). Helpers
that return one adjoint per element are indexed, as generated code does."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V3, V4, W, uniform

X3 = uniform((3,))
X4 = uniform((4,))
X34 = uniform((3, 4))
MASK = X34 > 0.0
TREE = {"b": X3, "a": X4}  # a constant dict


def _two(parts, w0, w1):
    """A scalar that reads two adjoints, nonlinearly."""
    return np.sum(np.sin(parts[0]) * w0) + np.sum(np.cos(parts[1]) * w1)


def h_setitem(x, v): return np.sum(np.sin(s2s.setitem(x, 1, v)) * V4)
def h_setitem_slice(x, v): return np.sum(np.sin(s2s.setitem(x, slice(1, 3), v)) * V4)
def h_setitem_broadcast(x, v): return np.sum(np.sin(s2s.setitem(x, (slice(None), 2), v)) * W)
def h_setitem_mask(x, v): return np.sum(np.sin(s2s.setitem(x, MASK, v)) * W)
def h_promoted(x, v): return np.sum(np.sin(s2s.setitem(s2s.promoted(x, v), slice(1, 3), v)) * V4)
def h_promoted_rows(x, v):  # x written into as the type it takes with v (x itself here)
    return np.sum(np.cos(s2s.promoted(x, v)) * W) + np.sum(v ** 2)
def h_setitem_value(v): return np.sum(np.sin(s2s.setitem(X34, 1, v)) * W)
REPEATS = np.array([0, 2, 2, -4])  # -4 aliases 0 in a length-4 axis: positions 0 and 2 twice


def h_setitem_repeats(x, v): return np.sum(np.sin(s2s.setitem(x, REPEATS, v)) * V4)
def h_setitem_repeats_2d(x, v):
    return np.sum(np.sin(s2s.setitem(x, (slice(None), [1, 3, 1]), v)) * W)
def h_setitem_repeats_pairs(x, v):
    return np.sum(np.sin(s2s.setitem(x, ([0, 2, 0], [1, 1, 1]), v)) * W)
def h_setitem_value_vjp(g, v): return np.sum(np.sin(s2s.setitem_value_vjp(g, REPEATS, v)) * V4)
def h_setitem_value_vjp_rows(g, v):
    return np.sum(np.cos(s2s.setitem_value_vjp(g, ([2, 0, 2],), v)) * W[:, :3].T[:, :1])
def h_setitem_value_vjp_mask(g, v):
    return np.sum(np.cos(s2s.setitem_value_vjp(g, MASK, v)) * np.arange(1.0, 1.0 + MASK.sum()))
def h_add(a, b): return np.sum(np.sin(s2s.add(a, b)) * W)
def h_add_float(a, b): return np.sin(s2s.add(a, b))
def h_add_rows(a, b):  # an array's adjoint added to its rows' (a list's): each adjoint in its form
    both = s2s.add(a, [b[0], b[1] * 2.0, b[2]])
    return sum(np.sum(np.sin(row) * V4) for row in both)
def h_add_vjp(a): return sum(np.sum(np.sin(row) * V4) for row in s2s.add_vjp(a, [X4, X4, X4]))
def h_leaves(a, b): return _two(s2s.leaves((a, b)), V4, V3)
def h_unleaves(a, b): return _two(s2s.unleaves((a, b), (X4, X3)), V4, V3)


def h_unleaves_dict(a, b):
    tree = s2s.unleaves((a, b), TREE)
    return np.sum(np.sin(tree["a"]) * V4) + np.sum(np.cos(tree["b"]) * V3)


def _last(parts, w0, w1):
    """A scalar that reads adjoints 1 and 2 (indexed one by one: a slice of a list's adjoint is
    wrapped in a tuple, which getitem_vjp's list route does not take)."""
    return np.sum(np.sin(parts[1]) * w0) + np.sum(np.cos(parts[2]) * w1)


def h_list_getitem(g): return _last(s2s.list_getitem_vjp(g, [X4, X3, X4], 2), V3, V4)
def h_list_getitem_slice(g0, g1):
    return _last(s2s.list_getitem_vjp([g0, g1], [X4, X3, X4], slice(1, 3)), V3, V4)


def h_list_getitem_dict(g):
    parts = s2s.list_getitem_vjp(g, TREE, "b")
    return np.sum(np.sin(parts["b"]) * V3) + np.sum(np.cos(parts["a"]) * V4)


def h_sum_list(g):
    parts = s2s.sum_list_vjp(g, [X34, X4, 0.5])
    return _two(parts, W, V4) + np.sin(parts[2])


# h_unleaves_dict and h_list_getitem_dict index a dict, which forward mode refuses (list.getitem):
# tests/rules/helpers/test_helpers_indexing_containers.py checks them in reverse mode only.
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    ("s2sgrad.runtime.setitem", h_setitem, (uniform((4,)), uniform(None)), None, 1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_slice, (uniform((4,)), uniform((2,))), None, 1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_broadcast, (uniform((3, 4)), uniform(None)), None, 1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_mask, (uniform((3, 4)), uniform((int(MASK.sum()),))), None,
     1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_value, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_repeats, (uniform((4,)), uniform((4,))), None, 1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_repeats_2d, (uniform((3, 4)), uniform((3, 3))), None,
     1e-5),
    ("s2sgrad.runtime.setitem", h_setitem_repeats_pairs, (uniform((3, 4)), uniform((3,))), None,
     1e-5),
    ("s2sgrad.runtime.promoted", h_promoted, (uniform((4,)), uniform((2,))), None, 1e-5),
    ("s2sgrad.runtime.promoted", h_promoted_rows, (uniform((3, 4)), uniform((2, 4))), None, 1e-5),
    ("s2sgrad.runtime.setitem_value_vjp", h_setitem_value_vjp, (uniform((4,)), uniform((4,))),
     (0,), 1e-5),
    ("s2sgrad.runtime.setitem_value_vjp", h_setitem_value_vjp_rows, (uniform((3, 4)),
                                                                     uniform((3, 1))), (0,), 1e-5),
    ("s2sgrad.runtime.setitem_value_vjp", h_setitem_value_vjp_mask,
     (uniform((3, 4)), uniform((int(MASK.sum()),))), (0,), 1e-5),
    ("s2sgrad.runtime.add", h_add, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.add", h_add_float, (uniform(None), uniform(None)), None, 1e-5),
    ("s2sgrad.runtime.add", h_add_rows, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.add_vjp", h_add_vjp, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.leaves", h_leaves, (uniform((4,)), uniform((3,))), None, 1e-5),
    ("s2sgrad.runtime.unleaves", h_unleaves, (uniform((4,)), uniform((3,))), None, 1e-5),
    ("s2sgrad.runtime.list_getitem_vjp", h_list_getitem, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.list_getitem_vjp", h_list_getitem_slice, (uniform((3,)), uniform((4,))), None,
     1e-5),
    ("s2sgrad.runtime.sum_list_vjp", h_sum_list, (uniform((3, 4)),), None, 1e-5),
]


def h_append(a, b): return np.sum(np.sin(s2s.append([a], b)[1]) * V4) + np.sum(s2s.append([a], b)[0] ** 2)


CASES.append(("s2sgrad.runtime.append", h_append, (uniform((4,)), uniform((4,))), None, 1e-5))


def h_setitem_list(a, b, v):
    pair = [a, b]
    parts = s2s.setitem(pair, 1, v * b)
    return np.sum(np.sin(parts[0]) * V4) + np.sum(np.cos(parts[1]) * V4)


CASES.append(("s2sgrad.runtime.setitem", h_setitem_list, (uniform((4,)), uniform((4,)), uniform((4,))),
              None, 1e-5))


def h_copied(a, b):
    pair = s2s.copied([a * b, b])
    return np.sum(np.sin(pair[0]) * V4) + np.sum(np.cos(pair[1]) * V4)


CASES.append(("s2sgrad.runtime.copied", h_copied, (uniform((4,)), uniform((4,))), None, 1e-5))


def h_split_last(a, b):
    rest, last = s2s.split_last([a * b, np.sin(b), b])
    return np.sum(np.cos(rest[0]) * V4) + np.sum(rest[1] * last * V4)


def h_owned(a, b):
    pair = s2s.owned([a * b, np.sin(b)])
    return np.sum(np.sin(pair[0]) * V4) + np.sum(np.cos(pair[1]) * V4)


CASES.append(("s2sgrad.runtime.owned", h_owned, (uniform((4,)), uniform((4,))), None, 1e-5))
def h_joined_last(a, b):
    parts = s2s.joined_last([a * b, np.sin(b)], np.cos(a))
    return np.sum(np.sin(parts[0]) * V4) + np.sum(parts[1] * parts[2] * V4)


CASES.append(("s2sgrad.runtime.joined_last", h_joined_last, (uniform((4,)), uniform((4,))), None, 1e-5))
CASES.append(("s2sgrad.runtime.split_last", h_split_last, (uniform((4,)), uniform((4,))), None, 1e-5))


# dict displays: dict_of and its transpose (its result read by key, as generated code does)
def h_dict_of(a, b):
    tree = s2s.dict_of(("a", "b"), (a, b))
    return np.sum(np.sin(tree["a"]) * V4) + np.sum(np.cos(tree["b"]) * V3)


def h_dict_of_vjp(a, b):
    return _two(s2s.dict_of_vjp(s2s.dict_of(("a", "b"), (a, b)), ("b", "a")), V3, V4)


CASES.append(("s2sgrad.runtime.dict_of", h_dict_of, (uniform((4,)), uniform((3,))), None, 1e-5))
CASES.append((("s2sgrad.runtime.dict_of_vjp", "s2sgrad.runtime.dict_of"), h_dict_of_vjp,
              (uniform((4,)), uniform((3,))), None, 1e-5))


# tuple(x) / list(x) of an array's rows: the rows' adjoints stacked, and back into rows
def h_sequence_vjp(a, b): return np.sum(np.sin(s2s.sequence_vjp([a, b * a], X34[:2])) * W[:2])
def h_sequence_items(a): return _two(s2s.sequence_items(a * 2.0, X34[:2]), V4, V4)


CASES.append(("s2sgrad.runtime.sequence_vjp", h_sequence_vjp, (uniform((4,)), uniform((4,))), None, 1e-5))
CASES.append(("s2sgrad.runtime.sequence_items", h_sequence_items, (uniform((2, 4)),), None, 1e-5))
