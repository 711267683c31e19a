"""Jacobian blocks, as the generated Jacobian functions build them (write/entries.py): the unit
tangents of an input (``basis``), a block from one column per input element (``columns_block``)
or one row per output element (``rows_block``), with their transposes (``block_columns``,
``block_rows``), and the layout JAX gives (``outputs_outermost``). A Hessian's generated function
takes an input's unit tangents a chunk at a time (``unit_chunks``: stacked rows for the batched
tangent part) and joins the products of its chunks into a block (``chunks_block``, whose transpose
is ``block_chunks``); a reverse-mode Jacobian joins the gradients of chunks of unit cotangents
(``row_chunks_block``, whose transpose is ``block_row_chunks``). An output may be a pytree
(a dict, a tuple the code does not show): a block is then a tree of the output's structure, one
block per leaf; ``output_shapes`` says what ``rows_block`` needs of such an output. Transforming a
Jacobian function again takes array outputs only (the transposes refuse trees).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import GradientError
from ..trees import TreeDef, is_leaf_value, tree_flatten, tree_unflatten
from .batching import unit_rows
from .broadcasting import _to_numpy
from .containers import Parts

__all__ = ["basis", "block_chunks", "block_columns", "block_row_chunks", "block_rows", "chunks_block",
           "columns_block", "inputs_outermost", "output_shapes", "outputs_outermost",
           "row_chunks_block", "rows_block", "tree_output", "unit_chunks"]


class _Basis(Sequence):
    """The unit tangents of a value (a pytree: one leaf's element at a time, the other leaves
    zero), made as they are read: a Python float for a Python float leaf."""

    def __init__(self, value) -> None:
        self.leaves, self.treedef = tree_flatten(value)
        self.points = [np.asarray(_to_numpy(v, "Jacobian (jacfwd, jacrev)"), dtype=np.result_type(v, np.float64))
                       for v in self.leaves]
        self.offsets = np.cumsum([0] + [p.size for p in self.points])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self[i] for i in range(*k.indices(len(self))))
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        j = int(np.searchsorted(self.offsets, k, side="right")) - 1
        point = self.points[j]
        return self._unit(j, np.eye(1, point.size, k - self.offsets[j], point.dtype)[0])

    def __iter__(self):
        """The units in order, made ``_AT_ONCE`` rows of an identity at a time (each unit a row of
        its own: a tangent output may be the unit itself)."""
        for j, point in enumerate(self.points):
            for start in range(0, point.size, _AT_ONCE):
                yield from (self._unit(j, row) for row in
                            np.eye(min(_AT_ONCE, point.size - start), point.size, start, point.dtype))

    def _unit(self, j: int, row):
        """The unit whose leaf ``j`` is ``row`` (flat), the other leaves zero."""
        unit = float(row[0]) if type(self.leaves[j]) is float else row.reshape(self.points[j].shape)
        if self.treedef.is_leaf():
            return unit
        return tree_unflatten(self.treedef, [
            unit if i == j else (0.0 if type(leaf) is float else np.zeros_like(point))
            for i, (leaf, point) in enumerate(zip(self.leaves, self.points))])


_AT_ONCE = 256  # unit tangents made together: memory grows with them


def basis(x):
    """The unit tangents of ``x``: one per element, shaped like ``x``, 1 at that element (of
    each leaf in turn for a pytree), made as they are read."""
    return _Basis(x)


def unit_chunks(x):
    """The unit tangents of array or number ``x`` (one per element) stacked on a leading axis,
    ``_AT_ONCE`` at a time: a list of ``unit_rows``, which batched products know as units."""
    dtype = np.result_type(x, np.float64)
    shape, size = np.shape(x), int(np.size(x))
    return [unit_rows(start, min(size, start + _AT_ONCE), shape, dtype)
            for start in range(0, size, _AT_ONCE)]


def chunks_block(chunks, x):
    """A Jacobian or Hessian block from the products of the unit tangents of input ``x``, chunk
    by chunk (each stacked on a leading axis, shaped ``(rows,) + output shape``): shaped ``output
    shape + x's shape``; a float for a float ``x`` of a scalar output; for a pytree output, a
    tree of such blocks."""
    if not chunks:
        raise GradientError("a Jacobian or Hessian with respect to an input with no elements")
    if not is_leaf_value(chunks[0]):  # a tuple (a pytree) output: a block per leaf
        flat = [tree_flatten(c)[0] for c in chunks]
        treedef = tree_flatten(chunks[0])[1]
        return tree_unflatten(treedef, [chunks_block([c[i] for c in flat], x)
                                        for i in range(treedef.num_leaves)])
    full = _joined_chunks(chunks, "Hessian (hessian)")
    out_shape, size = full.shape[1:], full.shape[0]
    block = np.moveaxis(full.reshape((size, -1)), 0, -1).reshape(out_shape + np.shape(x))
    return _float_for_float(block, x)


def block_chunks(value, chunks, x):
    """The adjoint of ``chunks_block(chunks, x)``: ``value`` split into the chunks' rows."""
    out_shape = np.shape(chunks[0])[1:]
    size = int(np.size(x))
    rows = np.moveaxis(np.reshape(value, (-1, size)), -1, 0).reshape((size,) + out_shape)
    return _split_as(rows, chunks)


def _joined_chunks(chunks, what):
    """Chunks stacked on a leading axis, joined into one numpy array (``what`` names the
    result where one is another library's array)."""
    return _to_numpy(chunks[0] if len(chunks) == 1 else np.concatenate(chunks), what)


