"""Rules of the helpers of s2sgrad/runtime/shapes.py: adjoints of joining, splitting and
rearranging, each linear in the adjoint and reading the primals only for their shapes. A split_*
helper returns one adjoint per input (a Parts): its transpose joins those adjoints again."""

from ..table import defvjp

RULES = (
    # np.concatenate's adjoint, split into one per input: its transpose concatenates them
    defvjp(
        "s2sgrad.runtime.split_concatenate(value, arrays, axis=0)",
        linear=("value",),
        constant_in=("arrays", "axis"),
        value="np.concatenate(g, axis)",
    ),
    # np.stack's adjoint, one slice per input: its transpose stacks them
    defvjp(
        "s2sgrad.runtime.split_stack(value, arrays, axis=0)",
        linear=("value",),
        constant_in=("arrays", "axis"),
        value="np.stack(g, axis)",
    ),
    # a transpose's adjoint (the inverse permutation): its transpose permutes by axes
    defvjp(
        "s2sgrad.runtime.transpose_vjp(value, axes=None)",
        linear=("value",),
        constant_in=("axes",),
        value="s2s.transpose_by(g, axes)",
    ),
    # a permutation by axes, read as transpose_vjp reads them: its transpose is transpose_vjp
    defvjp(
        "s2sgrad.runtime.transpose_by(value, axes=None)",
        linear=("value",),
        constant_in=("axes",),
        value="s2s.transpose_vjp(g, axes)",
    ),
    # np.tile's adjoint (the tiles summed): its transpose tiles
    defvjp(
        "s2sgrad.runtime.tile_vjp(value, a, reps)",
        linear=("value",),
        constant_in=("a", "reps"),
        value="np.tile(g, reps)",
    ),
    # np.repeat's adjoint (the copies summed): its transpose repeats
    defvjp(
        "s2sgrad.runtime.repeat_vjp(value, a, repeats, axis=None)",
        linear=("value",),
        constant_in=("a", "repeats", "axis"),
        value="np.repeat(g, repeats, axis)",
    ),
    # np.rollaxis's adjoint (the inverse permutation): its transpose rolls the axis again
    defvjp(
        "s2sgrad.runtime.rollaxis_vjp(value, a, axis, start=0)",
        linear=("value",),
        constant_in=("a", "axis", "start"),
        value="np.rollaxis(g, axis, start)",
    ),
    # np.hstack's adjoint, split into one per input: its transpose stacks them again
    defvjp(
        "s2sgrad.runtime.split_hstack(value, arrays)",
        linear=("value",),
        constant_in=("arrays",),
        value="np.hstack(g)",
    ),
    # np.vstack's adjoint, split into one per input
    defvjp(
        "s2sgrad.runtime.split_vstack(value, arrays)",
        linear=("value",),
        constant_in=("arrays",),
        value="np.vstack(g)",
    ),
    # np.dstack's adjoint, split into one per input
    defvjp(
        "s2sgrad.runtime.split_dstack(value, arrays)",
        linear=("value",),
        constant_in=("arrays",),
        value="np.dstack(g)",
    ),
    # np.column_stack's adjoint, split into one per input
    defvjp(
        "s2sgrad.runtime.split_column_stack(value, arrays)",
        linear=("value",),
        constant_in=("arrays",),
        value="np.column_stack(g)",
    ),
    # np.r_'s and np.c_'s adjoints (s2s.join_r, join_c), split into one per item: their transposes join
    defvjp("s2sgrad.runtime.split_join_r(value, arrays)", linear=("value",), constant_in=("arrays",),
           value="s2s.join_r(g)"),
    defvjp("s2sgrad.runtime.split_join_c(value, arrays)", linear=("value",), constant_in=("arrays",),
           value="s2s.join_c(g)"),
    # np.append's adjoint, split into [arr's, values']: its transpose appends them
    defvjp(
        "s2sgrad.runtime.split_append(value, arr, values, axis=None)",
        linear=("value",),
        constant_in=("arr", "values", "axis"),
        value="np.append(g[0], g[1], axis)",
    ),
    # np.linspace's adjoints [start's, stop's]: its transpose is linspace of those (linear in both)
    defvjp(
        "s2sgrad.runtime.linspace_vjp(value, start, stop, num=50, endpoint=True, axis=0)",
        linear=("value",),
        constant_in=("start", "stop", "num", "endpoint", "axis"),
        value="np.linspace(g[0], g[1], num, endpoint=endpoint, axis=axis)",
    ),
)
