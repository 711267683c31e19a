"""s2sgrad reading its own generated gradients where they call the products', rows', einsum and
linear-algebra helpers (rules/helpers/{products,rows,contract,linalg}.py): reverse over reverse
(``grad`` of a function of the generated gradient) and forward over reverse (``jvp`` of it),
against central differences.

The generated backward sweep starts with ``del residuals``, which s2sgrad does not read (``del``
is refused in a differentiated function): the tests load the generated module without its
``del`` statements (they only free memory early), written to a file so its source can be read.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s
from s2sgrad.checks import numerical_grad
from s2sgrad import derive as service

RNG = np.random.default_rng(2024)
V3 = RNG.uniform(-1.0, 1.0, 3)
V4 = RNG.uniform(-1.0, 1.0, 4)
SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.8]])


def _generated(f, tmp_path):
    """``(fwd, bwd)`` of ``f``'s generated gradient module, its ``del`` lines left out."""
    names = f.__code__.co_varnames[:f.__code__.co_argcount]
    text, _ = service.build(f, names)
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("del "))
    path = tmp_path / f"generated_{f.__name__}.py"
    path.write_text(text + "\n")
    spec = importlib.util.spec_from_file_location(f"generated_{f.__name__}", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({k: v for k, v in f.__globals__.items() if not k.startswith("__")})
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, f"{f.__name__}_fwd"), getattr(module, f"{f.__name__}_bwd")


def _second_order(f, args, k, tmp_path, forward=True):
    """Check grad and jvp of ``gradf`` (the generated gradient of ``f`` in its argument ``k``);
    ``forward``: False for no jvp, or the text of the refusal it meets instead."""
    fwd, bwd = _generated(f, tmp_path)

    def gradf(a, b, c):
        return bwd(fwd(a, b, c)[1], 1.0)[k]

    weights = RNG.uniform(-1.0, 1.0, np.shape(args[k]))

    def h(a, b, c):
        return np.sum(np.sin(gradf(a, b, c)) * weights)

    for i in range(3):
        got = s2sgrad.grad(h, argnums=i)(*args)
        np.testing.assert_allclose(got, numerical_grad(h, args, i), rtol=1e-5, atol=1e-7,
                                   err_msg=f"grad of the gradient, argument {i}")
    if not forward:
        return
    tangents = tuple(RNG.uniform(-1.0, 1.0, np.shape(a)) for a in args)
    if isinstance(forward, str):
        with pytest.raises(s2sgrad.TransformError, match=forward):
            s2sgrad.jvp(gradf, args, tangents)
        return
    tangents = tuple(RNG.uniform(-1.0, 1.0, np.shape(a)) for a in args)
    got = s2sgrad.jvp(gradf, args, tangents)[1]
    eps = 1e-6
    want = (gradf(*(a + eps * t for a, t in zip(args, tangents)))
            - gradf(*(a - eps * t for a, t in zip(args, tangents)))) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg="jvp of the gradient")


def _u(*shapes):
    return tuple(RNG.uniform(-0.9, 0.9, s) for s in shapes)


# ---- losses whose generated gradients call only this banner group's helpers (and like) ----

