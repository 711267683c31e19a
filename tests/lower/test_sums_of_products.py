"""Code made for a call's shapes writes whole sums of elementwise products of arrays of one shape
as ``s2s.sum_of_products`` (``s2s.sum_of_squares``: lower/sums_of_products.py, runtime/sums.py): the same values and
gradients as numpy's and autograd's (to rounding) in every spelling of a product and a whole sum,
the product not computed, and the sums it does not take kept as written."""

import math

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_agrees_with_oracle
from s2sgrad import runtime as s2s
from s2sgrad.runtime.sums import DOT_MOST

RNG = np.random.default_rng(13)
T = RNG.normal(size=(5, 4))  # a global the function reads


def spellings(r, a, b, X):
    s1 = np.sum(r ** 2) + np.sum(np.cos(r) * np.cos(r)) + (np.sin(r) ** 2).sum() + np.sum(np.square(r + 1.0))
    s2 = np.sum(np.power(a, 2)) + np.sum(a * b) + (b * np.tanh(b)).sum() + np.sum(np.tanh(a) * T)
    total = 0.0
    for x in X:  # a loop whose steps add sums: all steps at once (batched_loops), an axis sum
        h = np.sin(x * a)
        total = total + np.sum(h * h)
    return s1 * s2 + total


def spellings_ag(r, a, b, X):
    s1 = anp.sum(r * r) + anp.sum(anp.cos(r) ** 2) + anp.sum(anp.sin(r) ** 2) + anp.sum((r + 1.0) ** 2)
    s2 = anp.sum(a * a) + anp.sum(a * b) + anp.sum(b * anp.tanh(b)) + anp.sum(anp.tanh(a) * T)
    total = 0.0
    for k in range(X.shape[0]):
        h = anp.sin(X[k] * a)
        total = total + anp.sum(h * h)
    return s1 * s2 + total


def kept(a, c):
    p = a * a
    s1 = np.sum(p) + np.sum(p * 2.0)  # the product read twice
    s2 = np.sum(a * c)  # a product that broadcasts (c is a column)
    s3 = np.sum(np.sum(a * a, axis=0))  # a sum over an axis: the runtime's axis sum, not this
    s4 = np.sum(a * 3.0)  # a number, not an array of a's shape
    return s1 + s2 + s3 + s4


def kept_ag(a, c):
    p = a * a
    return anp.sum(p) + anp.sum(p * 2.0) + anp.sum(a * c) + anp.sum(a * a) + anp.sum(a * 3.0)


CASES = [(spellings, spellings_ag, lambda: (RNG.normal(size=7), RNG.normal(size=(5, 4)),
                                            RNG.normal(size=(5, 4)), RNG.normal(size=(2, 5, 4))), 8),
         (kept, kept_ag, lambda: (RNG.normal(size=(5, 4)), RNG.normal(size=(5, 1))), 0)]


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn, oracle, make, taken", CASES, ids=[c[0].__name__ for c in CASES])
def test_values_gradients_and_which_sums_are_taken(fn, oracle, make, taken):
    args = make()
    vg = assert_agrees_with_oracle(fn, oracle, args)  # code for any shape, then for the shapes
    made = _code(s2sgrad.source(vg, like=args))
    forward = made[made.index("_fwd("):made.index("_bwd(")]
    assert forward.count("s2s.sum_of_products(") + forward.count("s2s.sum_of_squares(") == taken, forward
    if taken:
        assert "** 2" not in forward and "np.square(" not in forward, forward  # no product computed
    assert "s2s.sum_of" not in s2sgrad.source(vg)  # code for any shape: as written


def test_second_order_reads_the_code_for_any_shape():
    r, v = RNG.normal(size=6), RNG.normal(size=6)

    def f(r):
        return np.sum(np.sin(r) ** 2) * np.sum(r * r)

    def f_ag(r):
        return anp.sum(anp.sin(r) ** 2) * anp.sum(r * r)

    hvp_ag = autograd.grad(lambda r: anp.sum(autograd.grad(f_ag)(r) * v))(r)
    for _ in range(2):
        np.testing.assert_allclose(s2sgrad.hvp(f, (r,), (v,))[0], hvp_ag, rtol=1e-10)


# ----- the runtime's sum of products ------------------------------------------------------------


def _exact(a, b):
    return math.fsum((np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)).ravel())


@pytest.mark.parametrize("a, b", [
    (RNG.normal(size=2000), None),  # a sum of squares: one dot product
    (RNG.normal(size=(40, 50)), RNG.normal(size=(40, 50))),
    (RNG.normal(size=DOT_MOST + 1), None),  # longer: numpy's own
    (RNG.normal(size=(30, 20)).astype(np.float32), None),  # float32: numpy's own
    (RNG.normal(size=(30, 20))[:, ::2], None),  # not contiguous: numpy's own
    (RNG.normal(size=(6, 1)), RNG.normal(size=(6, 4))),  # broadcasting: numpy's own
    (RNG.normal(size=5) + 1j * RNG.normal(size=5), None),  # complex: numpy's own
    (np.arange(12).reshape(3, 4), None),  # integers: numpy's own
])
def test_sum_of_products_is_numpys_sum_of_the_product(a, b):
    got = s2s.sum_of_squares(a) if b is None else s2s.sum_of_products(a, b)
    b = a if b is None else b
    want = np.sum(a * b)
    assert np.result_type(got) == np.result_type(want) and np.shape(got) == ()
    if np.iscomplexobj(want) or want.dtype.kind == "i":
        assert got == want
    else:
        tolerance = 1e-5 if want.dtype == np.float32 else 4e-16 * math.log2(np.size(a) + 2)
        exact = _exact(a, b)
        assert abs(got - exact) <= tolerance * np.sum(np.abs(a * b)) + 1e-300, (got, exact)
