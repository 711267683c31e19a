"""Einsum losses with some operands constant (tests/differentiate/test_each_item.py)."""

import numpy as np


def projected(X, W):
    return np.sum(np.tanh(np.einsum("td,de->te", X, W)) ** 2)


def chain(A, B, C):
    return np.sum(np.sin(np.einsum("ij,jk,kl->il", A, B, C)))
