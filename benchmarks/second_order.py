"""Second-order benchmark: s2sgrad's Hessian-vector products and Hessians against hand-written numpy
and autograd, measured side by side in paired rounds (run on demand, not in the test suite).

    python benchmarks/second_order.py            # full run
    python benchmarks/second_order.py --quick    # smoke run: checks, not figures

Cases (n = 100 parameters, float64):
- ``logsumexp``: ``f(x) = logsumexp(A @ x)`` (A: 200 x 100), max-stabilized, written plainly;
  spelled four ways (``A @ x``, ``np.dot(A, x)``, ``x @ A.T``, ``A.dot(x)``, also ``.max()`` and
  ``.sum()`` methods), each timed against the same hand-written code;
- ``mlp``: ``f(w) = sum((tanh(X @ W) @ v - y)**2)``, W the 10 x 10 weights (batch 64), also spelled
  with ``np.dot`` and ``.dot`` and with the weights on the left (``(W.T @ X.T).T``);
- ``mlp hessian``: the full Hessian of the mlp loss (100 x 100) against its closed form;
- ``newton``: one Newton step of an L2-regularized logistic regression (n = 10): the gradient,
  the full Hessian, ``x - solve(H, g)``.
Variants: ``hand`` (a careful numpy Hessian-vector product, or the closed-form Hessian:
``(A.T * p) @ A - outer(A.T @ p, A.T @ p)`` for logsumexp), ``s2sgrad`` (the
decorator's ``f.hvp`` / ``f.hessian`` from ``@differentiable(order=2)``: forward mode over the
generated gradient), ``api`` (``s2sgrad.hessian(f)``), ``autograd`` (``hessian_vector_product``,
``hessian``). Every variant is checked against ``hand`` before anything is timed. Reported: the
median time per variant and the median of the per-round ratios to ``hand``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import autograd
import autograd.numpy as anp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import s2sgrad  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.normal(size=(200, 100)) / 10.0
X64 = RNG.normal(size=(64, 10))
V10 = RNG.normal(size=10)
Y64 = RNG.normal(size=64)
XL = RNG.normal(size=(50, 10))
YL = (RNG.uniform(size=50) > 0.5) * 2.0 - 1.0


def logsumexp_loss(x):
    z = A @ x
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def logsumexp_dot(x):
    z = np.dot(A, x)
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def logsumexp_right(x):
    z = x @ A.T
    m = z.max()
    return m + np.log(np.exp(z - m).sum())


def logsumexp_method(x):
    z = A.dot(x)
    m = z.max()
    return m + np.log(np.sum(np.exp(z - m)))


def logsumexp_hessian_hand(x):
    z = A @ x
    p = np.exp(z - np.max(z))
    p /= np.sum(p)
    ap = A.T @ p
    return (A.T * p) @ A - np.outer(ap, ap)


def logsumexp_hvp_hand(x, v):
    z = A @ x
    p = np.exp(z - np.max(z))
    p /= np.sum(p)
    av = A @ v
    return A.T @ (p * av - p * (p @ av))


def logsumexp_ag(x):
    z = anp.dot(A, x)
    m = anp.max(z)
    return m + anp.log(anp.sum(anp.exp(z - m)))


def mlp_loss(w):
    W = w.reshape(10, 10)
    r = np.tanh(X64 @ W) @ V10 - Y64
    return np.sum(r * r)


def mlp_dot(w):
    W = w.reshape(10, 10)
    r = np.dot(np.tanh(np.dot(X64, W)), V10) - Y64
    return np.sum(r * r)


def mlp_method(w):
    W = w.reshape(10, 10)
    r = np.tanh(X64.dot(W)).dot(V10) - Y64
    return (r * r).sum()


def mlp_left(w):
    W = w.reshape(10, 10)
    r = V10 @ np.tanh(W.T @ X64.T) - Y64
    return np.sum(r**2)


def mlp_hvp_hand(w, v):
    W, D = w.reshape(10, 10), v.reshape(10, 10)
    h = np.tanh(X64 @ W)
    s = 1.0 - h * h
    r = h @ V10 - Y64
    dh = s * (X64 @ D)
    dr = dh @ V10
    back = 2.0 * np.outer(dr, V10) * s - 4.0 * np.outer(r, V10) * h * dh
    return (X64.T @ back).reshape(-1)


def mlp_hessian_hand(w):
    """The closed form: with U[n, (a, b)] = X[n, a] v_b s[n, b] (s = 1 - h*h),
    H[a, b, c, d] = 2 (U.T @ U) - 4 [b == d] sum_n X[n, a] X[n, c] r_n v_b h[n, b] s[n, b]."""
    W = w.reshape(10, 10)
    h = np.tanh(X64 @ W)
    s = 1.0 - h * h
    r = h @ V10 - Y64
    U = (X64[:, :, None] * (V10 * s)[:, None, :]).reshape(64, 100)
    H = 2.0 * (U.T @ U).reshape(10, 10, 10, 10)
    q = r[:, None] * V10 * h * s
    diagonal = (X64.T[None] * q.T[:, None, :]) @ X64  # [b, a, c]
    at = np.arange(10)
    H[:, at, :, at] -= 4.0 * diagonal
    return H.reshape(100, 100)


def mlp_ag(w):
    W = anp.reshape(w, (10, 10))
    r = anp.dot(anp.tanh(anp.dot(X64, W)), V10) - Y64
    return anp.sum(r * r)


def logistic_loss(x):
    margins = YL * (XL @ x)
    return np.sum(np.log1p(np.exp(-margins))) + 0.5 * np.sum(x * x)


def logistic_ag(x):
    margins = YL * anp.dot(XL, x)
    return anp.sum(anp.log1p(anp.exp(-margins))) + 0.5 * anp.sum(x * x)


def newton_hand(x):
    p = 1.0 / (1.0 + np.exp(YL * (XL @ x)))  # sigmoid(-margin)
    g = -XL.T @ (YL * p) + x
    H = (XL.T * (p * (1.0 - p))) @ XL + np.eye(x.size)
    return x - np.linalg.solve(H, g)


LOGSUMEXPS = {"": logsumexp_loss, " dot": logsumexp_dot, " x@A.T": logsumexp_right,
              " .dot": logsumexp_method}
MLPS = {"": mlp_loss, " dot": mlp_dot, " .dot": mlp_method, " left": mlp_left}


def spelled(losses: dict, use) -> dict:
    """``{"s2sgrad<spelling>": use(decorated loss)}`` for each spelling of one kernel."""
    return {f"s2sgrad{k}": use(s2sgrad.differentiable(order=2)(f)) for k, f in losses.items()}


def hvp_of(fun):
    return lambda x, v: fun.hvp(x, tangents=v)


def variants() -> dict:
    """case -> (args, {variant: function}), every variant computing the same thing."""
    logistic = s2sgrad.differentiable(order=2)(logistic_loss)
    api_hessian = s2sgrad.hessian(logistic_loss)
    lse_hvp_ag, mlp_hvp_ag = (autograd.hessian_vector_product(f) for f in (logsumexp_ag, mlp_ag))
    ag_grad, ag_hessian = autograd.grad(logistic_ag), autograd.hessian(logistic_ag)
    x100, v100 = RNG.normal(size=100) / 3.0, RNG.normal(size=100)
    x10 = RNG.normal(size=10) / 3.0
    return {
        "logsumexp hvp": ((x100, v100), {
            "hand": logsumexp_hvp_hand, **spelled(LOGSUMEXPS, hvp_of), "autograd": lse_hvp_ag}),
        "mlp hvp": ((x100, v100), {
            "hand": mlp_hvp_hand, **spelled(MLPS, hvp_of), "autograd": mlp_hvp_ag}),
        "logsumexp hessian": ((x100,), {
            "hand": logsumexp_hessian_hand,
            "hand hvps": lambda x: np.stack([logsumexp_hvp_hand(x, e) for e in np.eye(100)], 1),
            **spelled(LOGSUMEXPS, lambda f: f.hessian),
            "api": s2sgrad.hessian(logsumexp_loss), "autograd": autograd.hessian(logsumexp_ag)}),
        "mlp hessian": ((x100,), {
            "hand": mlp_hessian_hand, **spelled(MLPS, lambda f: f.hessian),
            "api": s2sgrad.hessian(mlp_loss), "autograd": autograd.hessian(mlp_ag)}),
        "newton step": ((x10,), {
            "hand": newton_hand,
            "s2sgrad": lambda x: x - np.linalg.solve(logistic.hessian(x), logistic.grad(x)),
            "api": lambda x: x - np.linalg.solve(api_hessian(x), logistic.grad(x)),
            "autograd": lambda x: x - np.linalg.solve(ag_hessian(x), ag_grad(x))}),
    }


def check(name: str, args: tuple, fns: dict) -> None:
    want = fns["hand"](*args)
    for variant, fn in fns.items():
        np.testing.assert_allclose(fn(*args), want, rtol=1e-8, atol=1e-10,
                                   err_msg=f"{name}: {variant} disagrees with hand")


def repeat_for(fn, args, target: float) -> int:
    n, start = 1, time.perf_counter()
    fn(*args)
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(target / once))


def timed(fn, args, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - start) / n


def run_case(name: str, args: tuple, fns: dict, rounds: int, target: float) -> dict:
    repeats = {v: repeat_for(f, args, target) for v, f in fns.items()}
    order = list(fns)
    samples: dict = {v: [] for v in order}
    for r in range(rounds):
        for v in order[r % len(order):] + order[:r % len(order)]:
            samples[v].append(timed(fns[v], args, repeats[v]))
    out = {}
    for v in order:
        ratios = [s / h for s, h in zip(samples[v], samples["hand"])]
        out[v] = (statistics.median(samples[v]), statistics.median(ratios))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few short rounds: checks, not figures")
    parser.add_argument("--rounds", type=int, default=21)
    opts = parser.parse_args(argv)
    rounds, target = (3, 0.002) if opts.quick else (opts.rounds, 0.02)
    print(f"s2sgrad {s2sgrad.__version__}, numpy {np.__version__}, {rounds} paired rounds")
    print(f"{'case':20s} {'variant':16s} {'median':>11s} {'x hand':>8s}")
    for name, (args, fns) in variants().items():
        check(name, args, fns)
        for variant, (median, ratio) in run_case(name, args, fns, rounds, target).items():
            print(f"{name:20s} {variant:16s} {median * 1e6:9.1f}us {ratio:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
