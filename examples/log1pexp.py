"""The custom_gradient example from TensorFlow's documentation, end to end, then put to work.

log1pexp(x) = log(1 + exp(x)). Differentiated as written, its gradient at x = 100 (float32) or
x = 1000 (float64) is inf / inf = NaN. With the gradient stated by hand, 1 - 1 / (1 + e), it is
exactly 1.0, and s2sgrad puts that formula, as written, into the generated backward sweep.

Run from the repository root:  python examples/log1pexp.py
The reviewed gradient code is generated/log1pexp_grad.py (`s2sgrad emit examples -o generated`).
"""

import numpy as np

import s2sgrad


@s2sgrad.differentiable
def log1pexp_naive(x):
    """log(1 + exp(x)) as written: its derivative overflows to NaN for large x."""
    return np.log(1 + np.exp(x))


@s2sgrad.differentiable
@s2sgrad.custom_gradient
def log1pexp(x):
    """log(1 + exp(x)) with a numerically stable, hand-written gradient."""
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return np.log(1 + e), grad


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
    with np.errstate(over="ignore", invalid="ignore"):
        for x in (np.float32(100.0), 1000.0):
            naive = log1pexp_naive.grad(x)
            stable = log1pexp.grad(x)
            print(f"x = {x!r:>18}: naive gradient {naive}, custom gradient {stable}")
            assert np.isnan(naive) and stable == 1.0
    print()
    print(log1pexp.source)

    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    w, b = np.zeros(2), 0.0
    first = logistic_loss(w, b, x, y)
    for step in range(201):
        loss, (dw, db) = logistic_loss.value_and_grad(w, b, x, y)
        if step % 50 == 0:
            accuracy = np.mean(np.sign(x @ w + b) == y)
            print(f"step {step:3d}  loss {loss:.4f}  accuracy {accuracy:.2f}")
        w, b = w - 1.0 * dw, b - 1.0 * db
    assert logistic_loss(w, b, x, y) < 0.5 * first, "training did not reduce the loss"
    print("fitted w =", np.round(w, 2), " b =", round(float(b), 2))
