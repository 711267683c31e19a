"""Logistic regression written with log1pexp(z) = log(1 + exp(z)), fitted by gradient descent.

This is the *naive* formula: np.exp overflows for z above ~709 and log(1 + exp(z)) loses all
precision well before that. A numerically stable version with a hand-written gradient needs
s2sgrad.custom_gradient, which arrives in a later release; here the inputs stay small.

Run from the repository root:  python examples/log1pexp.py
The reviewed gradient code is generated/log1pexp_grad.py (`s2sgrad emit examples -o generated`).
"""

import numpy as np

import s2sgrad


@s2sgrad.differentiable
def log1pexp(x):
    """Softplus, log(1 + exp(x)), elementwise (naive: overflows for large x)."""
    return np.log(1.0 + np.exp(x))


@s2sgrad.differentiable(wrt=("w", "b"))
def logistic_loss(w, b, x, y):
    """Mean negative log-likelihood of labels y in {-1, +1} under p(y | x) = sigmoid(y (x @ w + b))."""
    margins = y * (x @ w + b)
    return np.mean(log1pexp(-margins))


def make_data(rng, n=200):
    x = rng.normal(size=(n, 2))
    true_w = np.array([2.0, -1.0])
    y = np.where(x @ true_w + 0.5 + 0.3 * rng.normal(size=n) > 0.0, 1.0, -1.0)
    return x, y


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    w, b = np.zeros(2), 0.0
    print("d/dx log1pexp at 0, 1, 2:", [round(float(log1pexp.grad(v)), 6) for v in (0.0, 1.0, 2.0)])
    print("the logistic sigmoid at 0, 1, 2:", [round(float(1.0 / (1.0 + np.exp(-v))), 6) for v in (0.0, 1.0, 2.0)])
    first = logistic_loss(w, b, x, y)
    for step in range(201):
        loss, (dw, db) = logistic_loss.value_and_grad(w, b, x, y)
        if step % 40 == 0:
            accuracy = np.mean(np.sign(x @ w + b) == y)
            print(f"step {step:3d}  loss {loss:.4f}  accuracy {accuracy:.2f}")
        w, b = w - 1.0 * dw, b - 1.0 * db
    assert logistic_loss(w, b, x, y) < 0.5 * first, "training did not reduce the loss"
    print("fitted w =", np.round(w, 2), " b =", round(float(b), 2))
