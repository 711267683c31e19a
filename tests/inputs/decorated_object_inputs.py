"""Decorated functions whose first argument is an object of the user's class (not
differentiated): the decorator makes their code at the first call with such an object."""

import numpy as np

import s2sgrad


class Scaled:
    """y = scale * tanh(x W + b)."""

    def __init__(self, W, b, scale=1.0):
        self.W, self.b, self.scale = W, b, scale

    def predict(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale

    @property
    def penalty(self):
        return np.sum(self.b ** 2)


class Doubled(Scaled):
    """A subclass: its own penalty, the rest inherited."""

    @property
    def penalty(self):
        return 2.0 * np.sum(self.W ** 2)


W0 = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.25]])
MODELS = (Scaled(W0, np.array([0.1, -0.2])), Doubled(W0 * 0.5, np.array([0.3, 0.0]), scale=2.0))


@s2sgrad.differentiable(wrt="x")
def model_loss(model, x):
    return np.sum(model.predict(x) ** 2) + model.penalty * np.sum(x)


@s2sgrad.differentiable(wrt="x", order=2)
def model_loss_2(model, x):
    return np.sum(model.predict(x) ** 2) + model.penalty * np.sum(x)
