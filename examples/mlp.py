"""A two-layer tanh MLP fitted to a noisy sine curve by stochastic gradient descent.

Run from the repository root:  python examples/mlp.py
The gradient code is generated/mlp_grad.py (`s2sgrad emit examples -o generated`); the end of
this script checks that the checked-in file computes the same gradient as the decorator.
"""

import os
import sys

import numpy as np

import s2sgrad


def predict(w1, b1, w2, b2, x):
    """The network: x (n, 1) -> hidden tanh layer -> (n,)."""
    hidden = np.tanh(x @ w1 + b1)
    return hidden @ w2 + b2


@s2sgrad.differentiable(wrt=("w1", "b1", "w2", "b2"))
def loss(w1, b1, w2, b2, x, y):
    """Mean squared error of the network's predictions."""
    err = predict(w1, b1, w2, b2, x) - y
    return np.mean(err**2)


def make_data(rng, n=256):
    x = rng.uniform(-3.0, 3.0, size=(n, 1))
    y = np.sin(x[:, 0]) + 0.05 * rng.normal(size=n)
    return x, y


def init(rng, hidden=16):
    return (rng.normal(size=(1, hidden)), np.zeros(hidden),
            rng.normal(size=hidden) / np.sqrt(hidden), 0.0)


def check_generated(params, x, y):
    """The checked-in generated/mlp_grad.py agrees with the decorator's gradient."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(os.path.dirname(here), "generated"))
    import mlp_grad

    for got, want in zip(mlp_grad.loss_grad(*params, x, y), loss.grad(*params, x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    print("generated/mlp_grad.py gives the same gradient")


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    params = init(rng)
    lr, batch = 0.05, 32
    first = loss(*params, x, y)
    for epoch in range(301):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            grads = loss.grad(*params, x[idx], y[idx])
            params = tuple(p - lr * g for p, g in zip(params, grads))
        if epoch % 50 == 0:
            print(f"epoch {epoch:3d}  loss {loss(*params, x, y):.5f}")
    last = loss(*params, x, y)
    assert last < 0.1 * first, "training did not reduce the loss"
    print(f"loss {first:.4f} -> {last:.5f}")
    check_generated(params, x, y)
