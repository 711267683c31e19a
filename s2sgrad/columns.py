"""Jacobian columns from unit tangents: the points a Jacobian is taken at, the unit tangent
along one element, columns stacked into blocks, and a Hessian from Hessian-vector products (one
per column, or every column at once where the tangent part has a batched form). Used by
jacobians.py and decorator.py; takes arrays and callables, returns arrays."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import runtime
from .trees import is_leaf_value, tree_flatten, tree_unflatten


def points_at(args: tuple, positions: tuple) -> list:
    """The arguments at ``positions`` as float arrays: where a Jacobian is taken."""
    return [np.asarray(args[p], dtype=np.result_type(args[p], np.float64)) for p in positions]


def unit_at(args: tuple, positions: tuple, points: list, j: int, k: int) -> tuple:
    """Tangents (or cotangents) that are zero but for a 1 at element ``k`` of input ``j``; a
    Python float for a Python float argument."""
    unit = [np.zeros_like(p) for p in points]
    unit[j].reshape(-1)[k] = 1.0
    return tuple(float(u) if np.ndim(args[p]) == 0 else u for u, p in zip(unit, positions))


def stacked(columns: list, shape: tuple) -> Any:
    """Columns (one output per input element, each possibly a tuple of outputs) stacked on a last
    axis and reshaped to ``output shape + shape``; a float for a scalar of scalars."""
    if not is_leaf_value(columns[0]):  # a pytree of outputs: each leaf's columns stacked
        flat, structure = tree_flatten(columns[0])
        leaves = [tree_flatten(c)[0] for c in columns]
        return tree_unflatten(structure, [stacked([c[i] for c in leaves], shape)
                                          for i in range(len(flat))])
    out_shape = np.shape(columns[0])
    block = np.stack([np.asarray(c) for c in columns], axis=-1).reshape(out_shape + shape)
    if block.ndim == 0 and all(type(c) is float for c in columns):
        return float(block)
    return block


def hessian_blocks(run: Callable, args: tuple, positions: tuple, single: bool) -> Any:
    """The Hessian at ``args`` from ``run(args, tangents)`` (the Hessian times tangents for the
    arguments at ``positions``, one block each), one run per element (of the tangent part only
    where ``run.prepare`` exists: the primal values once; every column in one run of the
    batched tangent part where that exists): blocks ``[i][j]`` of shape
    ``x_i.shape + x_j.shape``, or the one block (a float for a float) when ``single``."""
    points = points_at(args, positions)
    prepare = getattr(run, "prepare", None)  # values computed once, where the sweep splits
    per_tangent = prepare(args) if prepare is not None else (lambda tangents: run(args, tangents))
    many = getattr(per_tangent, "many", None)
    if many is not None:
        blocks = _batched_blocks(many, points)
    else:
        rows: list = [[] for _ in positions]  # rows[j]: the columns of the blocks [., j]
        for j, point in enumerate(points):
            for k in range(point.size):
                rows[j].append(per_tangent(unit_at(args, positions, points, j, k)))
        blocks = [stacked(columns, points[j].shape) for j, columns in enumerate(rows)]
    out = tuple(tuple(blocks[j][i] for j in range(len(points))) for i in range(len(points)))
    if single:
        h = out[0][0]
        return float(h) if np.ndim(args[positions[0]]) == 0 else h
    return out


COLUMNS_AT_ONCE = 256  # the batched tangent part's rows per run: memory grows with them


def _seeds(points: list, offsets: Any, start: int, stop: int) -> tuple:
    """Per input, its tangents along the unit directions ``start:stop`` of all the inputs'
    elements (``offsets``: where each input's elements begin), stacked on a leading axis."""
    per_input = []
    for j, point in enumerate(points):
        if offsets[j] <= start and stop <= offsets[j + 1]:  # every row a unit tangent of x_j
            rows = start - offsets[j], stop - offsets[j]
            per_input.append(runtime.unit_rows(*rows, point.shape, point.dtype))
            continue
        tangent = np.zeros((stop - start, point.size), dtype=point.dtype)
        ks = np.arange(max(start, offsets[j]), min(stop, offsets[j + 1]))
        tangent[ks - start, ks - offsets[j]] = 1.0
        per_input.append(tangent.reshape((stop - start,) + point.shape))
    return tuple(per_input)


def _batched_blocks(many: Callable, points: list) -> list:
    """``blocks[j][i]`` (shape ``x_i.shape + x_j.shape``) from ``many``, the Hessian times
    tangents stacked on a leading axis: unit tangents, up to COLUMNS_AT_ONCE per run."""
    offsets = [0]
    for point in points:
        offsets.append(offsets[-1] + point.size)
    total = offsets[-1]
    products: list = [[] for _ in points]  # per input i: runs of (rows,) + x_i.shape
    for start in range(0, total, COLUMNS_AT_ONCE):
        stop = min(total, start + COLUMNS_AT_ONCE)
        for i, product in enumerate(many(_seeds(points, offsets, start, stop))):
            products[i].append(np.asarray(product).reshape((stop - start,) + points[i].shape))
    full = [p[0] if len(p) == 1 else np.concatenate(p) for p in products]
    return [tuple(full[i][offsets[j]:offsets[j + 1]].reshape(points[j].size, -1).T.reshape(
        points[i].shape + points[j].shape) for i in range(len(points))) for j in range(len(points))]


__all__ = ["COLUMNS_AT_ONCE", "hessian_blocks", "points_at", "stacked", "unit_at"]
