"""Second derivatives: the custom_gradient contract's three examples, then a Newton method.

1. log1pexp with a stated gradient: its grad_fn is differentiated like any code, including through
   the forward value it captured (e = exp(x)), so d2/dx2 at 0 is 0.25 (TensorFlow's number).
2. cube(x) ** 2 with a custom cube: d2/dx2 at 2 is 480.
3. The fused pattern: a custom_gradient inside the grad_fn states the second derivative; here it
   says 6x + 1000 (not the true 6x) and that is what grad(grad(f)) uses: 1012 at x = 2.
Then a Newton method on a smooth loss with @s2sgrad.differentiable(order=2): .hessian and .grad
come from generated code (generated/second_order_grad.py has its <f>_grad_jvp for review).

Run from the repository root:  python examples/second_order.py
"""

import numpy as np

import s2sgrad


@s2sgrad.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad


@s2sgrad.custom_gradient
def cube(x):
    def grad(dy):
        return dy * 3 * x ** 2
    return x ** 3, grad


def cube_squared(x):
    return cube(x) ** 2


def fused_op(x):
    """x**3 and its derivative, computed together."""
    return x ** 3, 3 * x ** 2


def second_order_for_x(x, ddy):
    """The user's second derivative of x**3 (deliberately not 6x, to show it is the one used)."""
    return ddy * (6 * x + 1000)


@s2sgrad.custom_gradient
def op_with_fused_backprop(x):
    y, x_grad = fused_op(x)

    def first_order_gradient(dy):
        @s2sgrad.custom_gradient
        def first_order_custom(unused_x):
            def second_order_and_transpose(ddy):
                return second_order_for_x(x, ddy)
            return x_grad, second_order_and_transpose
        return dy * first_order_custom(x)
    return y, first_order_gradient


def fused(x):
    return op_with_fused_backprop(x)


A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.5]])
B = np.array([1.0, -2.0, 0.5])


@s2sgrad.differentiable(order=2)
def smooth_loss(x):
    """A strictly convex loss: a quadratic plus a softplus barrier."""
    return 0.5 * x @ (A @ x) - B @ x + np.sum(np.log1p(np.exp(x)))


def newton(x, steps=6):
    for _ in range(steps):
        x = x - np.linalg.solve(smooth_loss.hessian(x), smooth_loss.grad(x))
    return x


if __name__ == "__main__":
    d2 = s2sgrad.grad(s2sgrad.grad(log1pexp))
    print(f"log1pexp''(0)      = {d2(0.0):.6f}   (TensorFlow: 0.25)")
    print(f"(cube**2)''(2)     = {s2sgrad.grad(s2sgrad.grad(cube_squared))(2.0):.6f}   (480)")
    print(f"fused''(2)         = {s2sgrad.grad(s2sgrad.grad(fused))(2.0):.6f}   (the stated 6x + 1000)")
    print(f"(cube**2)'''(2)    = {s2sgrad.grad(s2sgrad.grad(s2sgrad.grad(cube_squared)))(2.0):.6f}"
          "   ((x**6)''' = 120 x**3 = 960)")
    x = newton(np.zeros(3))
    print("Newton minimizer  :", np.round(x, 8), " |gradient| =", f"{np.linalg.norm(smooth_loss.grad(x)):.1e}")
