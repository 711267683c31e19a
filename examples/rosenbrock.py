"""The n-dimensional Rosenbrock function minimized by gradient descent with momentum.

f(x) = sum(100 (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2), minimum 0 at x = (1, ..., 1): a narrow
curved valley that plain gradient descent crawls along.

Run from the repository root:  python examples/rosenbrock.py
The gradient code is generated/rosenbrock_grad.py (`s2sgrad emit examples -o generated`).
"""

import numpy as np

import s2sgrad


@s2sgrad.differentiable
def rosenbrock(x):
    """Rosenbrock's valley in len(x) dimensions, written with slices."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


if __name__ == "__main__":
    x = np.array([-1.2, 1.0, -0.5, 0.8, 1.5])
    velocity = np.zeros_like(x)
    lr, momentum = 2e-4, 0.95
    first = rosenbrock(x)
    for step in range(8001):
        value, g = rosenbrock.value_and_grad(x)
        velocity = momentum * velocity - lr * g
        x = x + velocity
        if step % 1000 == 0:
            print(f"step {step:5d}  f {value:.6g}  x {np.round(x, 4)}")
    assert rosenbrock(x) < 1e-6 * first, "gradient descent did not reach the valley floor"
    print("minimum found at", np.round(x, 4), "(expected all ones)")
