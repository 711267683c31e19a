"""Rules of the helpers of s2sgrad/runtime/indexing.py: adjoints of reading elements, each linear
in the adjoint it scatters and reading the primal only for its shape (or its sort order)."""

from ..table import defvjp

RULES = (
    # a permutation along an axis (np.partition's) and its transpose, each the other's adjoint
    defvjp("s2sgrad.runtime.permuted(value, indices, axis=-1)", linear=("value",), constant_in=("indices", "axis"),
           value="s2s.permuted_vjp(g, indices, axis)"),
    defvjp("s2sgrad.runtime.permuted_vjp(value, indices, axis=-1)", linear=("value",),
           constant_in=("indices", "axis"), value="s2s.permuted(g, indices, axis)"),
    # the transpose of select_vjp: each choice's adjoint where its condition picks it
    defvjp("s2sgrad.runtime.select_vjp(value, condlist, choicelist)", linear=("value",),
           constant_in=("condlist", "choicelist"), value="np.select(condlist, g, 0.0)"),
    # x[index]'s adjoint scattered into zeros: its transpose reads G[index] back
    defvjp(
        "s2sgrad.runtime.getitem_vjp(value, x, index)",
        linear=("value",),
        constant_in=("x", "index"),
        batched={"value": "s2s.batch_getitem_vjp(t, x, index)"},
        value="s2s.unbroadcast(g[index], value)",
    ),
    # a backward loop's row adjoints stacked (last visited first): its transpose unstacks them
    defvjp(
        "s2sgrad.runtime.stack_rows(rows, shape)",
        linear=("rows",),
        constant_in=("shape",),
        rows="s2s.unstack_rows(g, rows)",
    ),
    # stack_rows's transpose: the rows of an adjoint, in a backward loop's visiting order
    defvjp(
        "s2sgrad.runtime.unstack_rows(value, rows)",
        linear=("value",),
        constant_in=("rows",),
        value="s2s.stack_rows(g, np.shape(value))",
    ),
    # np.take's adjoint (scatter-add): its transpose takes again
    defvjp(
        "s2sgrad.runtime.take_vjp(value, a, indices, axis=None)",
        linear=("value",),
        constant_in=("a", "indices", "axis"),
        value="s2s.unbroadcast(np.take(g, indices, axis), value)",
    ),
    # np.take_along_axis's adjoint (scatter-add): its transpose takes along the axis again
    defvjp(
        "s2sgrad.runtime.take_along_axis_vjp(value, arr, indices, axis)",
        linear=("value",),
        constant_in=("arr", "indices", "axis"),
        value="s2s.unbroadcast(np.take_along_axis(g, indices, axis), value)",
    ),
    # np.sort's adjoint (g put back in a's order, constant in it): its transpose sorts G by a's order
    defvjp(
        "s2sgrad.runtime.sort_vjp(value, a, axis=-1)",
        linear=("value",),
        constant_in=("a", "axis"),
        value="np.take_along_axis(g, np.argsort(a, axis=axis, kind='stable'), axis)",
    ),
    # np.diag's adjoint (a diagonal taken, or put on one): its transpose is np.diag again
    defvjp(
        "s2sgrad.runtime.diag_vjp(value, v, k=0)",
        linear=("value",),
        constant_in=("v", "k"),
        value="np.diag(g, k)",
    ),
    # np.diagonal's adjoint (g put on the diagonal): its transpose takes the diagonal
    defvjp(
        "s2sgrad.runtime.diagonal_vjp(value, a, offset=0, axis1=0, axis2=1)",
        linear=("value",),
        constant_in=("a", "offset", "axis1", "axis2"),
        value="np.copy(np.diagonal(g, offset, axis1, axis2))",
    ),
    # np.pad's adjoint (the copies of each element summed): its transpose pads again (linear modes)
    defvjp(
        "s2sgrad.runtime.pad_vjp(value, array, pad_width, mode='constant')",
        linear=("value",),
        constant_in=("array", "pad_width", "mode"),
        value="np.pad(g, pad_width, mode=mode)",
    ),
)

NONDIFF = ("s2sgrad.runtime.rows_shape", "s2sgrad.runtime.size", "s2sgrad.runtime.permutation_indices")
