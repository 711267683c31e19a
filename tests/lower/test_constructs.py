"""Each supported construct, alone and combined, against finite differences and autograd."""

import math

import numpy as np
import pytest
from conftest import assert_gradients

import s2sgrad

W = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
SCALE = 2.5


def assign_chain(x):
    a = x * 2.0
    b = a + 1.0
    c = b * a
    return np.sum(c)


def reassign(x):
    h = np.tanh(x)
    h = h * h + x
    h = np.sin(h) / 2.0
    return np.sum(h)


def tuple_unpack(x):
    a, b = x[0], x[1:]
    c, d = np.sin(a), np.cos(b)
    return c * np.sum(d)


def swap(x, y):
    a, b = x, y
    a, b = b, a * 2.0
    return np.sum(a * b)


def unpack_rows(x):
    r0, r1, r2 = x
    return np.sum(r0 * r1 - r2)


def nested_expression(x, y):
    return np.sum(np.exp(-((x - y) ** 2) / (2.0 * np.sum(y * y))) * np.log1p(x * x))


def operators(x, y):
    z = -x + y - x * y / (1.0 + y * y) + x ** 2 + 3.0 ** y + abs(x)
    return np.sum(z @ W.T)


def augmented(x):
    y = x * 1.0
    y += x
    y *= x
    y -= 2.0
    y /= 3.0
    y **= 2
    return np.sum(y)


def broadcasting(a, b, c):
    return np.sum(a * b + c)


def indexing(x):
    return x[0, 1] + np.sum(x[1]) + np.sum(x[-1, ::2]) + np.sum(x[:, 1:3] ** 2) + x[2][3]


def fancy_indexing(x):
    idx = np.array([0, 2, 2, 1])
    mask = x > 0.1
    return np.sum(x[idx] ** 2) + np.sum(x[mask]) + np.sum(x[[1, 1, 3]])


def newaxis_indexing(x):
    return np.sum(x[:, None] * x[None, :])


def helper(a, b=2.0):
    c = a * b
    return np.exp(-c) + a


def calls_helper(x):
    y = helper(x) + helper(x, b=3.0) + helper(b=0.5, a=x)
    return np.sum(y)


def looped_helper(a, b=2.0):
    for _ in range(2):  # a loop: differentiated as a function of its own, not inlined
        a = np.sin(a * b)
    return np.exp(-a) + a


def calls_looped_helper(x):
    y = looped_helper(x) + looped_helper(x, b=3.0) + looped_helper(b=0.5, a=x)
    return np.sum(y)


def inner_helper(v):
    return np.tanh(v) * SCALE


def outer_helper(v):
    return inner_helper(v * 2.0) + inner_helper(v)


def calls_nested_helpers(x):
    return np.sum(outer_helper(x) ** 2)


def constants(x):
    return np.sum(np.sin(x * np.pi) * SCALE) + math.pi * np.sum(x) + np.e


def methods(x):
    return x.sum() + x.T.dot(x).sum() + x.reshape(4, 3).max(axis=0).sum() + x.mean(axis=1).prod()


def python_floats(x, y):
    return math.sin(x) * math.exp(y) + math.sqrt(x * x + y * y) + abs(x - y) + float(x) ** 2


def inactive_paths(x, n):
    k = x.shape[0]
    steps = np.arange(k) * n
    return np.sum(x * steps) + np.argmax(x) + np.sum(np.floor(x))


def mlp(w1, b1, w2, x):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[:, 0])


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rnn_unrolled(wh, wx, xs):
    h = np.zeros(3)
    h = np.tanh(wh @ h + wx @ xs[0])
    h = np.tanh(wh @ h + wx @ xs[1])
    h = np.tanh(wh @ h + wx @ xs[2])
    return np.sum(h ** 2)


def joins(x, y):
    z = np.concatenate([x, y * 2.0, x], axis=0)
    s = np.stack([x, y], axis=1)
    return np.sum(z ** 2) + np.sum(s[:, 0] * s[:, 1])


def linalg(a, v):
    return np.linalg.det(a) + np.sum(np.linalg.inv(a) @ v) + np.linalg.norm(v) + np.einsum("ij,j->", a, v)


def keyword_call(x):
    return np.sum(np.sum(x, axis=0, keepdims=True) * x) + np.mean(a=x, axis=1).sum()


def returns_param(x):
    return x


def unused_param(x, y):
    return np.sum(x ** 2)


def docstring_and_pass(x):
    """A docstring is not differentiated."""
    pass
    return np.sum(x)


R = np.random.default_rng(1)
X3 = R.normal(size=3)
X4 = R.normal(size=4)
X34 = R.normal(size=(3, 4))
A33 = R.normal(size=(3, 3)) + 3.0 * np.eye(3)

