"""Issue 28's benchmark set: 25 kernels, each spelled at least two ways, with one hand-written
numpy value+gradient per kernel.

The spellings are written as different people write the same computation (``h @ W`` /
``np.dot(h, W)`` / ``h.dot(W)``; ``for t in range(...)`` / ``for x in xs`` / ``while``; a list
appended then stacked / a preallocated array written by index; methods / functions; ``math.sin``
/ ``np.sin``; a helper function / the expression inline). s2sgrad transforms each spelling from
this file's source; autograd (and JAX, where installed) runs the same code objects with ``np``
and ``math`` rebound (benchmarks/suite.py). A spelling autograd cannot run (index writes) is
reported there as skipped; every kernel has at least one spelling autograd runs, so every
hand-written gradient is checked against autograd when the suite runs.

The hand-written versions are what a careful person writes for the value and gradient: one
forward sweep whose values are kept, loop-invariant products out of loops, per-step adjoints
written into preallocated arrays and multiplied into the weights' gradients once after the loop,
forward-mode derivatives where that is cheaper (one float input), ``math`` on Python floats.

``Kernel.make(rng, steps)`` builds fresh inputs; ``steps`` is the loop length for the loop
kernels (``None``: the kernel's default) and ignored by the others. Gradients are with respect to
``Kernel.argnums``; ``static`` lists the integer arguments (loop lengths) that JAX-jit needs to
know at trace time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import numpy as np

import cases


def sigmoid(a):
    """The logistic function, as people write it (a helper called from some spellings)."""
    return 1.0 / (1.0 + np.exp(-a))


# ----- 1. Kepler's equation: a while loop on two Python floats --------------------------------------


def kepler_while(M, e, n):
    E = M
    i = 0
    while i < n:
        E = E - (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
        i += 1
    return E


def kepler_newton(M, e, n):
    E = M
    for _ in range(n):
        f = E - e * math.sin(E) - M
        fprime = 1.0 - e * math.cos(E)
        E -= f / fprime
    return E


def kepler_hand(M, e, n):
    """Forward mode with two tangents (dE/dM, dE/de) carried along the Newton steps."""
    E, dM, de = M, 1.0, 0.0
    for _ in range(n):
        s, c = math.sin(E), math.cos(E)
        f = E - e * s - M
        fp = 1.0 - e * c
        q = f / fp
        dM = dM - (dM * fp - 1.0 - q * (e * s * dM)) / fp
        de = de - (de * fp - s - q * (e * s * de - c)) / fp
        E = E - q
    return E, (dM, de)


# ----- 2. heat equation: explicit time steps with slice updates -------------------------------------


def heat_slices(u0, r, n):
    u = u0.copy()
    for _ in range(n):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def heat_concat(u0, r, n):
    u = u0
    for _ in range(n):
        interior = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = np.concatenate([u[:1], interior, u[-1:]])
    return np.sum(u ** 2)


def heat_laplacian(u0, r, n):
    u = u0.copy()
    lap = np.zeros_like(u)
    for step in range(n):
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + r * lap
    return np.sum(u * u)


def heat_hand(u0, r, n):
    """The update is linear: no tape; the adjoint is the transposed stencil, in place."""
    u = u0.copy()
    tmp = np.empty(u.shape[0] - 2)
    for _ in range(n):
        np.multiply(u[1:-1], 2.0, out=tmp)
        np.subtract(u[2:], tmp, out=tmp)
        tmp += u[:-2]
        tmp *= r
        u[1:-1] += tmp
    value = np.sum(u * u)
    g = 2.0 * u
    for _ in range(n):
        np.multiply(g[1:-1], r, out=tmp)
        g[1:-1] -= 2.0 * tmp
        g[2:] += tmp
        g[:-2] += tmp
    return value, (g,)


# ----- 3. a cumprod-like loop: append to a list, then stack -----------------------------------------


def cumprod_append(x):
    acc = np.ones(x.shape[1])
    rows = []
    for t in range(x.shape[0]):
        acc = acc * x[t]
        rows.append(acc)
    return np.sum(np.stack(rows))


def cumprod_prealloc(x):
    out = np.empty_like(x)
    acc = np.ones(x.shape[1])
    for t in range(x.shape[0]):
        acc = acc * x[t]
        out[t] = acc
    return np.sum(out)


def cumprod_rows(x):
    acc = np.ones(x.shape[1])
    rows = []
    for row in x:
        acc = acc * row
        rows.append(acc)
    return np.array(rows).sum()


def cumprod_hand(x):
    P = np.cumprod(x, axis=0)
    value = np.sum(P)
    R = np.cumsum(P[::-1], axis=0)[::-1]
    R /= x
    return value, (R,)


# ----- 4. Gaussian log-likelihood through cholesky and solve -----------------------------------------


def gauss_chol(A, mu, X):
    S = A @ A.T + np.eye(A.shape[0])
    L = np.linalg.cholesky(S)
    R = X - mu
    Z = np.linalg.solve(L, R.T)
    n, d = X.shape
    return (-0.5 * np.sum(Z ** 2) - n * np.sum(np.log(np.diag(L)))
            - 0.5 * n * d * np.log(2.0 * np.pi))


def gauss_chol_twice(A, mu, X):
    cov = np.dot(A, A.T) + np.eye(len(mu))
    chol = np.linalg.cholesky(cov)
    diff = X - mu[None, :]
    alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, diff.T))
    n = X.shape[0]
    return (-0.5 * np.sum(diff.T * alpha) - n * np.log(np.diag(chol)).sum()
            - 0.5 * n * len(mu) * np.log(2 * np.pi))


def gauss_chol_hand(A, mu, X):
    """d/dS = (S^-1 R^T R S^-1 - n S^-1) / 2 (symmetric); d/dA = 2 (d/dS) A."""
    n, d = X.shape
    S = A @ A.T + np.eye(d)
    L = np.linalg.cholesky(S)
    R = X - mu
    Z = np.linalg.solve(L, R.T)
    value = -0.5 * np.sum(Z ** 2) - n * np.sum(np.log(np.diag(L))) - 0.5 * n * d * np.log(2.0 * np.pi)
    W = np.linalg.solve(L.T, Z)  # S^-1 R^T
    Linv = np.linalg.solve(L, np.eye(d))
    G = W @ W.T
    G -= n * (Linv.T @ Linv)
    return value, (G @ A, W.sum(axis=1))


# ----- 5. n-body energy with pairwise distances ----------------------------------------------------


def nbody_broadcast(P, V, m):
    n = P.shape[0]
    D = P[:, None, :] - P[None, :, :]
    r2 = np.sum(D ** 2, axis=-1) + np.eye(n)
    inv_r = 1.0 / np.sqrt(r2)
    pot = -0.5 * np.sum(np.outer(m, m) * inv_r * (1.0 - np.eye(n)))
    kin = 0.5 * np.sum(m[:, None] * V ** 2)
    return kin + pot


def nbody_loop(P, V, m):
    n = len(m)
    pot = 0.0
    for i in range(n - 1):
        d = P[i + 1:] - P[i]
        r = np.sqrt(np.sum(d * d, axis=1))
        pot = pot - m[i] * np.sum(m[i + 1:] / r)
    kin = 0.5 * np.sum(m * np.sum(V * V, axis=1))
    return kin + pot


def nbody_hand(P, V, m):
    D = P[:, None, :] - P[None, :, :]
    r2 = np.einsum("ijk,ijk->ij", D, D)
    np.fill_diagonal(r2, 1.0)
    inv = 1.0 / np.sqrt(r2)
    np.fill_diagonal(inv, 0.0)
    w = np.outer(m, m)
    w *= inv
    value = 0.5 * np.sum(m[:, None] * V * V) - 0.5 * np.sum(w)
    w *= inv * inv  # m_i m_j / r^3
    gP = P * w.sum(axis=1)[:, None] - w @ P
    return value, (gP, m[:, None] * V)


# ----- 6. GRU cell loop ---------------------------------------------------------------------------


def gru_matmul(Wz, Uz, Wr, Ur, Wh, Uh, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        x = xs[t]
        z = 1.0 / (1.0 + np.exp(-(x @ Wz + h @ Uz)))
        r = 1.0 / (1.0 + np.exp(-(x @ Wr + h @ Ur)))
        hh = np.tanh(x @ Wh + (r * h) @ Uh)
        h = (1.0 - z) * h + z * hh
    return np.sum(h ** 2)


def gru_dot(Wz, Uz, Wr, Ur, Wh, Uh, xs, h0):
    h = h0
    for x in xs:
        z = sigmoid(np.dot(x, Wz) + np.dot(h, Uz))
        r = sigmoid(np.dot(x, Wr) + np.dot(h, Ur))
        hh = np.tanh(np.dot(x, Wh) + np.dot(r * h, Uh))
        h = (1.0 - z) * h + z * hh
    return np.sum(h * h)


def gru_hand(Wz, Uz, Wr, Ur, Wh, Uh, xs, h0):
    T, H = xs.shape[0], h0.shape[0]
    XZ, XR, XH = xs @ Wz, xs @ Wr, xs @ Wh
    hs = np.empty((T + 1, H))
    hs[0] = h0
    Z, Rg, HH = np.empty((T, H)), np.empty((T, H)), np.empty((T, H))
    for t in range(T):
        h = hs[t]
        z = 1.0 / (1.0 + np.exp(-(XZ[t] + h @ Uz)))
        r = 1.0 / (1.0 + np.exp(-(XR[t] + h @ Ur)))
        hh = np.tanh(XH[t] + (r * h) @ Uh)
        Z[t], Rg[t], HH[t] = z, r, hh
        hs[t + 1] = (1.0 - z) * h + z * hh
    value = np.sum(hs[T] ** 2)
    DZ, DR, DH = np.empty((T, H)), np.empty((T, H)), np.empty((T, H))
    dh = 2.0 * hs[T]
    UzT, UrT, UhT = Uz.T, Ur.T, Uh.T
    for t in range(T - 1, -1, -1):
        h, z, r, hh = hs[t], Z[t], Rg[t], HH[t]
        da_h = dh * z * (1.0 - hh * hh)
        da_z = dh * (hh - h) * z * (1.0 - z)
        d_rh = da_h @ UhT
        da_r = d_rh * h * r * (1.0 - r)
        dh = dh * (1.0 - z) + d_rh * r + da_z @ UzT + da_r @ UrT
        DZ[t], DR[t], DH[t] = da_z, da_r, da_h
    Hp = hs[:T]
    xsT, HpT = xs.T, Hp.T
    return value, (xsT @ DZ, HpT @ DZ, xsT @ DR, HpT @ DR, xsT @ DH, (Rg * Hp).T @ DH)


# ----- 7. tanh RNN (the number of steps from the data) ------------------------------------------------


def rnn_matmul(Wx, Wh, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h ** 2)


def rnn_dot(Wx, Wh, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = np.tanh(np.dot(xs[t], Wx) + np.dot(h, Wh))
    return np.sum(h ** 2)


def rnn_method(Wx, Wh, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t].dot(Wx) + h.dot(Wh))
    return (h ** 2).sum()


def rnn_for_x(Wx, Wh, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh)
    return np.sum(h * h)


def rnn_hand(Wx, Wh, xs, h0):
    steps, H = xs.shape[0], h0.shape[0]
    hs = np.empty((steps + 1, H))
    hs[0] = h0
    xw = xs @ Wx
    for t in range(steps):
        hs[t + 1] = np.tanh(xw[t] + hs[t] @ Wh)
    h = hs[steps]
    value = np.sum(h * h)
    da = np.empty((steps, H))
    dh = 2.0 * h
    WhT = Wh.T
    for t in range(steps - 1, -1, -1):
        ht = hs[t + 1]
        da_t = dh * (1.0 - ht * ht)
        da[t] = da_t
        dh = da_t @ WhT
    return value, (xs.T @ da, hs[:steps].T @ da)


# ----- 8. single-head attention -------------------------------------------------------------------


def attention_matmul(Wq, Wk, Wv, X):
    Q = X @ Wq
    K = X @ Wk
    V = X @ Wv
    S = Q @ K.T / np.sqrt(Q.shape[1])
    S = S - np.max(S, axis=1, keepdims=True)
    P = np.exp(S)
    P = P / np.sum(P, axis=1, keepdims=True)
    O = P @ V
    return np.sum(O ** 2)


def attention_einsum(Wq, Wk, Wv, X):
    Q = np.einsum("td,de->te", X, Wq)
    K = np.einsum("td,de->te", X, Wk)
    V = np.einsum("td,de->te", X, Wv)
    scores = np.einsum("te,se->ts", Q, K) / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = np.einsum("ts,se->te", weights, V)
    return np.sum(out * out)


def attention_hand(Wq, Wk, Wv, X):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scale = np.sqrt(Q.shape[1])
    P = Q @ K.T / scale
    P -= P.max(axis=1, keepdims=True)
    np.exp(P, out=P)
    P /= P.sum(axis=1, keepdims=True)
    O = P @ V
    value = np.sum(O * O)
    O *= 2.0  # dO
    dV = P.T @ O
    dS = O @ V.T
    dS -= np.sum(dS * P, axis=1, keepdims=True)
    dS *= P
    dS /= scale
    XT = X.T
    return value, (XT @ (dS @ K), XT @ (dS.T @ Q), XT @ dV)


# ----- 9 / 18. logistic regression (small, and 1e5 x 100) ------------------------------------------


def logreg_logaddexp(w, b, X, y):
    z = X @ w + b
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logreg_sigmoid(w, b, X, y):
    p = 1.0 / (1.0 + np.exp(-(np.dot(X, w) + b)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logreg_rows(w, b, X, y):  # a loss per sample, summed in a loop over the rows
    n = X.shape[0]
    loss = 0.0
    for i in range(n):
        z = X[i] @ w + b
        loss = loss + np.logaddexp(0.0, z) - y[i] * z
    return loss / n


def logreg_hand(w, b, X, y):
    z = X @ w
    z += b
    value = np.mean(np.logaddexp(0.0, z) - y * z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    z += 1.0
    np.reciprocal(z, out=z)  # sigmoid
    z -= y
    z /= X.shape[0]
    return value, (X.T @ z, float(np.sum(z)))


# ----- 10. MLP (today's case), with methods -----------------------------------------------------------


def mlp_methods(W1, b1, W2, b2, X, Y):
    h = np.tanh(X.dot(W1) + b1)
    logits = h.dot(W2) + b2
    z = logits - logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(Y * (z - lse)).sum() / X.shape[0]


# ----- 25. an MLP whose parameters are a list of (W, b) layers: a pytree argument ------------------


def mlp_layers_loop(params, X, y):
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(X.shape[0]), y])


def mlp_layers_range(params, X, y):
    h = X
    for i in range(len(params) - 1):
        h = np.tanh(np.dot(h, params[i][0]) + params[i][1])
    logits = np.dot(h, params[-1][0]) + params[-1][1]
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(X.shape[0]), y].mean()


def mlp_layers_hand(params, X, y):
    n = X.shape[0]
    hs = [X]
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
        hs.append(h)
    W, b = params[-1]
    logits = h @ W + b
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    value = -np.mean(logits[rows, y] - np.log(s[:, 0]))
    g = e / s
    g[rows, y] -= 1.0
    g /= n
    grads = [None] * len(params)
    grads[-1] = (h.T @ g, g.sum(axis=0))
    d = g @ W.T
    for k in range(len(params) - 2, -1, -1):
        W, b = params[k]
        d *= 1.0 - hs[k + 1] ** 2
        grads[k] = (hs[k].T @ d, d.sum(axis=0))
        if k:
            d = d @ W.T
    return value, (grads,)


# ----- 11-14. today's elementwise, scalar loop, logsumexp, rosenbrock, spelled otherwise --------------


def elementwise_methods(x):
    t = np.tanh(x)
    return (t * np.exp(-x * x) + np.square(np.sin(x))).sum()


def elementwise_hand(x):
    value, g = cases.elementwise_chain_hand(x)
    return value, (g,)


def scalar_loop_range(x, n):
    for i in range(n):
        x = x * 0.9 + np.sin(x)
    return x


def scalar_loop_while(x, n):
    i = 0
    while i < n:
        x = 0.9 * x + math.sin(x)
        i += 1
    return x


def scalar_loop_hand(x, n):
    """Forward mode on a Python float, with ``math`` (what a person writes for floats)."""
    d = 1.0
    for _ in range(n):
        d *= 0.9 + math.cos(x)
        x = x * 0.9 + math.sin(x)
    return x, (d,)


def logsumexp_methods(x):
    m = x.max()
    return m + np.log(np.exp(x - m).sum())


def logsumexp_hand(x):
    value, g = cases.logsumexp_hand(x)
    return value, (g,)


def rosenbrock_named(x):
    a = x[:-1]
    b = x[1:]
    return np.sum(100.0 * np.square(b - a * a) + np.square(1.0 - a))


def rosenbrock_hand(x):
    value, g = cases.rosenbrock_hand(x)
    return value, (g,)


# ----- 15. LSTM -----------------------------------------------------------------------------------


def lstm_slices(Wx, Wh, b, xs, h0, c0):
    H = h0.shape[0]
    h = h0
    c = c0
    for t in range(xs.shape[0]):
        a = xs[t] @ Wx + h @ Wh + b
        i = 1.0 / (1.0 + np.exp(-a[:H]))
        f = 1.0 / (1.0 + np.exp(-a[H:2 * H]))
        o = 1.0 / (1.0 + np.exp(-a[2 * H:3 * H]))
        g = np.tanh(a[3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h ** 2)


def lstm_helper(Wx, Wh, b, xs, h0, c0):
    H = len(h0)
    h, c = h0, c0
    for x in xs:
        a = np.dot(x, Wx) + np.dot(h, Wh) + b
        i, f, o = sigmoid(a[0:H]), sigmoid(a[H:2 * H]), sigmoid(a[2 * H:3 * H])
        g = np.tanh(a[3 * H:4 * H])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h * h)


def lstm_hand(Wx, Wh, b, xs, h0, c0):
    T, H = xs.shape[0], h0.shape[0]
    XW = xs @ Wx
    hs, cs = np.empty((T + 1, H)), np.empty((T + 1, H))
    hs[0], cs[0] = h0, c0
    G, TC = np.empty((T, 4 * H)), np.empty((T, H))
    for t in range(T):
        a = XW[t] + hs[t] @ Wh
        a += b
        s = 1.0 / (1.0 + np.exp(-a[:3 * H]))
        g = np.tanh(a[3 * H:])
        G[t, :3 * H], G[t, 3 * H:] = s, g
        c = s[H:2 * H] * cs[t] + s[:H] * g
        cs[t + 1] = c
        tc = np.tanh(c)
        TC[t] = tc
        hs[t + 1] = s[2 * H:] * tc
    value = np.sum(hs[T] ** 2)
    DA = np.empty((T, 4 * H))
    dh, dc = 2.0 * hs[T], np.zeros(H)
    WhT = Wh.T
    for t in range(T - 1, -1, -1):
        i, f, o, g = G[t, :H], G[t, H:2 * H], G[t, 2 * H:3 * H], G[t, 3 * H:]
        tc = TC[t]
        dc = dc + dh * o * (1.0 - tc * tc)
        da = DA[t]
        da[:H] = dc * g * i * (1.0 - i)
        da[H:2 * H] = dc * cs[t] * f * (1.0 - f)
        da[2 * H:3 * H] = dh * tc * o * (1.0 - o)
        da[3 * H:] = dc * i * (1.0 - g * g)
        dc = dc * f
        dh = da @ WhT
    return value, (xs.T @ DA, hs[:T].T @ DA, DA.sum(axis=0))


# ----- 16. a 1e7-element loss ---------------------------------------------------------------------


def logcosh_mean(pred, target):
    r = pred - target
    return np.mean(np.log(np.cosh(r)))


def logcosh_sum(pred, target):
    return np.sum(np.log(np.cosh(pred - target))) / pred.size


def logcosh_hand(pred, target):
    r = pred - target
    t = np.cosh(r)
    np.log(t, out=t)
    value = np.mean(t)
    del t
    np.tanh(r, out=r)
    r /= pred.size
    return value, (r,)


# ----- 17. a scalar math.* loop with several float inputs (damped pendulum, explicit Euler) ----------


def pendulum_for(theta, omega, g_over_l, damping, dt, n):
    for _ in range(n):
        omega = omega - dt * (g_over_l * math.sin(theta) + damping * omega)
        theta = theta + dt * omega
    return theta * theta + 0.5 * omega * omega


def pendulum_while(theta, omega, g_over_l, damping, dt, n):
    i = 0
    while i < n:
        accel = -g_over_l * math.sin(theta) - damping * omega
        omega += dt * accel
        theta += dt * omega
        i += 1
    return theta ** 2 + 0.5 * omega ** 2


def pendulum_hand(theta, omega, g_over_l, damping, dt, n):
    """Reverse mode on Python floats: the angles and speeds kept in preallocated lists."""
    thetas, omegas, sines = [0.0] * n, [0.0] * n, [0.0] * n
    for k in range(n):
        s = math.sin(theta)
        thetas[k], omegas[k], sines[k] = theta, omega, s
        omega = omega - dt * (g_over_l * s + damping * omega)
        theta = theta + dt * omega
    value = theta * theta + 0.5 * omega * omega
    tb, ob, gb, db = 2.0 * theta, omega, 0.0, 0.0
    keep = 1.0 - dt * damping
    for k in range(n - 1, -1, -1):
        ob += dt * tb
        step = dt * ob
        gb -= step * sines[k]
        db -= step * omegas[k]
        tb -= step * g_over_l * math.cos(thetas[k])
        ob *= keep
    return value, (tb, ob, gb, db)


# ----- 19. Gaussian log-likelihood with slogdet ----------------------------------------------------


def gauss_slogdet(A, mu, X):
    S = A @ A.T + np.eye(A.shape[0])
    sign, logdet = np.linalg.slogdet(S)
    R = X - mu
    quad = np.sum(R * np.linalg.solve(S, R.T).T)
    n, d = X.shape
    return -0.5 * quad - 0.5 * n * logdet - 0.5 * n * d * np.log(2.0 * np.pi)


def gauss_slogdet_trace(A, mu, X):
    S = np.dot(A, A.T) + np.eye(len(mu))
    logdet = np.linalg.slogdet(S)[1]
    R = X - mu
    n = X.shape[0]
    quad = np.trace(np.linalg.solve(S, R.T @ R))
    return -0.5 * (quad + n * logdet + n * len(mu) * np.log(2 * np.pi))


def gauss_slogdet_hand(A, mu, X):
    n, d = X.shape
    S = A @ A.T + np.eye(d)
    sign, logdet = np.linalg.slogdet(S)
    R = X - mu
    W = np.linalg.solve(S, R.T)  # S^-1 R^T
    value = -0.5 * np.sum(R * W.T) - 0.5 * n * logdet - 0.5 * n * d * np.log(2.0 * np.pi)
    G = W @ W.T
    G -= n * np.linalg.inv(S)
    return value, (G @ A, W.sum(axis=1))


# ----- 20. ridge regression -------------------------------------------------------------------------


def ridge_sum(w, X, y, lam):
    r = X @ w - y
    return np.sum(r ** 2) + lam * np.sum(w ** 2)


def ridge_norm(w, X, y, lam):
    return np.linalg.norm(np.dot(X, w) - y) ** 2 + lam * w.dot(w)


def ridge_hand(w, X, y, lam):
    r = X @ w
    r -= y
    value = r @ r + lam * (w @ w)
    g = X.T @ r
    g += lam * w
    g *= 2.0
    return value, (g,)


# ----- 21. layer normalization ----------------------------------------------------------------------


def layernorm_functions(x, gamma, beta, T):
    mu = np.mean(x, axis=1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma + beta
    return np.sum(y * T)


def layernorm_methods(x, gamma, beta, T):
    xc = x - x.mean(axis=-1, keepdims=True)
    y = gamma * xc / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5) + beta
    return (y * T).sum()


def layernorm_hand(x, gamma, beta, T):
    xc = x - np.mean(x, axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(np.mean(xc * xc, axis=1, keepdims=True) + 1e-5)
    xc *= inv  # xhat
    value = np.sum((xc * gamma + beta) * T)
    ggamma = np.sum(T * xc, axis=0)
    dxhat = T * gamma
    gx = dxhat - np.mean(dxhat, axis=1, keepdims=True)
    gx -= xc * np.mean(dxhat * xc, axis=1, keepdims=True)
    gx *= inv
    return value, (gx, ggamma, T.sum(axis=0))


# ----- 22. Horner's polynomial evaluation (the loop runs over the coefficients) -----------------------


def horner_range(c, x):
    y = np.zeros_like(x)
    for k in range(c.shape[0]):
        y = y * x + c[k]
    return np.sum(np.sin(y))


def horner_for_c(c, x):
    y = np.zeros(x.shape)
    for ck in c:
        y = x * y + ck
    return np.sin(y).sum()


def horner_hand(c, x):
    """dy/dx by Horner alongside y; d/dc_k by powers of x accumulated backwards. No tape."""
    y, dy = np.zeros_like(x), np.zeros_like(x)
    for k in range(c.shape[0]):
        dy *= x
        dy += y
        y = y * x + c[k]
    value = np.sum(np.sin(y))
    p = np.cos(y)
    gx = p * dy
    gc = np.empty_like(c)
    for k in range(c.shape[0] - 1, -1, -1):
        gc[k] = p.sum()
        p *= x
    return value, (gc, gx)


# ----- 23. Huber loss -----------------------------------------------------------------------------


def huber_where(pred, target, delta):
    r = pred - target
    a = np.abs(r)
    return np.sum(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def huber_minimum(pred, target, delta):
    a = np.abs(pred - target)
    q = np.minimum(a, delta)
    return np.sum(0.5 * q ** 2 + delta * (a - q))


def huber_hand(pred, target, delta):
    r = pred - target
    a = np.abs(r)
    value = np.sum(np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta)))
    np.clip(r, -delta, delta, out=r)
    return value, (r,)


# ----- 24. 1-D convolution with a loop over the taps ---------------------------------------------------


def conv1d_slices(w, x):
    K = w.shape[0]
    m = x.shape[0] - K + 1
    y = np.zeros(m)
    for k in range(K):
        y = y + w[k] * x[k:k + m]
    return np.sum(np.tanh(y))


def conv1d_enumerate(w, x):
    m = len(x) - len(w) + 1
    y = 0.0
    for k, wk in enumerate(w):
        y = y + wk * x[k:k + m]
    return np.tanh(y).sum()


def conv1d_convolve(w, x):
    return np.sum(np.tanh(np.convolve(x, w[::-1], mode="valid")))


def conv1d_hand(w, x):
    K = w.shape[0]
    m = x.shape[0] - K + 1
    y = np.zeros(m)
    for k in range(K):
        y += w[k] * x[k:k + m]
    np.tanh(y, out=y)
    value = np.sum(y)
    np.multiply(y, y, out=y)
    np.subtract(1.0, y, out=y)  # d/dy
    return value, (np.correlate(x, y, "valid"), np.convolve(y, w, "full"))


# ----- inputs ---------------------------------------------------------------------------------------


def _kepler(rng, steps):
    return float(rng.uniform(0.5, 2.5)), float(rng.uniform(0.1, 0.6)), steps or 50


def _heat(rng, steps):
    x = np.linspace(0.0, 1.0, 200)
    return np.sin(np.pi * x) + 0.1 * rng.normal(size=200), 0.25, steps or 100


def _cumprod(rng, steps):
    return (rng.uniform(0.99, 1.01, size=(steps or 100, 16)),)


def _gauss(rng, steps):
    d, n = 20, 200
    return rng.normal(size=(d, d)) / np.sqrt(d), rng.normal(size=d), rng.normal(size=(n, d)) * 2.0


def _nbody(rng, steps):
    n = 64
    return rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), rng.uniform(0.5, 2.0, size=n)


def _gru(rng, steps):
    H, d_in, T = 32, 16, steps or 50
    w = [rng.normal(size=shape) / np.sqrt(shape[0]) for shape in ((d_in, H), (H, H)) * 3]
    return (*w, rng.normal(size=(T, d_in)), np.zeros(H))


def _rnn(rng, steps):
    Wx, Wh, xs, h0 = cases._rnn(rng)
    if steps:
        xs = rng.normal(size=(steps, xs.shape[1]))
    return Wx, Wh, xs, h0


def _attention(rng, steps):
    T, d_model, d = 64, 32, 16
    return (*(rng.normal(size=(d_model, d)) / np.sqrt(d_model) for _ in range(3)),
            rng.normal(size=(T, d_model)))


def _logreg(n, d):
    def make(rng, steps):
        X = rng.normal(size=(n, d)) / np.sqrt(d)
        return rng.normal(size=d), 0.1, X, (rng.uniform(size=n) < 0.5).astype(float)

    return make


def _mlp(rng, steps):
    return cases._mlp(rng)


def _mlp_layers(rng, steps):
    sizes, n = (64, 128, 128, 10), 64
    params = [(rng.normal(size=(a, b)) / np.sqrt(a), 0.1 * rng.normal(size=b))
              for a, b in zip(sizes[:-1], sizes[1:])]
    return params, rng.normal(size=(n, sizes[0])), rng.integers(0, sizes[-1], size=n)


def _elementwise(rng, steps):
    return (rng.uniform(-2.0, 2.0, size=1_000_000),)


def _scalar(rng, steps):
    return float(rng.uniform(0.5, 1.5)), steps or 100


def _logsumexp(rng, steps):
    return cases._logsumexp(rng)


def _rosenbrock(rng, steps):
    return cases._rosenbrock(rng)


def _lstm(rng, steps):
    H, d_in, T = 32, 16, steps or 50
    return (rng.normal(size=(d_in, 4 * H)) / np.sqrt(d_in), rng.normal(size=(H, 4 * H)) / np.sqrt(H),
            0.1 * rng.normal(size=4 * H), rng.normal(size=(T, d_in)), np.zeros(H), np.zeros(H))


def _logcosh(rng, steps):
    n = 10_000_000
    return rng.normal(size=n), rng.normal(size=n)


def _pendulum(rng, steps):
    return (float(rng.uniform(0.5, 1.5)), float(rng.uniform(-0.5, 0.5)), 9.81, 0.3, 0.01,
            steps or 100)


def _ridge(rng, steps):
    n, d = 2000, 50
    return rng.normal(size=d), rng.normal(size=(n, d)), rng.normal(size=n), 0.1


def _layernorm(rng, steps):
    n, d = 256, 64
    return (rng.normal(size=(n, d)) * 3.0 + 1.0, rng.uniform(0.5, 1.5, size=d), rng.normal(size=d),
            rng.normal(size=(n, d)))


def _horner(rng, steps):
    return 0.3 * rng.normal(size=steps or 50), rng.uniform(-0.9, 0.9, size=1000)


def _huber(rng, steps):
    n = 100_000
    return rng.normal(size=n) * 2.0, rng.normal(size=n), 1.0


def _conv1d(rng, steps):
    return rng.normal(size=16) / 4.0, rng.normal(size=10_000)


# ----- the kernel table -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Kernel:
    """One computation: its spellings (name -> primal), one hand-written value+gradient, the
    differentiated arguments, an input maker ``make(rng, steps)``, whether the loop length is a
    ``steps`` knob (``growth``: timed at 100, 1000, 4000 steps), the integer arguments JAX must
    treat as static, and the mode ``value_and_grad`` runs for these arguments."""

    name: str
    description: str
    spellings: Tuple[Tuple[str, Callable], ...]
    hand: Callable
    argnums: Tuple[int, ...]
    make: Callable
    growth: bool = False
    static: Tuple[int, ...] = ()
    mode: str = "rev"
    loop: bool = False  # the structural test compares loop bodies (spellings in DISTINCT aside)


def _s(*fns):
    return tuple((fn.__name__, fn) for fn in fns)


KERNELS = (
    Kernel("kepler", "Kepler's equation, Newton on two floats with math.sin/cos, 50 steps",
           _s(kepler_while, kepler_newton), kepler_hand, (0, 1), _kepler, growth=True,
           static=(2,), loop=True),
    Kernel("heat", "heat equation, 200 points, 100 explicit steps, slice updates; grad u0",
           _s(heat_slices, heat_concat, heat_laplacian), heat_hand, (0,), _heat, growth=True,
           static=(2,), loop=True),
    Kernel("cumprod", "cumprod-like loop over 100 rows of 16, appended and stacked",
           _s(cumprod_append, cumprod_prealloc, cumprod_rows), cumprod_hand, (0,), _cumprod,
           growth=True, loop=True),
    Kernel("gauss_chol", "Gaussian log-likelihood, cholesky + solve, d=20, n=200; grads A, mu",
           _s(gauss_chol, gauss_chol_twice), gauss_chol_hand, (0, 1), _gauss),
    Kernel("nbody", "n-body energy, 64 bodies, pairwise distances; grads P, V",
           _s(nbody_broadcast, nbody_loop), nbody_hand, (0, 1), _nbody),
    Kernel("gru", "GRU cell, hidden 32, input 16, 50 steps; grads of six weights",
           _s(gru_matmul, gru_dot), gru_hand, (0, 1, 2, 3, 4, 5), _gru, growth=True, loop=True),
    Kernel("rnn", "tanh RNN, hidden 32, input 16, 50 steps (from xs); grads Wx, Wh",
           _s(rnn_matmul, rnn_dot, rnn_method, rnn_for_x), rnn_hand, (0, 1), _rnn, growth=True,
           loop=True),
    Kernel("attention", "one attention head, T=64, d_model=32, d=16; grads Wq, Wk, Wv",
           _s(attention_matmul, attention_einsum), attention_hand, (0, 1, 2), _attention),
    Kernel("logreg", "logistic regression, 1000 x 20; grads w, b",
           _s(logreg_logaddexp, logreg_sigmoid, logreg_rows), logreg_hand, (0, 1), _logreg(1000, 20)),
    Kernel("mlp", "MLP 784-128-10, batch 64, softmax xent; grads W1, b1, W2, b2",
           _s(cases.mlp_loss, cases.mlp_loss_dot, mlp_methods),
           lambda *a: cases.mlp_loss_hand(*a), (0, 1, 2, 3), _mlp),
    Kernel("elementwise", "sum(tanh(x)*exp(-x**2) + sin(x)**2), N=1e6",
           _s(cases.elementwise_chain, elementwise_methods), elementwise_hand, (0,),
           _elementwise),
    Kernel("scalar_loop", "x = 0.9 x + sin(x) on a float, 100 steps (forward mode)",
           _s(scalar_loop_range, scalar_loop_while), scalar_loop_hand, (0,), _scalar,
           growth=True, static=(1,), mode="fwd", loop=True),
    Kernel("logsumexp", "stabilized logsumexp, N=1000",
           _s(cases.logsumexp, logsumexp_methods), logsumexp_hand, (0,), _logsumexp),
    Kernel("rosenbrock", "Rosenbrock with slices, N=1000",
           _s(cases.rosenbrock, rosenbrock_named), rosenbrock_hand, (0,), _rosenbrock),
    Kernel("lstm", "LSTM, hidden 32, input 16, 50 steps, gates by slices; grads Wx, Wh, b",
           _s(lstm_slices, lstm_helper), lstm_hand, (0, 1, 2), _lstm, growth=True, loop=True),
    Kernel("logcosh_1e7", "mean log(cosh(pred - target)), N=1e7; grad pred",
           _s(logcosh_mean, logcosh_sum), logcosh_hand, (0,), _logcosh),
    Kernel("pendulum", "damped pendulum, explicit Euler on 4 floats with math.sin, 100 steps",
           _s(pendulum_for, pendulum_while), pendulum_hand, (0, 1, 2, 3), _pendulum,
           growth=True, static=(5,), loop=True),
    Kernel("logreg_1e5", "logistic regression, 1e5 x 100; grads w, b",
           _s(logreg_logaddexp, logreg_sigmoid), logreg_hand, (0, 1), _logreg(100_000, 100)),
    Kernel("gauss_slogdet", "Gaussian log-likelihood, slogdet + solve, d=20, n=200; grads A, mu",
           _s(gauss_slogdet, gauss_slogdet_trace), gauss_slogdet_hand, (0, 1), _gauss),
    Kernel("ridge", "ridge regression, 2000 x 50; grad w",
           _s(ridge_sum, ridge_norm), ridge_hand, (0,), _ridge),
    Kernel("layernorm", "layer norm, 256 x 64, linear read-out; grads x, gamma, beta",
           _s(layernorm_functions, layernorm_methods), layernorm_hand, (0, 1, 2), _layernorm),
    Kernel("horner", "Horner's rule, 50 coefficients, 1000 points; grads c, x",
           _s(horner_range, horner_for_c), horner_hand, (0, 1), _horner, growth=True, loop=True),
    Kernel("huber", "Huber loss, N=1e5; grad pred",
           _s(huber_where, huber_minimum), huber_hand, (0,), _huber),
    Kernel("conv1d", "1-D convolution, 16 taps, 10^4 points, tanh, sum; grads w, x",
           _s(conv1d_slices, conv1d_enumerate, conv1d_convolve), conv1d_hand, (0, 1), _conv1d,
           loop=True),
    Kernel("mlp_layers", "MLP 64-128-128-10 as a list of (W, b) layers (a pytree), batch 64, "
           "softmax xent by index; grads of the list",
           _s(mlp_layers_loop, mlp_layers_range), mlp_layers_hand, (0,), _mlp_layers),
)

BY_NAME = {kernel.name: kernel for kernel in KERNELS}

# Spellings that call other numpy functions than their kernel's first spelling, by design (a
# person's choice of primitive, not of syntax): the structural test (tests/differentiate/test_spellings.py)
# does not compare their generated calls with the first spelling's; the suite times them all.
DISTINCT = {
    "heat_concat": "np.concatenate instead of a slice write",
    "heat_laplacian": "a Laplacian buffer: one slice read per step fewer than heat_slices",
    "gauss_chol_twice": "two triangular systems solved instead of one",
    "nbody_loop": "a loop over bodies instead of all pairs at once",
    "logreg_sigmoid": "log and exp of the sigmoid instead of np.logaddexp",
    "logreg_rows": "a loop over the samples, a loss per row summed (batched where the shapes are known)",
    "elementwise_methods": "np.square instead of **2",
    "rosenbrock_named": "np.square instead of **2",
    "logcosh_sum": "np.sum / size instead of np.mean",
    "gauss_slogdet_trace": "np.trace of a solve instead of a sum of products",
    "ridge_norm": "np.linalg.norm instead of a sum of squares",
    "huber_minimum": "np.minimum instead of np.where",
    "layernorm_methods": "ndarray.var instead of a mean of squares",
    "conv1d_convolve": "np.convolve instead of a loop over the taps",
    "conv1d_enumerate": "y starts as 0.0 and no array is made from m = len(x) - len(w) + 1: m may "
                        "be negative there, so the windows x[k:k + m] have no known length",
}

# Spellings autograd is not run on: ``X.dot(W)`` with X a plain array and W autograd's box makes
# numpy build an object array of boxes (gigabytes for the MLP, minutes), instead of failing.
AUTOGRAD_SKIP = {
    "mlp_methods": "not run: X.dot(W1) with W1 traced builds an object array in autograd",
    "rnn_method": "not run: xs[t].dot(Wx) with Wx traced builds an object array in autograd",
}


def spelling(kernel_name: str, spelling_name: str) -> Callable:
    """The primal of one spelling of one kernel."""
    return dict(BY_NAME[kernel_name].spellings)[spelling_name]


def make_args(kernel: Kernel, seed: int = 0, steps: Optional[int] = None) -> tuple:
    """Fresh inputs for ``kernel`` from ``seed``."""
    return kernel.make(np.random.default_rng(seed), steps)
