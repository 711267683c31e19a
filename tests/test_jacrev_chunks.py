"""jacrev by chunks of unit cotangents (differentiate/batching.batch_backward,
write/entries.reverse_jacobian_entry): the backward sweep rewritten for seeds stacked on a
leading axis, run once per chunk of the output's elements, where every statement of the sweep has
a batched form; one sweep per element where one has not (a loop) and for a pytree value. Checked
against autograd's Jacobian, with one chunk and with several, and differentiated again."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s

RNG = np.random.default_rng(26)
A = RNG.normal(size=(6, 5)) / 3
X5 = RNG.normal(size=5)
W3 = RNG.normal(size=3)
M = RNG.normal(size=(4, 5))


def make(np):
    """The same functions over numpy (s2sgrad) and autograd.numpy (the oracle)."""
    def matmul_left(x):
        return np.tanh(A @ x) * np.sin(np.sum(x))

    def matmul_right(x):
        return np.cos(x @ A.T) + np.dot(A, x) ** 2

    def slices(x):  # the adjoint written into by slices: x_bar[1:] += ...
        return 100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2

    def axes(m):  # reductions along an axis, keepdims, broadcasting back
        centered = m - np.mean(m, axis=1, keepdims=True)
        return np.sum(centered ** 2, axis=0) / (1.0 + np.sum(m ** 2))

    def extremes(m):  # extremum_vjp has no batched form: one sweep per element
        return np.max(np.abs(m), axis=1) * m[:, 0]

    def outer_matrix(x, w):  # a matrix value; broadcasting of both arguments
        return np.tanh(x[:, None] * w[None, :]) + np.outer(np.sin(x), w)

    def branches(x):
        return np.where(x > 0.1, x ** 2, np.sin(x) * 3.0) * np.sum(x)

    def joined(x, w):  # split_concatenate has none either
        return np.concatenate([np.sin(x), w * x[0], np.reshape(np.outer(x[:2], w), -1)])

    def scalar_value(x):
        return np.sum(np.tanh(A @ x) ** 2)

    def of_a_float(x, s):
        return np.sin(x * s) + s ** 2

    def looped(x):  # a loop in the backward sweep: one sweep per element
        y = x
        for _ in range(3):
            y = np.sin(y) * x
        return y

    return {f.__name__: f for f in (matmul_left, matmul_right, slices, axes,
                                    extremes, outer_matrix, branches, joined, scalar_value,
                                    of_a_float, looped)}


def dot_method(x, w):  # a method spelling (autograd's boxes have no .dot: its oracle below)
    return A.dot(x) * np.exp(w[0]) + np.sum(w ** 2)


def dot_method_ag(x, w):
    return anp.dot(A, x) * anp.exp(w[0]) + anp.sum(w ** 2)


OURS, THEIRS = make(np), make(anp)
OURS["dot_method"], THEIRS["dot_method"] = dot_method, dot_method_ag
CASES = [
    ("matmul_left", (X5,), 0),
    ("matmul_right", (X5,), 0),
    ("dot_method", (X5, W3), (0, 1)),
    ("slices", (X5,), 0),
    ("axes", (M,), 0),
    ("extremes", (M,), 0),
    ("outer_matrix", (X5, W3), (0, 1)),
    ("branches", (X5,), 0),
    ("joined", (X5, W3), (0, 1)),
    ("scalar_value", (X5,), 0),
    ("of_a_float", (X5, 0.7), (0, 1)),
    ("looped", (X5,), 0),
]
BY_ROWS = {"extremes", "joined", "looped"}  # their backward sweeps have no batched form


@pytest.mark.parametrize("at_once", [256, 3])
@pytest.mark.parametrize("name, args, argnums", CASES, ids=[c[0] for c in CASES])
def test_jacrev_matches_autograd(name, args, argnums, at_once, monkeypatch):
    monkeypatch.setattr(s2s.jacobians, "_AT_ONCE", at_once)  # one chunk, or several
    jacobian = s2sgrad.jacrev(OURS[name], argnums=argnums)
    got = jacobian(*args)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    for k, i in enumerate(nums):
        block = got if isinstance(argnums, int) else got[k]
        want = autograd.jacobian(THEIRS[name], i)(*args)
        assert np.shape(block) == np.shape(OURS[name](*args)) + np.shape(args[i])
        np.testing.assert_allclose(block, want, rtol=1e-10, atol=1e-12)
        if isinstance(args[i], float) and np.ndim(block) == 0:
            assert type(block) is float
    text = s2sgrad.source(jacobian)
    assert (f"{name}_bwd_rows(" in text) == (name not in BY_ROWS)


def test_the_rows_sweep_is_generated_code_a_reviewer_reads():
    text = s2sgrad.source(s2sgrad.jacrev(OURS["slices"]))
    # the seeds and every adjoint made from them carry a leading axis; updates update each row
    assert "def slices_bwd_rows(residuals, slices_bar):" in text
    assert "x_bar[:, 1:] += " in text or "x_bar[:, :-1] += " in text
    assert "for seed in s2s.unit_chunks(value):" in text
    assert "s2s.row_chunks_block(x_chunks, np.shape(value), x)" in text


@pytest.mark.parametrize("at_once", [256, 4])
def test_second_order_through_the_rows_sweep(at_once, monkeypatch):
    # the generated jacrev (its batched sweep, unit chunks, joined block) is differentiated
    # again: forward mode over it and reverse mode over it give the Hessian of a scalar loss
    monkeypatch.setattr(s2s.jacobians, "_AT_ONCE", at_once)

    def loss(x):
        return np.sum(np.tanh(A @ x) ** 2) + np.sum(x[1:] * x[:-1] ** 2)

    def loss_ag(x):
        return anp.sum(anp.tanh(anp.dot(A, x)) ** 2) + anp.sum(x[1:] * x[:-1] ** 2)

    want = autograd.hessian(loss_ag)(X5)
    gradient = s2sgrad.grad(loss)
    np.testing.assert_allclose(s2sgrad.jacrev(gradient)(X5), want, rtol=1e-10, atol=1e-12)
    # jacrev of a generated gradient differentiates its sweeps inlined into one function
    # (compose.reverse_of_flat): its backward sweep calls no inner sweep and batches
    assert "loss_grad_bwd_rows(" in s2sgrad.source(s2sgrad.jacrev(gradient))
    np.testing.assert_allclose(s2sgrad.jacfwd(s2sgrad.jacrev(loss))(X5), want, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(s2sgrad.jacrev(s2sgrad.jacrev(loss))(X5), want, rtol=1e-10,
                               atol=1e-12)
    # the Jacobian of a vector function's Jacobian: against autograd's
    vector, vector_ag = OURS["matmul_right"], THEIRS["matmul_right"]
    np.testing.assert_allclose(s2sgrad.jacfwd(s2sgrad.jacrev(vector))(X5),
                               autograd.jacobian(autograd.jacobian(vector_ag))(X5), rtol=1e-9,
                               atol=1e-12)


def test_a_pytree_value_takes_one_sweep_per_element():
    # a gradient of several arguments (a tuple the code does not show): the tree branch
    def loss(x, w):
        return np.sum(np.sin(x) * w[:5]) + np.sum(w ** 3)

    def loss_ag(x, w):
        return anp.sum(anp.sin(x) * w[:5]) + anp.sum(w ** 3)

    W6 = RNG.normal(size=6)
    blocks = s2sgrad.jacrev(s2sgrad.grad(loss, argnums=(0, 1)), argnums=(0, 1))(X5, W6)
    for i in (0, 1):
        for j in (0, 1):
            np.testing.assert_allclose(
                blocks[i][j], autograd.jacobian(autograd.grad(loss_ag, i), j)(X5, W6),
                rtol=1e-10, atol=1e-12)


SWEEPS = '''
def rebound(residuals, f_bar=1.0):
    x, y = residuals
    a_bar = f_bar * x
    a_bar = x * 2.0  # bound again to a value no seed reaches: not a stack any more
    b_bar = a_bar * y + f_bar
    return (b_bar, a_bar)


def updated(residuals, f_bar=1.0):
    x, y = residuals
    x_bar = s2s.unbroadcast(f_bar * y, x)
    x_bar[1:] += f_bar[:-1] * 3.0
    x_bar[0] = y[0]
    x_bar *= 2.0
    return (x_bar,)


def unstacked_target(residuals, f_bar=1.0):
    x, y = residuals
    x_bar = s2s.zeros_like(x)
    x_bar += f_bar * y  # the zeros would have to become a stack: one sweep per row
    return (x_bar,)
'''


def test_a_batched_sweep_is_its_sweep_per_row():
    # batch_backward's rewriting, run on stacked seeds, against the sweep run per row
    import libcst as cst

    from s2sgrad.differentiate.batching import batch_backward
    from s2sgrad.rules import DEFAULT_TABLE

    module = cst.parse_module(SWEEPS)
    namespace = {"np": np, "s2s": s2s}
    exec(SWEEPS, namespace)
    x, y = RNG.normal(size=4), RNG.normal(size=4)
    seeds = RNG.normal(size=(3, 4))
    for fn in module.body:
        rows = batch_backward(fn, fn.name.value + "_rows", DEFAULT_TABLE)
        if fn.name.value == "unstacked_target":
            assert rows is None
            continue
        exec(cst.Module([rows]).code, namespace)
        got = namespace[fn.name.value + "_rows"]((x, y), seeds.copy())
        for k in range(3):
            want = namespace[fn.name.value]((x, y), seeds[k].copy())
            for item, expected in zip(got, want):
                np.testing.assert_allclose(item[k], expected, rtol=1e-14)
