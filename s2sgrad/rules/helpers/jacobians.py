"""Rules of the helpers of s2sgrad/runtime/jacobians.py: a Jacobian block joined from columns or
rows, a Hessian block joined from chunks of products, and JAX's layout, each linear in what it
joins; their transposes take the parts back out, and join them again. The unit tangents and an
output's shapes are constants."""

from ..table import defvjp

RULES = (
    # a Jacobian block from its columns: its transpose takes the columns back out
    defvjp(
        "s2sgrad.runtime.columns_block(columns, input_shape)",
        linear=("columns",),
        constant_in=("input_shape",),
        columns="s2s.block_columns(g, columns, input_shape)",
    ),
    # columns_block's transpose: the columns of a block, which columns_block joins again
    defvjp(
        "s2sgrad.runtime.block_columns(value, columns, input_shape)",
        linear=("value",),
        constant_in=("columns", "input_shape"),
        value="s2s.columns_block(g, input_shape)",
    ),
    # a Jacobian block from its rows: its transpose takes the rows back out
    defvjp(
        "s2sgrad.runtime.rows_block(rows, output_shape)",
        linear=("rows",),
        constant_in=("output_shape",),
        rows="s2s.block_rows(g, rows, output_shape)",
    ),
    # rows_block's transpose: the rows of a block, which rows_block joins again
    defvjp(
        "s2sgrad.runtime.block_rows(value, rows, output_shape)",
        linear=("value",),
        constant_in=("rows", "output_shape"),
        value="s2s.rows_block(g, output_shape)",
    ),
    # a Hessian block from the products of chunks of unit tangents: its transpose splits it
    defvjp(
        "s2sgrad.runtime.chunks_block(chunks, x)",
        linear=("chunks",),
        constant_in=("x",),
        chunks="s2s.block_chunks(g, chunks, x)",
    ),
    # chunks_block's transpose: the chunks of a block, which chunks_block joins again
    defvjp(
        "s2sgrad.runtime.block_chunks(value, chunks, x)",
        linear=("value",),
        constant_in=("chunks", "x"),
        value="s2s.chunks_block(g, x)",
    ),
    # a reverse-mode Jacobian block from the gradients of chunks of unit cotangents: its
    # transpose splits it
    defvjp(
        "s2sgrad.runtime.row_chunks_block(chunks, output_shape, x)",
        linear=("chunks",),
        constant_in=("output_shape", "x"),
        chunks="s2s.block_row_chunks(g, chunks, output_shape)",
    ),
    # row_chunks_block's transpose: the chunks of a block, which row_chunks_block joins again
    defvjp(
        "s2sgrad.runtime.block_row_chunks(value, chunks, output_shape)",
        linear=("value",),
        constant_in=("chunks", "output_shape"),
        value="s2s.row_chunks_block(g, output_shape, chunks[0][0])",
    ),
    # JAX's layout of blocks per input: the same tuple for array outputs; its transpose too
    defvjp(
        "s2sgrad.runtime.outputs_outermost(per_input)",
        linear=("per_input",),
        per_input="s2s.inputs_outermost(g, per_input)",
    ),
    defvjp(
        "s2sgrad.runtime.inputs_outermost(value, per_input)",
        linear=("value",),
        constant_in=("per_input",),
        value="s2s.outputs_outermost(g)",
    ),
)

# The unit tangents of a Jacobian function (one at a time or in chunks), an output's shapes, and
# whether it is a pytree: constants.
NONDIFF = ("s2sgrad.runtime.basis", "s2sgrad.runtime.unit_chunks", "s2sgrad.runtime.output_shapes",
           "s2sgrad.runtime.tree_output")
