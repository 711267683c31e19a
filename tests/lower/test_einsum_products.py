"""Einsums that are matrix products, written as products in code made for a call's shapes
(lower/einsum_products.py): the same values as numpy's einsum for every two-operand spelling the
rewrite takes, the same gradients as autograd's, and einsums of unknown ranks or of other
structures left as written."""

import itertools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.lower.einsum_products import product_plan

LENGTHS = {"i": 2, "j": 3, "k": 4}


def _spellings():
    """Every two-operand einsum over the letters i, j, k with one or two axes an operand, no
    letter twice in one, each output of distinct letters that both operands hold between them,
    and the implicit output."""
    operands = [p for r in (1, 2) for p in itertools.permutations("ijk", r)]
    for a, b in itertools.product(operands, operands):
        letters = sorted(set(a) | set(b))
        outputs = [None] + [o for r in range(len(letters) + 1) for o in itertools.permutations(letters, r)]
        for out in outputs:
            arrow = "" if out is None else "->" + "".join(out)
            yield "".join(a) + "," + "".join(b) + arrow


def _apply(plan, a, b):
    swap, transpose_left, transpose_right, _ = plan
    left, right = (b, a) if swap else (a, b)
    return (left.T if transpose_left else left) @ (right.T if transpose_right else right)


def test_every_product_spelling_gives_numpys_einsum():
    rng = np.random.default_rng(0)
    taken = 0
    for spec in _spellings():
        a_letters, b_letters = spec.split("->")[0].split(",")
        a = rng.normal(size=[LENGTHS[c] for c in a_letters])
        b = rng.normal(size=[LENGTHS[c] for c in b_letters])
        plan = product_plan(spec, (a.ndim, b.ndim))
        if plan is None:
            continue
        taken += 1
        expected = np.einsum(spec, a, b)
        got = _apply(plan, a, b)
        assert np.shape(got) == np.shape(expected), spec
        np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=spec)
    # "ij,jk->ik" and its transposes, matrix-vector, vector-matrix, inner products, implicit ones
    assert taken >= 60


@pytest.mark.parametrize("spec, ranks", [
    ("ij,jk->ik", (1, 2)),  # ranks other than the letters': numpy's einsum raises
    ("ij,jk->ik", (2, 3)),
    ("ij,jk->ijk", (2, 2)),  # no letter summed
    ("ij,ij->", (2, 2)),  # two letters summed
    ("ij,jk->k", (2, 2)),  # a letter of one operand summed alone
    ("ii,i->i", (2, 1)),  # a diagonal
    ("bij,bjk->bik", (3, 3)),  # stacks of products
    ("i...,...->i", (2, 1)),
    ("ij,jk,kl->il", (2, 2)),
])
def test_other_einsums_are_no_product(spec, ranks):
    assert product_plan(spec, ranks) is None


def attention(Wq, Wk, X):
    Q = np.einsum("td,de->te", X, Wq)
    K = np.einsum("td,de->te", X, Wk)
    scores = np.einsum("te,se->ts", Q, K)
    weights = np.exp(scores - np.max(scores, axis=1, keepdims=True))
    weights = weights / np.sum(weights, axis=1, keepdims=True)
    out = np.einsum("ts,se->te", weights, Q)
    return np.sum(np.tanh(out)) + np.einsum("i,i", Wq[0], Wk[1]) + np.sum(np.einsum("j,dj", Wq[:, 1], X))


def stacked(A, B, v):
    C = np.einsum("bij,bjk->bik", A, B)  # stacks: an einsum still
    return np.sum(np.einsum("bik,k->bi", C, v) ** 2) + np.sum(np.einsum("ij,ij->i", A[0], A[1]))


def _code(text):
    """The generated code's lines without their comments (which quote the source)."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _twin(fn):
    namespace = dict(fn.__globals__, np=anp)
    return type(fn)(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


@pytest.mark.parametrize("fn, shapes, products", [
    (attention, ((4, 3), (4, 3), (5, 4)), True),
    (stacked, ((2, 3, 4), (2, 4, 3), (3,)), False),
])
def test_gradients_through_einsums_written_as_products(fn, shapes, products):
    rng = np.random.default_rng(1)
    args = tuple(rng.normal(size=s) for s in shapes)
    argnums = tuple(range(len(args)))
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=argnums)
    expected = autograd.grad(_twin(fn), argnums)(*args)
    for _ in range(3):  # the code for any shape, then the code made for these shapes, twice
        value, grads = value_and_grad(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    generic, made = (_code(s2sgrad.source(value_and_grad)),
                     _code(s2sgrad.source(value_and_grad, like=args)))
    assert "np.einsum(" in generic and "@" not in generic
    if products:
        assert "np.einsum(" not in made and "einsum_vjp" not in made
        assert "Q @ K_T" in made and "X @ Wq" in made
    else:
        assert 'np.einsum("bij,bjk->bik", A, B)' in made


def test_an_einsum_of_other_ranks_raises_as_numpys_in_every_call():
    def product(a, b):
        return np.sum(np.einsum("ij,jk->ik", a, b))

    grad = s2sgrad.grad(product)
    a, b = np.ones(3), np.ones((3, 2))
    with pytest.raises(ValueError):
        np.einsum("ij,jk->ik", a, b)
    for _ in range(3):
        with pytest.raises(ValueError):
            grad(a, b)
