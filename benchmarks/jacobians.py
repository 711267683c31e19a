"""Jacobian benchmark: s2sgrad's jacfwd and jacrev of vector-valued functions against a
hand-written closed-form Jacobian and autograd's, measured side by side in paired rounds (run on
demand, not in the test suite).

    python benchmarks/jacobians.py            # full run
    python benchmarks/jacobians.py --quick    # smoke run: checks, not figures

Cases (float64):
- ``layer``: ``tanh(A @ x) * sin(x[:m])`` (A: 40 x 50), the Jacobian 40 x 50;
- ``pairs``: ``sum(tanh(x[:, None] * w[None, :]), axis=1)`` with respect to x (n = 64, w: 16),
  the Jacobian 64 x 64 (diagonal: an elementwise map over rows);
- ``hessian as jacfwd(grad)``: JAX's spelling of a Hessian, ``jacfwd(grad(f))`` of
  ``sum(tanh(A @ x) ** 2)``, against the closed form and ``s2sgrad.hessian``.
Variants: ``hand`` (the closed form), ``jacfwd`` / ``jacrev`` (built once, then called),
``autograd`` (``autograd.jacobian``). Every variant is checked against ``hand`` first. Reported:
the median time per variant and the median of the per-round ratios to ``hand``.
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
from run import calibrate  # noqa: E402  (benchmarks/run.py: the inner repeat count)

RNG = np.random.default_rng(0)
A = RNG.normal(size=(40, 50)) / 7.0
W = RNG.normal(size=16)


def layer(x):
    return np.tanh(A @ x) * np.sin(x[:40])


def layer_ag(x):
    return anp.tanh(anp.dot(A, x)) * anp.sin(x[:40])


def layer_hand(x):
    t = np.tanh(A @ x)
    s = np.sin(x[:40])
    jac = ((1.0 - t * t) * s)[:, None] * A
    jac[:, :40] += np.diag(t * np.cos(x[:40]))
    return jac


def pairs(x):
    return np.sum(np.tanh(x[:, None] * W[None, :]), axis=1)


def pairs_ag(x):
    return anp.sum(anp.tanh(x[:, None] * W[None, :]), axis=1)


def pairs_hand(x):
    t = np.tanh(x[:, None] * W[None, :])
    return np.diag(np.sum((1.0 - t * t) * W[None, :], axis=1))


def loss(x):
    return np.sum(np.tanh(A @ x) ** 2)


def loss_ag(x):
    return anp.sum(anp.tanh(anp.dot(A, x)) ** 2)


def loss_hessian_hand(x):
    t = np.tanh(A @ x)
    d = 1.0 - t * t
    curvature = 2.0 * (d * d - 2.0 * t * t * d)
    return (A.T * curvature) @ A


def _cases(x50, x64):
    return [
        ("layer (40 x 50)", x50, {"hand": layer_hand, "jacfwd": s2sgrad.jacfwd(layer),
                                  "jacrev": s2sgrad.jacrev(layer),
                                  "autograd": autograd.jacobian(layer_ag)}),
        ("pairs (64 x 64)", x64, {"hand": pairs_hand, "jacfwd": s2sgrad.jacfwd(pairs),
                                  "jacrev": s2sgrad.jacrev(pairs),
                                  "autograd": autograd.jacobian(pairs_ag)}),
        ("jacfwd(grad) Hessian (50 x 50)", x50, {
            "hand": loss_hessian_hand, "jacfwd": s2sgrad.jacfwd(s2sgrad.grad(loss)),
            "jacrev": s2sgrad.jacrev(s2sgrad.grad(loss)), "hessian": s2sgrad.hessian(loss),
            "autograd": autograd.jacobian(autograd.grad(loss_ag))}),
    ]


def _time(fn, x, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn(x)
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--target-ms", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    x50, x64 = RNG.normal(size=50), RNG.normal(size=64)
    print(f"{'case':32s} {'variant':9s} {'median':>10s} {'/ hand':>8s}")
    for name, x, variants in _cases(x50, x64):
        want = variants["hand"](x)
        for label, fn in variants.items():
            np.testing.assert_allclose(fn(x), want, rtol=1e-9, atol=1e-12, err_msg=f"{name}: {label}")
        repeats = {label: calibrate(fn, x, args.target_ms / 1e3) for label, fn in variants.items()}
        times: dict = {label: [] for label in variants}
        for _ in range(rounds):
            for label, fn in variants.items():  # paired: every variant in each round
                times[label].append(_time(fn, x, repeats[label]))
        for label in variants:
            ratio = statistics.median(t / h for t, h in zip(times[label], times["hand"]))
            print(f"{name:32s} {label:9s} {statistics.median(times[label]) * 1e6:8.1f}us "
                  f"{ratio:7.2f}x")


if __name__ == "__main__":
    main()