def mlp_vector(x, W1, w2): return np.tanh(x @ W1) @ w2
def mlp_dot(x, W1, w2): return np.dot(np.tanh(np.dot(W1, x)), w2)
def solve_loss(a, b, v): return np.tanh(np.linalg.solve(a + 2.0 * np.eye(3), b)) @ v
def solve_matrix(a, b, v): return V3 @ np.tanh(np.linalg.solve(a + 2.0 * np.eye(3), b)) @ v
def cholesky_loss(a, u, v): return u @ np.linalg.cholesky(a @ a.T + SPD) @ v
def eigvalsh_loss(a, u, v): return np.linalg.eigvalsh(a + a.T + np.diag([0.0, 2.0, 4.0])) @ np.tanh(u * v)
def svdvals_loss(a, u, v): return np.linalg.svdvals(a) @ np.tanh(u + v)
def pinv_loss(a, u, v): return u @ np.linalg.pinv(a) @ v
def power_loss(a, u, v): return u @ np.linalg.matrix_power(a, 3) @ v
def norm_loss(x, W, v): return np.linalg.norm(np.tanh(x @ W)) * (v @ v)
def norm_axis(x, W, v): return np.linalg.norm(np.tanh(x @ W), 3, 1) @ v
def trace_loss(a, b, v): return np.trace(np.tanh(a @ b)) * np.tanh(v @ v)
def einsum_loss(a, b, v): return np.tanh(np.einsum("ij,jk->ik", a, b)) @ v @ np.tanh(a @ b @ v)
def tensordot_loss(a, b, v): return np.tensordot(np.tanh(a), b, 1) @ v @ np.tanh(a @ b @ v)
def inner_loss(a, b, v): return np.inner(np.tanh(a), b) @ v @ np.tanh(np.inner(a, b) @ v)
def kron_loss(a, b, v): return np.tanh(np.kron(a, b)) @ v @ np.tanh(np.kron(a, b) @ v)


def matmul_constant_last(a, b, v):
    """The last product with a constant: the seed and the constant are all that vary there."""
    return np.tanh(a @ b) @ v @ V3


CASES = [
    (mlp_vector, _u(3, (3, 4), 4), 1),
    (mlp_vector, _u(3, (3, 4), 4), 0),
    (mlp_dot, _u(4, (3, 4), 3), 1),
    (solve_loss, _u((3, 3), 3, 3), 0),
    (solve_matrix, _u((3, 3), (3, 2), 2), 1),
    (cholesky_loss, _u((3, 3), 3, 3), 0),
    (eigvalsh_loss, _u((3, 3), 3, 3), 0),
    (svdvals_loss, _u((4, 3), 3, 3), 0),
    (pinv_loss, _u((4, 3), 3, 4), 0),
    (power_loss, _u((3, 3), 3, 3), 0),
    (norm_loss, _u(3, (3, 4), 2), 1),
    (norm_axis, _u((2, 3), (3, 4), 2), 1),
    (trace_loss, _u((3, 4), (4, 3), 2), 0),
    (einsum_loss, _u((3, 4), (4, 2), 2), 0),
    (tensordot_loss, _u((3, 4), (4, 2), 2), 1),
    (inner_loss, _u((3, 4), (2, 4), 2), 0),
    (kron_loss, _u((2, 2), (2, 1), 2), 1),
]
# Forward over reverse meets, before these helpers, the primal these losses call in the generated
# forward sweep, whose own rule (rules/linalg.py, rules/reductions.py) has no tangent yet. einsum's
# adjoints are multilinear in a tuple of operands, which forward mode refuses (the rule's reason):
# jvp takes reverse mode over the gradient's gradient there (the rules of einsum's second-order
# helpers), checked like the others.
FORWARD = {cholesky_loss: "numpy.linalg.cholesky", eigvalsh_loss: "numpy.linalg.eigvalsh",
           svdvals_loss: "numpy.linalg.svdvals", pinv_loss: "numpy.linalg.pinv",
           power_loss: "numpy.linalg.matrix_power", norm_loss: "numpy.linalg.norm",
           norm_axis: "numpy.linalg.norm"}


@pytest.mark.parametrize("f, args, k", CASES, ids=[f"{f.__name__}-{k}" for f, _, k in CASES])
def test_second_order_through_generated_gradient(f, args, k, tmp_path):
    _second_order(f, args, k, tmp_path, forward=FORWARD.get(f, True))


def test_forward_over_a_product_with_a_constant(tmp_path):
    # every varied argument of s2s.matmul_vjp_a(seed, ans, V3) is one it is constant in: a zero
    # tangent (this crashed in ForwardBuilder.tangent_of)
    _second_order(matmul_constant_last, _u((3, 4), (4, 2), 2), 0, tmp_path)


