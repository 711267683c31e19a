"""Functions calling methods of the user's own classes (tests/lower/test_user_classes.py): objects that
are globals, built in the function (scalar replacement), differentiated dataclass arguments."""

from dataclasses import dataclass

import numpy as np

import s2sgrad
from class_inputs_other import Elsewhere

W0 = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.25]])
B0 = np.array([0.1, -0.2])
Y = np.array([0.2, -0.1])


class LinearModel:
    """y = scale * tanh(x W + b)."""

    def __init__(self, W, b, scale=1.0):
        self.W = W
        self.b = b
        self.scale = scale

    def predict(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale

    @property
    def penalty(self):
        return np.sum(self.b ** 2) + 0.1 * np.sum(self.W ** 2)

    def loss(self, x, y):
        residual = self.predict(x) - y
        return np.sum(residual * residual) + self.penalty


class Shifted(LinearModel):
    """A subclass: its own penalty, the rest inherited."""

    @property
    def penalty(self):
        return 0.5 * np.sum(np.sin(self.W))


MODEL = LinearModel(W0, B0)
SHIFTED = Shifted(W0 * 0.5, B0, scale=2.0)


def global_object(x):
    return MODEL.loss(x, Y)


def global_subclass_object(x):
    return SHIFTED.loss(x, Y) + SHIFTED.penalty * np.sum(x)


def built_object(W, x):
    model = LinearModel(W, np.zeros(2), scale=2.0)
    return model.loss(x, Y) + np.sum(model.W * model.scale)


def built_in_a_loop(W, x):
    h = x
    total = 0.0
    for k in range(3):
        layer = LinearModel(W[:, :2] * (k + 1.0), h[:2] * 0.1)
        total = total + np.sum(layer.predict(h))
        h = np.concatenate([layer.predict(h), h[:1]])
    return total


class Scaled:
    FACTOR = 1.5  # a class attribute: read from the class

    def __init__(self, W):
        self.W = W

    def apply(self, x):
        return np.sin(x @ self.W) * self.FACTOR


def built_with_a_class_constant(W, x):
    layer = Scaled(W)
    return np.sum(layer.apply(x) ** 2) + layer.FACTOR * np.sum(W)


@dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(x @ self.W + self.b)

    @property
    def norm(self):
        return np.sum(self.W ** 2)


def dataclass_argument(model, x):
    return np.sum(model.apply(x) ** 2) + 0.1 * model.norm


def built_dataclass(W, x):
    layer = Dense(W, np.ones(2) * 0.1)
    return np.sum(layer.apply(x) ** 2) + layer.norm


@s2sgrad.differentiable(order=2)
def decorated(W, x):
    model = LinearModel(W, B0)
    return model.loss(x, Y)


ELSEWHERE = Elsewhere()


def method_of_a_class_of_another_file(x):
    return np.sum(ELSEWHERE.scale(x))  # elsewhere


def passes_the_object_on(W, x):
    model = LinearModel(W, B0)
    return np.sum(helper(model, x))  # passed-on


def helper(model, x):
    return x @ model.W


class Counter:
    def __init__(self, W):
        self.W = W
        self.calls = 0

    def predict(self, x):
        self.calls += 1  # changes-self
        return x @ self.W


def method_changing_its_object(W, x):
    counter = Counter(W)
    return np.sum(counter.predict(x))


def non_differentiated_argument(model, x):
    return np.sum(model.predict(x))  # constant-argument


def uses_the_built_object_whole(W, x):
    model = LinearModel(W, B0)
    return np.sum(x @ model.W) + np.sum(helper(model, x))  # whole


def reads_an_attribute_not_stored(W, x):
    model = LinearModel(W, B0)
    return np.sum(x @ model.W) * model.bias  # not-stored
