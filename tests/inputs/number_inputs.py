"""Functions differentiated at Python numbers and at arrays (tests/test_specialize.py)."""

import math

import numpy as np


def kepler(M, e, n):
    E = M
    for _ in range(n):
        E = E - (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
    return E


def pendulum(theta, omega, k, dt, n):
    i = 0
    while i < n:
        omega = omega - dt * (k * math.sin(theta) + 0.1 * omega)
        theta = theta + dt * omega
        i += 1
    return theta * theta + 0.5 * omega * omega


def scaled_sum(a, x):
    """A number times an array: the number's gradient sums the array's."""
    y = a * x + a * a
    return np.sum(np.tanh(y))


def mixed_loop(a, x, n):
    """A number carried through a loop with an array it broadcasts against."""
    acc = a
    for i in range(n):
        acc = acc * 0.5 + np.sum(x * acc) * 0.01
    return acc * acc


def trig(x, y):
    return math.tan(x) * math.cos(y) + math.sin(x * y)


def keyword_scale(x, scale=2.0):
    return np.sum(x * scale) ** 2


def newton_in_place(M, e, n):
    E = M
    for _ in range(n):
        f = E - e * math.sin(E) - M
        fprime = 1.0 - e * math.cos(E)
        E -= f / fprime
    return E
