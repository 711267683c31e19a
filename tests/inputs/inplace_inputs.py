"""Index writes in loops (issue 28): the functions tests/differentiate/test_writes_in_place.py
differentiates, written into arrays whose old values are dead (made in place) and into arrays
whose old values are read later, shared or passed in (kept as copies, or refused)."""

import numpy as np


def row_writes(x, n):
    """A row per step into a preallocated array (cumprod-like)."""
    out = np.empty((n, x.shape[0]))
    acc = np.ones(x.shape[0])
    for t in range(n):
        acc = acc * np.sin(x + t)
        out[t] = acc
    return np.sum(out * out)


def slice_updates(x, n):
    """An explicit stencil updated in place through a slice (the heat equation)."""
    u = x.copy()
    for _ in range(n):
        u[1:-1] = u[1:-1] + 0.3 * (u[2:] - 2.0 * u[1:-1] + u[:-2]) * np.cos(u[1:-1])
    return np.sum(u ** 2)


def buffer_writes(x, n):
    """A work buffer written through a slice, read whole afterwards (a Laplacian)."""
    u = x * 1.0
    lap = np.zeros_like(u)
    for _ in range(n):
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + 0.2 * np.tanh(lap)
    return np.sum(u * u)


def element_writes(x, n):
    """Single elements written, each read from its neighbours' new values."""
    u = x.copy()
    for t in range(n):
        for i in range(1, u.shape[0]):
            u[i] = 0.5 * u[i] + 0.5 * np.sin(u[i - 1]) * (t + 1)
    return np.sum(u ** 3)


def nested_rows(x, n):
    """Rows of a 3-d array written in nested loops, one of them read back and written again."""
    out = np.zeros((n, n, x.shape[0]))
    for i in range(n):
        for j in range(n):
            out[i, j] = x * (i + 1) - np.tanh(x * j)
        out[i] = out[i] * np.cos(x)
    return np.sum(out ** 2)


def old_values_read_later(x, n):
    """The product reads the array before each write: its backward needs those old values."""
    u = x.copy()
    total = 0.0
    for _ in range(n):
        total = total + np.sum(u * u)
        u[1:] = u[:-1] * 0.5 + np.sin(u[1:])
    return total + np.sum(u)


def branch_writes(x, n):
    """Writes in both branches of an if in a loop, a while loop around them."""
    u = x * 2.0
    t = 0
    while t < n:
        if t % 2 == 0:
            u[t % u.shape[0]] = np.sin(u[(t + 1) % u.shape[0]]) * u[0]
        else:
            u[:2] = u[:2] * np.cos(u[2:4])
        t = t + 1
    return np.sum(u * u)


def argument_written(x, n):
    """The differentiated argument itself written: the caller's array must not change."""
    for t in range(n):
        x[t % x.shape[0]] = x[(t + 1) % x.shape[0]] ** 2
    return np.sum(x * np.arange(x.shape[0]))


def masked_and_fancy(x, n):
    """Writes through an integer array with a repeat and through a mask."""
    u = x.copy()
    idx = np.array([0, 2, 0])
    for _ in range(n):
        u[idx] = u[idx] * 1.5 + np.sin(u[1:4])
        u[u > 0.5] = 0.9 * u[u > 0.5]
    return np.sum(u ** 2)


def list_item_writes(x, n):
    """A Python list written by index (the helpers fall back to copies for lists)."""
    items = [x[0], x[1], x[2]]
    for t in range(n):
        items[t % 3] = items[(t + 1) % 3] * np.cos(x[3])
    return items[0] + items[1] * items[2]


def alias_then_write(x, n):
    """``v = u`` then a write into ``u``: v sees it (refused, or differentiated as run)."""
    u = x.copy()
    v = u
    for t in range(n):
        u[t % u.shape[0]] = np.sin(x[0]) * t
    return np.sum(v * x)


def view_then_write(x, n):
    """A view taken before the writes and read after them."""
    u = x.copy()
    w = u[1:3]
    for t in range(n):
        u[1] = u[1] * x[0]
    return np.sum(w) + np.sum(u)


def list_holds_then_write(x, n):
    """A list holding the array, read after the writes."""
    u = x.copy()
    held = [u]
    for t in range(n):
        u[0] = u[0] * x[1]
    return np.sum(held[0] * x)


def linear_stencil(x, n):
    """The heat equation as written with slices (benchmarks/kernels.py: heat_slices)."""
    u = x.copy()
    for _ in range(n):
        u[1:-1] = u[1:-1] + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def list_of_views_written(x, n):
    """A list item written with a view of an array that is written afterwards: the list holds
    the view, so the array keeps each version."""
    u = x.copy()
    items = [x[0], x[1]]
    for t in range(n):
        items[0] = u[1:3]
        u[1] = u[2] * x[0]
        items[1] = items[0] * 2.0
    return np.sum(items[0]) + np.sum(items[1]) + np.sum(u)


def concat_stencil(x, n):
    """The heat equation rebuilt by concatenation each step (benchmarks/kernels.py: heat_concat):
    the backward sweep's adjoint of ``u`` is a new array each step, the pieces of the last one
    views read after the index reads' adjoints are added into it."""
    u = x
    for _ in range(n):
        interior = u[1:-1] + 0.25 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = np.concatenate([u[:1], interior, u[-1:]])
    return np.sum(u ** 2)