CASES = [
    (assign_chain, (X4,)),
    (reassign, (X4,)),
    (tuple_unpack, (X4,)),
    (swap, (X4, X4 + 1.0)),
    (unpack_rows, (X34,)),
    (nested_expression, (X4, X4 + 0.5)),
    (operators, (X4, X4 * 0.3)),
    (augmented, (X4,)),
    (broadcasting, (X34, X4, R.normal(size=(3, 1)))),
    (broadcasting, (X34, 0.7, X4)),
    (indexing, (X34,)),
    (fancy_indexing, (X4,)),
    (newaxis_indexing, (X4,)),
    (calls_helper, (X4,)),
    (calls_looped_helper, (X4,)),
    (calls_nested_helpers, (X4,)),
    (constants, (X4,)),
    (methods, (X34,)),
    (python_floats, (0.7, -0.3)),
    (mlp, (R.normal(size=(4, 5)), R.normal(size=5), R.normal(size=(5, 3)), R.normal(size=(6, 4)))),
    (logsumexp, (R.normal(size=10),)),
    (rosenbrock, (R.normal(size=6),)),
    (rnn_unrolled, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(3, 2)), R.normal(size=(3, 2)))),
    (joins, (X4, X4 * 2.0)),
    (linalg, (A33, X3)),
    (keyword_call, (X34,)),
    (unused_param, (X4, X4)),
    (docstring_and_pass, (X4,)),
]


# autograd cannot trace ArrayBox.dot or the math module: finite differences only for these.
NO_AUTOGRAD = {methods, python_floats}


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_gradient_matches_oracles(fn, args):
    assert_gradients(fn, *args, autograd_oracle=fn not in NO_AUTOGRAD)


def test_inactive_argument_is_not_differentiated():
    assert_gradients(inactive_paths, X4, 3, argnums=(0,))


def test_unused_parameter_gets_zero_gradient_of_its_shape():
    gx, gy = s2sgrad.grad(unused_param, argnums=(0, 1))(X4, X4)
    np.testing.assert_array_equal(gy, np.zeros(4))
    np.testing.assert_allclose(gx, 2 * X4)


def test_identity_gradient_is_seed():
    out, pullback = s2sgrad.vjp(returns_param, X4)
    ct = np.arange(4.0)
    np.testing.assert_array_equal(pullback(ct)[0], ct)


def test_closure_values_are_constants():
    scale = np.array([1.0, 2.0, 3.0, 4.0])

    def scaled(x):
        return np.sum(np.sin(x) * scale)

    np.testing.assert_allclose(s2sgrad.grad(scaled)(X4), np.cos(X4) * scale)


def test_helper_is_generated_once():
    text = s2sgrad.source(s2sgrad.grad(calls_looped_helper))
    assert text.count("def looped_helper_fwd(") == 1 and text.count("def looped_helper_bwd(") == 1
    assert text.count(" looped_helper_fwd(") == 4  # the definition and three call sites


def test_straight_line_helper_is_inlined():
    text = s2sgrad.source(s2sgrad.grad(calls_helper))
    assert "def helper_fwd" not in text and text.count("np.exp(") >= 3
    assert "= x * 2.0" in text  # a literal argument or default written in place


def multi_line(x, w):
    y = (
        x * 2.0  # a comment inside the brackets
        + np.sin(x) * x
    )
    z = np.sum(
        np.tanh(y)
        * w[
            1:
        ],
        axis=0,
    )
    return np.sum(z * z) + (np.max(y) +
                            1.0)


def test_statements_written_over_several_lines():
    # black's style: the lowering drops a statement's outer parentheses, so the line breaks
    # inside them must not reach the generated code (they did: an internal syntax error)
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    assert_gradients(multi_line, x, w)
    text = s2sgrad.source(s2sgrad.grad(multi_line, argnums=(0, 1)))
    assert "# y = (x * 2.0 + np.sin(x) * x)" in text  # the comment inside is gone too
    _, tangent = s2sgrad.jvp(multi_line, (x, w), (np.ones_like(x), np.zeros_like(w)))
    np.testing.assert_allclose(tangent, np.sum(s2sgrad.grad(multi_line)(x, w)), rtol=1e-10)


def masked_by_bitwise(x):
    m = (x > 0) & (x < 1) | (x > 3)
    m &= x != 2.0
    m ^= x > 10.0
    return np.sum(x * x * m) + np.sum(np.where(~m, np.sin(x), 0.0))


def test_bitwise_operators_on_masks_carry_no_derivative():
    # `&`, `|` and `^` raised a bare KeyError in the lowering; `m &= x < 1` was written as
    # `m & x < 1`, which Python reads as `(m & x) < 1`.
    x = np.array([0.5, 2.0, 4.0, -1.0, 0.25])
    assert_gradients(masked_by_bitwise, x)
    assert "m & (x != 2.0)" in s2sgrad.source(s2sgrad.grad(masked_by_bitwise)).replace("m_2", "m")
