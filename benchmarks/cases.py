"""Benchmark functions (the primals) and their careful hand-written value+gradient versions.

The primals are written the way a user writes numpy code; s2sgrad transforms them from this file's
source, and autograd runs the same code objects with ``np`` rebound to ``autograd.numpy``.

The hand-written versions are what a skilled person writes by hand for the value and gradient of
the same computation: one forward sweep whose values are kept and reused, no work for gradients
nobody asked for, no gradient through a stabilizing max (it cancels), in-place updates where a
temporary is dead anyway, and the same numpy primitives as the primal (np.sin stays np.sin, so the
comparison measures differentiation overhead, not a change of primitive).

Each case is a ``Case`` with a ``make(size_scale)`` that builds fresh inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import numpy as np


# ----- primals (what s2sgrad and autograd differentiate) ------------------------------------------


def elementwise_chain(x):
    return np.sum(np.tanh(x) * np.exp(-x**2) + np.sin(x) ** 2)


def mlp_loss(W1, b1, W2, b2, X, Y):
    """784-128-10 tanh MLP, softmax cross-entropy (max-stabilized), mean over the batch.

    Y is one-hot (batch, 10).
    """
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * (z - lse)) / X.shape[0]


def scalar_loop(x):
    for i in range(100):
        x = x * 0.9 + np.sin(x)
    return x


def rnn_loss(Wx, Wh, xs, h0):
    """tanh RNN, 50 steps; loss = sum of squares of the last hidden state."""
    h = h0
    for t in range(50):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h**2)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


# ----- the same kernels, spelled otherwise (an optimization must not depend on the spelling) ------


def mlp_loss_dot(W1, b1, W2, b2, X, Y):
    """mlp_loss with np.dot for the products."""
    h = np.tanh(np.dot(X, W1) + b1)
    logits = np.dot(h, W2) + b2
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * (z - lse)) / X.shape[0]


def rnn_loss_dot(Wx, Wh, xs, h0):
    """rnn_loss with np.dot for the products."""
    h = h0
    for t in range(50):
        h = np.tanh(np.dot(xs[t], Wx) + np.dot(h, Wh))
    return np.sum(h**2)


def rnn_loss_method(Wx, Wh, xs, h0):
    """rnn_loss with the ndarray.dot method for the products."""
    h = h0
    for t in range(50):
        h = np.tanh(xs[t].dot(Wx) + h.dot(Wh))
    return np.sum(h**2)


def rnn_loss_for_x(Wx, Wh, xs, h0):
    """rnn_loss iterating over the rows of xs (it has 50) instead of an index."""
    h = h0
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh)
    return np.sum(h**2)


def rnn_loss_w_left(Ux, Uh, xs, h0):
    """rnn_loss with the weights on the left (column vectors): Ux = Wx.T, Uh = Wh.T."""
    h = h0
    for t in range(50):
        h = np.tanh(Ux @ xs[t] + Uh @ h)
    return np.sum(h**2)


# ----- hand-written value and gradient -------------------------------------------------------------


def elementwise_chain_hand(x):
    t = np.tanh(x)
    e = np.exp(-(x * x))
    s = np.sin(x)
    te = t * e
    value = np.sum(te + s * s)
    # d/dx: (1 - t^2) e + t e (-2x) + 2 s cos(x)
    t *= t
    np.subtract(1.0, t, out=t)  # t := 1 - tanh^2
    t *= e
    te *= x
    te *= 2.0
    t -= te
    c = np.cos(x)
    c *= s
    c *= 2.0
    t += c
    return value, t


def mlp_loss_hand(W1, b1, W2, b2, X, Y):
    n = X.shape[0]
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    logits = h @ W2
    logits += b2
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    s = p.sum(axis=1, keepdims=True)
    lse = np.log(s)
    value = -np.sum(Y * (logits - lse)) / n
    # d loss / d logits = (softmax - Y) / n   (the max shift has zero gradient)
    p /= s
    p -= Y
    p /= n
    gW2 = h.T @ p
    gb2 = p.sum(axis=0)
    dh = p @ W2.T
    h *= h
    np.subtract(1.0, h, out=h)
    dh *= h
    gW1 = X.T @ dh
    gb1 = dh.sum(axis=0)
    return value, (gW1, gb1, gW2, gb2)


def scalar_loop_hand(x):
    # One scalar input: forward-mode derivative carried along the loop (no tape needed).
    d = 1.0
    for i in range(100):
        d *= 0.9 + np.cos(x)
        x = x * 0.9 + np.sin(x)
    return x, d


def rnn_loss_hand(Wx, Wh, xs, h0):
    steps = 50
    hs = np.empty((steps + 1, h0.shape[0]))
    hs[0] = h0
    # The input projections of all steps in one matrix product.
    xw = xs[:steps] @ Wx
    for t in range(steps):
        hs[t + 1] = np.tanh(xw[t] + hs[t] @ Wh)
    h = hs[steps]
    value = np.sum(h * h)
    # Backward: the per-step pre-activation adjoints, then one matrix product per parameter.
    da = np.empty((steps, h0.shape[0]))
    dh = 2.0 * h
    WhT = Wh.T
    for t in range(steps - 1, -1, -1):
        ht = hs[t + 1]
        da_t = dh * (1.0 - ht * ht)
        da[t] = da_t
        dh = da_t @ WhT
    gWx = xs[:steps].T @ da
    gWh = hs[:steps].T @ da
    return value, (gWx, gWh)


def rnn_loss_w_left_hand(Ux, Uh, xs, h0):
    value, (gWx, gWh) = rnn_loss_hand(Ux.T, Uh.T, xs, h0)
    return value, (gWx.T, gWh.T)


def logsumexp_hand(x):
    m = np.max(x)
    e = np.exp(x - m)
    s = np.sum(e)
    value = m + np.log(s)
    e /= s  # softmax; the max has zero gradient
    return value, e


def rosenbrock_hand(x):
    a = x[:-1]
    d = x[1:] - a * a
    one_minus_a = 1.0 - a
    value = np.sum(100.0 * (d * d) + one_minus_a * one_minus_a)
    g = np.empty_like(x)
    d *= 200.0
    g[1:] = d
    g[0] = 0.0
    g[:-1] -= 2.0 * (d * a + one_minus_a)
    return value, g


# ----- the case table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    description: str
    primal: Callable
    hand: Callable
    argnums: Tuple[int, ...]
    make: Callable  # rng -> tuple of arguments


def _elementwise(n):
    def make(rng):
        return (rng.uniform(-2.0, 2.0, size=n),)

    return make


def _mlp(rng):
    batch, d_in, d_hidden, d_out = 64, 784, 128, 10
    W1 = rng.normal(size=(d_in, d_hidden)) / np.sqrt(d_in)
    b1 = 0.1 * rng.normal(size=d_hidden)
    W2 = rng.normal(size=(d_hidden, d_out)) / np.sqrt(d_hidden)
    b2 = 0.1 * rng.normal(size=d_out)
    X = rng.normal(size=(batch, d_in))
    Y = np.eye(d_out)[rng.integers(0, d_out, size=batch)]
    return W1, b1, W2, b2, X, Y


def _scalar(rng):
    return (float(rng.uniform(0.5, 1.5)),)


def _rnn(rng):
    hidden, steps, d_in = 32, 50, 16
    Wx = rng.normal(size=(d_in, hidden)) / np.sqrt(d_in)
    Wh = 0.9 * rng.normal(size=(hidden, hidden)) / np.sqrt(hidden)
    xs = rng.normal(size=(steps, d_in))
    h0 = np.zeros(hidden)
    return Wx, Wh, xs, h0


def _rnn_w_left(rng):
    Wx, Wh, xs, h0 = _rnn(rng)
    return np.ascontiguousarray(Wx.T), np.ascontiguousarray(Wh.T), xs, h0


def _logsumexp(rng):
    return (rng.normal(size=1000) * 5.0,)


def _rosenbrock(rng):
    return (rng.uniform(-1.5, 1.5, size=1000),)


CASES = (
    Case("elementwise_1e6", "sum(tanh(x)*exp(-x**2) + sin(x)**2), N=1e6", elementwise_chain,
         elementwise_chain_hand, (0,), _elementwise(1_000_000)),
    Case("elementwise_1e3", "sum(tanh(x)*exp(-x**2) + sin(x)**2), N=1e3", elementwise_chain,
         elementwise_chain_hand, (0,), _elementwise(1_000)),
    Case("mlp", "MLP 784-128-10, batch 64, softmax xent; grads W1,b1,W2,b2", mlp_loss,
         mlp_loss_hand, (0, 1, 2, 3), _mlp),
    Case("scalar_loop", "100 steps x = x*0.9 + np.sin(x), scalar", scalar_loop, scalar_loop_hand,
         (0,), _scalar),
    Case("rnn", "tanh RNN, hidden 32, 50 steps, input 16; grads Wx, Wh", rnn_loss, rnn_loss_hand,
         (0, 1), _rnn),
    Case("rnn_dot", "rnn with np.dot", rnn_loss_dot, rnn_loss_hand, (0, 1), _rnn),
    Case("rnn_method", "rnn with h.dot(Wh)", rnn_loss_method, rnn_loss_hand, (0, 1), _rnn),
    Case("rnn_for_x", "rnn iterating `for x in xs`", rnn_loss_for_x, rnn_loss_hand, (0, 1), _rnn),
    Case("rnn_w_left", "rnn with the weights on the left, Wh @ h", rnn_loss_w_left,
         rnn_loss_w_left_hand, (0, 1), _rnn_w_left),
    Case("mlp_dot", "mlp with np.dot", mlp_loss_dot, mlp_loss_hand, (0, 1, 2, 3), _mlp),
    Case("logsumexp", "stabilized logsumexp, N=1000", logsumexp, logsumexp_hand, (0,), _logsumexp),
    Case("rosenbrock", "Rosenbrock with slices, N=1000", rosenbrock, rosenbrock_hand, (0,),
         _rosenbrock),
)

BY_NAME = {case.name: case for case in CASES}
