"""Small programs as a new user writes them (issue 26's trial): comprehensions, small lambdas,
closures over the weights, early returns in loops, min/max/abs/sum, *args, methods of the user's
own classes (an argument's, a global's, one built inside), and statements with no derivative.
tests/lower/test_new_user_python.py differentiates each through s2sgrad.grad, the decorator and the
command line, at first and second order, against autograd (this file read again with
autograd.numpy as ``np``)."""

import warnings

import numpy as np

import s2sgrad


class LinearModel:
    """A user's model: its arrays as attributes, a method and a property."""

    def __init__(self, W, b):
        self.W = W
        self.b = b

    def predict(self, x):
        return np.tanh(x @ self.W + self.b)

    @property
    def penalty(self):
        return np.sum(self.W ** 2)


MODEL = LinearModel(np.linspace(-0.5, 0.5, 6).reshape(3, 2), np.array([0.1, -0.2]))


@s2sgrad.differentiable(wrt="w", order=2)
def poly_fit(w, x, y):
    """Polynomial features by a comprehension, a residual by a generator expression."""
    features = np.stack([x ** p for p in range(len(w))], axis=1)
    residual = features @ w - y
    return sum(r * r for r in residual) / len(y)


@s2sgrad.differentiable(wrt=("W1", "W2"), order=2)
def softplus_mlp(W1, W2, x):
    """A small lambda and a nested ``def`` closing over the weights, called twice."""
    act = lambda z: np.log1p(np.exp(z))  # noqa: E731

    def predict(inp):
        return act(inp @ W1) @ W2

    return np.sum(predict(x) ** 2) + 0.1 * np.sum(predict(x[:1]))


@s2sgrad.differentiable(wrt="x", order=2)
def first_crossing(x, level):
    """A search that returns early from its loop."""
    total = 0.0
    for i in range(len(x)):
        total = total + np.sin(x[i]) ** 2
        if x[i] > level:
            return total * x[i]
    return total


@s2sgrad.differentiable(wrt="r", order=2)
def robust_loss(r):
    """Python's min, max, abs and sum on the entries of an array."""
    clipped = sum(min(abs(v), 1.0) ** 2 for v in r)
    worst = max(r[0] * r[1], r[2], 0.1)
    return clipped + worst * worst


@s2sgrad.differentiable(wrt="xs", order=2)
def weighted_norms(*xs):
    """*args of arrays, each weighted by its position."""
    return sum((i + 1.0) * np.sum(x ** 2) * np.sum(np.cos(x)) for i, x in enumerate(xs))


@s2sgrad.differentiable(wrt="x", order=2)
def model_argument(model: LinearModel, x):
    """A method of an argument's object (its arrays constants)."""
    return np.sum(model.predict(x) ** 2) + 0.01 * model.penalty


@s2sgrad.differentiable(wrt="x", order=2)
def global_model(x):
    """A method and a property of a module-level object."""
    return np.sum(MODEL.predict(x) ** 3) + MODEL.penalty * np.sum(x ** 2)


@s2sgrad.differentiable(wrt=("W", "b"), order=2)
def built_model(W, b, x):
    """An object built inside the function from the differentiated arrays."""
    model = LinearModel(W, b)
    return np.sum(model.predict(x) ** 2) + 0.1 * model.penalty


@s2sgrad.differentiable(wrt="x", order=2)
def careful_log(x):
    """assert, print with an f-string, np.errstate and warnings.warn: no derivative, kept."""
    assert x.ndim == 1, "a vector"
    with np.errstate(divide="ignore"):
        logs = np.log(x * x + 1.0)
    if np.sum(logs) > 100.0:
        warnings.warn("large logs")
    total = np.sum(logs * np.sin(x))
    print(f"careful_log: {len(x)} values, total {total}")
    return total


@s2sgrad.differentiable(wrt="params", order=2)
def layered(params, x):
    """A dict comprehension over the parameters, a local factory of activations and a list
    comprehension over the layers."""
    scaled = {name: 0.5 * value for name, value in params.items()}

    def make_act(alpha):
        return lambda z: np.tanh(alpha * z)

    act = make_act(1.5)
    h = act(x @ scaled["w1"])
    outs = [np.sum(act(h * c)) for c in (1.0, 2.0)]
    return outs[0] * outs[1] + np.sum(h @ scaled["w2"])
