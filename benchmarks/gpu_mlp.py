"""GPU benchmark (issue 29; run on demand on a machine with CuPy and a GPU, not in the tests):
the gradient of a 2-layer tanh MLP loss (batch 32768, 1024 -> 2048 -> 1, float64) by s2sgrad's
generated code on CuPy arrays, against a hand-written CuPy gradient and, where JAX with a GPU is
installed, JAX-jit; paired rounds, each variant checked against the hand-written one first.

    python benchmarks/gpu_mlp.py            # full size
    python benchmarks/gpu_mlp.py --quick    # small: checks, not figures

Reported: the median time per variant (device synchronized) and the median of the per-round
ratios to the hand-written gradient. Target (issue 29): s2sgrad within 1.1x of hand-written CuPy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import s2sgrad  # noqa: E402


def mlp(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 - y) ** 2)


def hand(xp, W1, b1, W2, X, y):
    """The gradient in W1, b1, W2, written by hand (xp: cupy)."""
    h = xp.tanh(X @ W1 + b1)
    r = h @ W2 - y
    g_out = 2.0 * r / r.size
    g_W2 = h.T @ g_out
    g_pre = xp.outer(g_out, W2) * (1.0 - h * h)
    return X.T @ g_pre, g_pre.sum(axis=0), g_W2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=20)
    opts = parser.parse_args()
    import cupy as cp

    n, d, k = (1024, 64, 128) if opts.quick else (32768, 1024, 2048)
    rng = np.random.default_rng(0)
    host = (rng.normal(size=(d, k)) / np.sqrt(d), np.zeros(k), rng.normal(size=k) / np.sqrt(k),
            rng.normal(size=(n, d)), rng.normal(size=n))
    args = tuple(cp.asarray(a) for a in host)
    s2s_grad = s2sgrad.grad(mlp, argnums=(0, 1, 2))  # transformed once, outside the rounds
    variants = {"hand": lambda: hand(cp, *args), "s2sgrad": lambda: s2s_grad(*args)}
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jargs = tuple(jnp.asarray(a) for a in host)
        jgrad = jax.jit(jax.grad(lambda W1, b1, W2, X, y: jnp.mean(
            (jnp.tanh(X @ W1 + b1) @ W2 - y) ** 2), argnums=(0, 1, 2)))
        variants["jax-jit"] = lambda: tuple(g.block_until_ready() for g in jgrad(*jargs))
    except ImportError:
        pass
    want = [cp.asnumpy(g) for g in variants["hand"]()]
    for name, run in variants.items():  # checked (and warmed) before anything is timed
        for g, w in zip(run(), want):
            np.testing.assert_allclose(np.asarray(cp.asnumpy(g) if isinstance(g, cp.ndarray) else g),
                                       w, rtol=1e-8, atol=1e-10)
    times: dict = {name: [] for name in variants}
    for _ in range(opts.rounds):
        for name, run in variants.items():
            cp.cuda.Device().synchronize()
            start = time.perf_counter()
            run()
            cp.cuda.Device().synchronize()
            times[name].append(time.perf_counter() - start)
    print(f"MLP gradient, batch {n}, {d} -> {k} -> 1, float64, {opts.rounds} paired rounds")
    for name, ts in times.items():
        ratio = statistics.median(t / h for t, h in zip(ts, times["hand"]))
        print(f"{name:10s} {statistics.median(ts) * 1e3:9.2f} ms   {ratio:5.2f}x hand")


if __name__ == "__main__":
    main()
