"""Quickstart: the gradient of a small numpy function, and the code s2sgrad wrote for it.

Run from the repository root:  python examples/quickstart.py
"""

import numpy as np

import s2sgrad


def loss(w, x, y):
    """Mean squared error of a one-layer tanh model."""
    pred = np.tanh(x @ w)
    err = pred - y
    return np.mean(err**2)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 3))
    y = rng.normal(size=8)
    w = rng.normal(size=3)

    loss_grad = s2sgrad.grad(loss)  # d loss / d w
    print("loss:", loss(w, x, y))
    print("gradient:", loss_grad(w, x, y))
    s2sgrad.check_grads(loss, (w, x, y), argnums=(0,))
    print("matches central finite differences\n")
    print(s2sgrad.source(loss_grad))