def _split_as(rows, chunks):
    """``rows`` split into parts as long as the chunks (their leading axes): a joining's adjoint."""
    starts = np.cumsum([0] + [np.shape(c)[0] for c in chunks])
    return Parts(rows[a:b] for a, b in zip(starts[:-1], starts[1:]))


def _float_for_float(block, x):
    """``block`` as a Python float where it is one number of a float ``x``'s Jacobian."""
    return float(block) if block.ndim == 0 and type(x) is float else block


def tree_output(value):
    """Whether a function's value is a pytree (a tuple, a dict, ...), not one array or number."""
    return not is_leaf_value(value)


def row_chunks_block(chunks, output_shape, x):
    """A Jacobian block from the gradients of chunks of unit cotangents (each stacked on a
    leading axis, shaped ``(rows,) + x's shape``: a reverse-mode Jacobian's rows, a chunk at a
    time): shaped ``output_shape + x's shape``; a float for a float ``x`` of a scalar output."""
    if not chunks:
        raise GradientError("a Jacobian by reverse mode of an output with no elements: use "
                            "s2sgrad.jacfwd")
    block = _joined_chunks(chunks, "Jacobian (jacrev)").reshape(tuple(output_shape) + np.shape(x))
    return _float_for_float(block, x)


def block_row_chunks(value, chunks, output_shape):
    """The adjoint of ``row_chunks_block(chunks, output_shape, x)``: ``value`` split into the
    chunks' rows."""
    return _split_as(np.reshape(value, (-1,) + np.shape(chunks[0])[1:]), chunks)


def _joined(parts, shape, stack_axis, scalars):
    """Arrays ``parts`` stacked on ``stack_axis`` and reshaped to ``shape``: a float for a
    float of ``scalars``."""
    block = np.stack([_to_numpy(p, "Jacobian (jacfwd, jacrev)") for p in parts],
                     axis=stack_axis).reshape(shape)
    if block.ndim == 0 and all(type(p) is float for p in scalars):
        return float(block)
    return block


def columns_block(columns, input_shape):
    """A Jacobian block from one column per input element (each shaped like the output):
    shaped ``output shape + input_shape``; for a pytree output, a tree of such blocks."""
    if not columns:
        raise GradientError("a Jacobian with respect to an input with no elements")
    if not is_leaf_value(columns[0]):
        flat = [tree_flatten(c)[0] for c in columns]
        treedef = tree_flatten(columns[0])[1]
        return tree_unflatten(treedef, [columns_block([c[i] for c in flat], input_shape)
                                        for i in range(treedef.num_leaves)])
    shape = np.shape(columns[0]) + tuple(input_shape)
    return _joined(columns, shape, -1, columns)


def _array_output(value, what: str) -> None:
    if not is_leaf_value(value):
        raise GradientError(f"transforming a Jacobian function again needs a function with one "
                            f"array output (this one's {what} is a {type(value).__name__}): "
                            "differentiate a function that returns one of its items")


def block_columns(value, columns, input_shape):
    """The adjoint of ``columns_block(columns, input_shape)``: one column per input element."""
    _array_output(columns[0], "output")
    out_shape = np.shape(columns[0])
    flat = np.reshape(value, out_shape + (len(columns),))
    return Parts(flat[..., k] for k in range(len(columns)))


class _OutputShapes:
    """What ``rows_block`` needs of a pytree output: its structure and each leaf's shape."""

    def __init__(self, treedef: TreeDef, shapes: tuple) -> None:
        self.treedef, self.shapes = treedef, shapes


def output_shapes(value):
    """``np.shape(value)`` for an array or number; an _OutputShapes for a pytree."""
    if is_leaf_value(value):
        return np.shape(value)
    leaves, treedef = tree_flatten(value)
    return _OutputShapes(treedef, tuple(np.shape(v) for v in leaves))


def rows_block(rows, output_shape):
    """A Jacobian block from one row per output element (each shaped like the input): shaped
    ``output_shape + input shape``; for an output of _OutputShapes, a tree of such blocks."""
    if isinstance(output_shape, _OutputShapes):
        blocks, start = [], 0
        for shape in output_shape.shapes:
            size = int(np.prod(shape, dtype=int))
            blocks.append(rows_block(rows[start:start + size], shape))
            start += size
        return tree_unflatten(output_shape.treedef, blocks)
    if not rows:  # the rows say the input's shape: with none, the block's shape is not known
        raise GradientError("a Jacobian by reverse mode of an output with no elements: use "
                            "s2sgrad.jacfwd")
    return _joined(rows, tuple(output_shape) + np.shape(rows[0]), 0, rows)


def block_rows(value, rows, output_shape):
    """The adjoint of ``rows_block(rows, output_shape)``: one row per output element."""
    if isinstance(output_shape, _OutputShapes):
        _array_output(tree_unflatten(output_shape.treedef, [0.0] * len(output_shape.shapes)),
                      "output")
    flat = np.reshape(value, (len(rows),) + np.shape(rows[0]))
    return Parts(flat[k] for k in range(len(rows)))


def outputs_outermost(per_input):
    """Blocks per input (a tuple, each a tree of the output's structure) -> JAX's layout: the
    output's structure outermost, each of its leaves the tuple of blocks per input (the same
    tuple where the output is one array)."""
    if all(is_leaf_value(b) for b in per_input):
        return tuple(per_input)
    flat = [tree_flatten(b)[0] for b in per_input]
    treedef = tree_flatten(per_input[0])[1]
    return tree_unflatten(treedef, [tuple(f[i] for f in flat) for i in range(treedef.num_leaves)])


def inputs_outermost(value, per_input):
    """The adjoint of ``outputs_outermost(per_input)``: ``value`` as blocks per input."""
    for b in per_input:
        _array_output(b, "output")
    return tuple(value)