# ---- the brief's MLP: its gradient also calls s2s.broadcast(g, shape) for np.sum ----------

def mlp(x, W1, w2): return np.sum(np.tanh(x @ W1) @ w2)


def test_mlp_with_sum(tmp_path):
    _second_order(mlp, _u((2, 3), (3, 4), 4), 1, tmp_path)


# ---- a loop: its gradient calls matmul_vjp_b_sum with the lists its backward loop built ----

def rnn(h, W, xs):
    for t in range(3):
        h = np.tanh(h @ W + xs[t])
    return h @ V3


def test_rnn_loop(tmp_path):
    # the generated backward loop walks reversed(tape); its forward sweep appends to a list
    _second_order(rnn, (RNG.uniform(-1, 1, 3), 0.5 * RNG.uniform(-1, 1, (3, 3)),
                        RNG.uniform(-1, 1, (3, 3))), 1, tmp_path)


def rnn_unrolled_backward(gs, hs, W):
    """What the backward loop of rnn does with W's contributions, the lists built as it does."""
    ups = []
    lefts = []
    for t in range(3):
        ups.append(gs[t] * (1.0 - np.tanh(hs[t] @ W) ** 2))
        lefts.append(hs[t])
    return np.sum(np.sin(s2s.matmul_vjp_b_sum(ups, lefts, W)))


def test_loop_sum_with_collected_lists():
    # matmul_vjp_b_sum empties the lists it stacks (Rule.consumes): the derivative code passes
    # it copies, since its adjoints read them after the call
    args = (RNG.uniform(-1, 1, (3, 4)), RNG.uniform(-1, 1, (3, 3)), RNG.uniform(-1, 1, (3, 4)))
    got = s2sgrad.grad(rnn_unrolled_backward, argnums=2)(*args)
    np.testing.assert_allclose(got, numerical_grad(rnn_unrolled_backward, args, 2), rtol=1e-5)


def rnn_sum_of_displays(g0, g1, g2, h0, h1, h2, W):
    """The same sum with the lists written out (fresh lists: nothing empties what is read)."""
    total = s2s.matmul_vjp_b_sum([g0, g1, g2], [h0, h1, h2], W)
    total = total + s2s.matmul_vjp_a_sum([g0, g1, g2], W.T, [np.tanh(h0), h1, h2 @ W[:, :3]]).T
    return np.sum(np.sin(total))


def test_loop_sums_of_list_displays_both_modes():
    args = tuple(RNG.uniform(-1, 1, s) for s in (4, 4, 4, 3, 3, 3, (3, 4)))
    argnums = tuple(range(7))
    got = s2sgrad.grad(rnn_sum_of_displays, argnums=argnums)(*args)
    for i in argnums:
        np.testing.assert_allclose(got[i], numerical_grad(rnn_sum_of_displays, args, i), rtol=1e-5,
                                   atol=1e-8)
    tangents = tuple(RNG.uniform(-1, 1, np.shape(a)) for a in args)
    _, tangent = s2sgrad.jvp(rnn_sum_of_displays, args, tangents)
    np.testing.assert_allclose(tangent, sum(np.sum(g * t) for g, t in zip(got, tangents)), rtol=1e-8)


# ---- a loop whose per-step products are hoisted (rows_matmul) --------------------------------

def rows_loss(xs, W, v):
    total = 0.0
    for t in range(3):
        total = total + np.tanh(xs[t] @ W) @ v
    return total


def test_rows_gradient_reads_back(tmp_path):
    fwd, bwd = _generated(rows_loss, tmp_path)
    text = (tmp_path / "generated_rows_loss.py").read_text()
    assert "s2s.rows_matmul_vjp_a(" in text and "s2s.rows_matmul_vjp_b(" in text
    _second_order(rows_loss, _u((3, 3), (3, 4), 4), 1, tmp_path)
