"""Functions with registered gradients, for tests/rules/test_register_gradient.py."""

import numpy as np
import scipy.special

import s2sgrad


@s2sgrad.register_gradient("scipy.special.erfcx")
def erfcx_grad(g, ans, x):
    return g * (2.0 * x * ans - 2.0 / np.sqrt(np.pi))


def opaque(a, b):
    return np.sort(a) * b


@s2sgrad.register_gradient("registered_inputs.opaque")
def opaque_grad(g, ans, a, b):
    order = np.argsort(a)
    ga = np.zeros_like(a)
    ga[order] = g * b
    return ga, np.sum(g * np.sort(a))


def uses_erfcx(x, y):
    return np.sum(scipy.special.erfcx(x) * y)


def uses_opaque(x, y):
    return np.sum(opaque(x, y[0]) ** 2)
