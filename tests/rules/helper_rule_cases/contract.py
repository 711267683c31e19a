"""Cases for the rules of the helpers of s2sgrad/runtime/contract.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def h_einsum_vjp_0(g, a, b): return _out(s2s.einsum_vjp(g, "ij,jk->ik", (a, b), 0))
def h_einsum_vjp_1(g, a, b): return _out(s2s.einsum_vjp(g, "ij,jk->ik", (a, b), 1))
def h_einsum_vjp_3(g, a, b, c): return _out(s2s.einsum_vjp(g, "ij,jk,k->i", (a, b, c), 1))
def h_einsum_vjp_ell(g, a, b): return _out(s2s.einsum_vjp(g, "...ij,j->...i", (a, b), 0))
def h_einsum_vjp_implicit(g, a, b): return _out(s2s.einsum_vjp(g, "ij,kj", (a, b), 1))
def h_einsum_vjp_diag(g, a, b): return _out(s2s.einsum_vjp(g, "ii,i->", (a, b), 0))


def h_einsum_vjps(g, a, b):
    bars = s2s.einsum_vjps(g, "ij,jk->ik", (a, b))
    return _out(bars[0]) + _out(bars[1]) * 0.7


def h_einsum_vjps_3(g, a, b, c):
    bars = s2s.einsum_vjps(g, "ij,jk,k->i", (a, b, c))
    return _out(bars[0]) + _out(bars[1]) * 0.7 + _out(bars[2]) * 1.3


def h_einsum_vjps_bcast(g, a, b):
    bars = s2s.einsum_vjps(g, "ij,ij->i", (a, b))
    return _out(bars[0]) + _out(bars[1]) * 0.7


def _u(*shapes):
    return tuple(uniform(s) for s in shapes)


CASES = [
    (R + "einsum_vjp", h_einsum_vjp_0, _u((2, 4), (2, 3), (3, 4)), None, 1e-5),
    (R + "einsum_vjp", h_einsum_vjp_1, _u((2, 4), (2, 3), (3, 4)), None, 1e-5),
    (R + "einsum_vjp", h_einsum_vjp_3, _u((2,), (2, 3), (3, 4), (4,)), None, 1e-5),
    (R + "einsum_vjp", h_einsum_vjp_ell, _u((5, 2), (5, 2, 3), (3,)), None, 1e-5),
    (R + "einsum_vjp", h_einsum_vjp_implicit, _u((2, 4), (2, 3), (4, 3)), None, 1e-5),
    (R + "einsum_vjp", h_einsum_vjp_diag, _u(None, (3, 3), (3,)), None, 1e-5),
    (R + "einsum_vjps", h_einsum_vjps, _u((2, 4), (2, 3), (3, 4)), None, 1e-5),
    (R + "einsum_vjps", h_einsum_vjps_3, _u((2,), (2, 3), (3, 4), (4,)), None, 1e-5),
    (R + "einsum_vjps", h_einsum_vjps_bcast, _u((3,), (3, 2), (1, 2)), None, 1e-5),
]


def h_einsum_vjps_value(ga, gb, a, b):
    return _out(s2s.einsum_vjps_value((ga, gb), "ij,jk->ik", (a, b)))


def h_einsum_vjps_value_3(ga, gc, a, b, c):
    return _out(s2s.einsum_vjps_value((ga, b * 0.5, gc), "ij,jk,k->i", (a, b, c)))


def h_einsum_vjps_operands(g, ia, ib, a, b):
    bars = s2s.einsum_vjps_operands(g, (ia, ib), "ij,jk->ik", (a, b))
    return _out(bars[0]) + _out(bars[1]) * 0.7


def h_einsum_vjps_operands_3(g, ia, ic, a, b, c):
    bars = s2s.einsum_vjps_operands(g, (ia, b * 0.3, ic), "ij,jk,k->i", (a, b, c))
    return _out(bars[0]) + _out(bars[1]) * 0.7 + _out(bars[2]) * 1.3


CASES += [
    (R + "einsum_vjps_value", h_einsum_vjps_value, _u((2, 3), (3, 4), (2, 3), (3, 4)), None, 1e-5),
    (R + "einsum_vjps_value", h_einsum_vjps_value_3, _u((2, 3), (4,), (2, 3), (3, 4), (4,)), None,
     1e-5),
    (R + "einsum_vjps_operands", h_einsum_vjps_operands, _u((2, 4), (2, 3), (3, 4), (2, 3), (3, 4)),
     None, 1e-5),
    (R + "einsum_vjps_operands", h_einsum_vjps_operands_3,
     _u((2,), (2, 3), (4,), (2, 3), (3, 4), (4,)), None, 1e-5),
]


def h_einsum_with(x, a, b): return _out(s2s.einsum_with(x, "ij,jk->ik", (a, b), 1))
def h_einsum_with_3(x, a, b, c): return _out(s2s.einsum_with(x, "ij,jk,k->i", (a, b, c), 2))


CASES += [
    (R + "einsum_with", h_einsum_with, _u((3, 4), (2, 3), (3, 4)), None, 1e-5),
    (R + "einsum_with", h_einsum_with_3, _u((4,), (2, 3), (3, 4), (4,)), None, 1e-5),
]


def h_one_at(x, a, b):
    items = s2s.one_at(x, 1, (a, b))
    return _out(items[1]) + 0.3 * np.sum(items[0])


CASES += [
    (R + "one_at", h_one_at, _u((3, 4), (2, 3), (3, 4)), None, 1e-5),
]
