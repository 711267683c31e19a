"""Shape, indexing and joining rules: the adjoint is the output's adjoint moved back into place."""

from .. import dims
from .table import alias, defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_PAD_MODES = (
    "not linear in every mode (`maximum`, `median`); its tangent"
    " template is not written yet"
)

_RESHAPE_BACK = "np.reshape(g, np.shape(a))"

_RESHAPE = defvjp("numpy.reshape(a, shape=None, order='C')", linear=("a",), result_lengths="shape",
                  batched={"a": "s2s.batch_reshape(t, shape, order)"},
                  a="np.reshape(g, np.shape(a), order=order)",
                  view=True)
_RAVEL = defvjp(
    "numpy.ravel(a, order='C')", methods=("ravel",),
    linear=("a",),
    a="np.reshape(g, np.shape(a), order=order)",
    view=True,
)
_SQUEEZE = defvjp("numpy.squeeze(a, axis=None)", methods=("squeeze",), linear=("a",), a=_RESHAPE_BACK,
                  view=True)
_TRANSPOSE = defvjp(
    "numpy.transpose(a, axes=None)",
    linear=("a",), result_shape=dims.transpose,
    batched={"a": "s2s.batch_transpose(t, axes)"},
    a="s2s.transpose_vjp(g, axes)",
    view=True,
)
_DIAGONAL = defvjp(
    "numpy.diagonal(a, offset=0, axis1=0, axis2=1)", methods=("diagonal",), linear=("a",),
    a="s2s.diagonal_vjp(g, a, offset, axis1=axis1, axis2=axis2)",
    view=True,
)
_REPEAT = defvjp(
    "numpy.repeat(a, repeats, axis=None)", methods=("repeat",),
    linear=("a",),
    a="s2s.repeat_vjp(g, a, repeats, axis)",
)
_SWAPAXES = defvjp(
    "numpy.swapaxes(a, axis1, axis2)", methods=("swapaxes",),
    linear=("a",),
    a="np.swapaxes(g, axis1, axis2)",
    view=True,
)
_TAKE = defvjp("numpy.take(a, indices, axis=None)", methods=("take",), linear=("a",),
               a="s2s.take_vjp(g, a, indices, axis)")
_MATRIX_T = defvjp("numpy.matrix_transpose(x)", linear=("x",), x="np.swapaxes(g, -1, -2)", view=True)

RULES = (
    _RESHAPE,
    _RAVEL,
    _SQUEEZE,
    _TRANSPOSE,
    defvjp("numpy.expand_dims(a, axis)", linear=("a",), a=_RESHAPE_BACK, view=True),
    defvjp("numpy.atleast_1d(a)", linear=("a",), a=_RESHAPE_BACK, view=True),
    defvjp("numpy.atleast_2d(a)", linear=("a",), a=_RESHAPE_BACK, view=True),
    defvjp("numpy.flip(m, axis=None)", linear=("m",), m="np.flip(g, axis)", view=True),
    defvjp("numpy.fliplr(m)", linear=("m",), m="np.fliplr(g)", view=True),
    defvjp("numpy.flipud(m)", linear=("m",), m="np.flipud(g)", view=True),
    _SWAPAXES,
    defvjp(
        "numpy.moveaxis(a, source, destination)",
        linear=("a",),
        a="np.moveaxis(g, destination, source)",
        view=True,
    ),
    defvjp(
        "numpy.concatenate(arrays, axis=0)",
        linear=("arrays",), result_shape=dims.joined,
        arrays="s2s.split_concatenate(g, arrays, axis)",
    ),
    defvjp("numpy.stack(arrays, axis=0)", linear=("arrays",), result_shape=dims.stacked,
           arrays="s2s.split_stack(g, arrays, axis)"),
    # a list of pieces (Rule.outputs): their adjoints (zeros for unread ones) joined again
    defvjp("numpy.split(ary, indices_or_sections, axis=0)", linear=("ary",), outputs=("*parts",), view=True,
           constant_in=("indices_or_sections",), ary="np.concatenate(g, axis)"),
    defvjp("numpy.array_split(ary, indices_or_sections, axis=0)", linear=("ary",),
           outputs=("*parts",), view=True, constant_in=("indices_or_sections",), ary="np.concatenate(g, axis)"),
    defvjp("numpy.hsplit(ary, indices_or_sections)", linear=("ary",), outputs=("*parts",), view=True,
           constant_in=("indices_or_sections",), ary="np.hstack(g)"),
    defvjp("numpy.vsplit(ary, indices_or_sections)", linear=("ary",), outputs=("*parts",), view=True,
           constant_in=("indices_or_sections",), ary="np.vstack(g)"),
    defvjp("numpy.dsplit(ary, indices_or_sections)", linear=("ary",), outputs=("*parts",), view=True,
           constant_in=("indices_or_sections",), ary="np.dstack(g)"),
    defvjp(
        "numpy.broadcast_to(array, shape)",
        linear=("array",),
        array="s2s.unbroadcast(g, array)",
        view=True,
    ),
    defvjp("numpy.asarray(a, dtype=None)", linear=("a",), a="g", view=True,
           batched={"a": "np.asarray(t, dtype)"}),
    defvjp("numpy.array(object, dtype=None)", linear=("object",), object="g",
           batched={"object": "np.array(t, dtype)"}),
    # s2s.getitem_vjp scatters into new zeros: later contributions may be added in place
    defvjp("operator.getitem(a, index)", linear=("a",), a="s2s.getitem_vjp(g, a, index)", view=True,
           fresh_adjoints=True),
    defvjp("ndarray.T(self)", linear=("self",), self="np.transpose(g)", view=True,
           result_shape=dims.transpose,
           batched={"self": "s2s.batch_transpose(t)"}),
    defvjp("ndarray.reshape(self, *shape, order='C')", linear=("self",), result_lengths="shape",
           batched={"self": "s2s.batch_reshape(t, shape, order)"},
           self="np.reshape(g, np.shape(self), order=order)",
           view=True),
    defvjp(
        "ndarray.transpose(self, *axes)",
        linear=("self",),
        batched={"self": "s2s.batch_transpose(t, axes)"},
        self="s2s.transpose_vjp(g, axes)",
        view=True,
    ),
    defvjp(
        "ndarray.flatten(self, order='C')",
        linear=("self",),
        self="np.reshape(g, np.shape(self), order=order)",
    ),
    defvjp("ndarray.copy(self)", linear=("self",), self="g", batched={"self": "np.copy(t)"}),
    defvjp("ndarray.astype(self, dtype)", linear=("self",), self="g",
           batched={"self": "t.astype(dtype)"}),
    defvjp("numpy.astype(x, dtype, copy=True)", linear=("x",), x="g"),
    defvjp("numpy.copy(a)", linear=("a",), a="g", batched={"a": "np.copy(t)"}),
    defvjp("numpy.asanyarray(a, dtype=None)", linear=("a",), a="g", view=True),
    defvjp("numpy.ascontiguousarray(a, dtype=None)", linear=("a",), a="g", view=True),
    defvjp("numpy.atleast_3d(a)", linear=("a",), a=_RESHAPE_BACK, view=True),
    alias("numpy.permute_dims", _TRANSPOSE),
    _MATRIX_T,
    alias("numpy.linalg.matrix_transpose", _MATRIX_T),
    defvjp("ndarray.mT(self)", linear=("self",), self="np.swapaxes(g, -1, -2)", view=True),
    # ----- diagonals and triangles ------------------------------------------------------------
    defvjp("numpy.diag(v, k=0)", linear=("v",), v="s2s.diag_vjp(g, v, k)", result_shape=dims.diagonal_of),
    _DIAGONAL,
    defvjp("numpy.tril(m, k=0)", linear=("m",), m="np.tril(g, k)"),
    defvjp("numpy.triu(m, k=0)", linear=("m",), m="np.triu(g, k)"),
    # ----- moving and copying elements --------------------------------------------------------
    defvjp("numpy.roll(a, shift, axis=None)", linear=("a",), a="np.roll(g, np.negative(shift), axis)"),
    defvjp("numpy.rot90(m, k=1, axes=(0, 1))", linear=("m",), m="np.rot90(g, -k, axes)", view=True),
    defvjp(
        "numpy.rollaxis(a, axis, start=0)",
        linear=("a",),
        a="s2s.rollaxis_vjp(g, a, axis, start=start)",
    ),
    defvjp("numpy.tile(A, reps)", linear=("A",), A="s2s.tile_vjp(g, A, reps)"),
    _REPEAT,
    defvjp(
        "numpy.pad(array, pad_width, mode='constant')",
        reverse_only=_PAD_MODES,
        array="s2s.pad_vjp(g, array, pad_width, mode)",
    ),
    defvjp(
        "numpy.sort(a, axis=-1, kind=None)",
        jvps={"a": "np.take_along_axis(t, np.argsort(a, axis=axis, kind=kind), axis=axis)"},
        a="s2s.sort_vjp(g, a, axis=axis)",
    ),
    # a permutation along axis: the elements' places read off the result (s2s.permutation_indices)
    defvjp(
        "numpy.partition(a, kth, axis=-1, kind='introselect', order=None)", constant_in=("kth", "kind", "order"),
        jvps={"a": "s2s.permuted(t, s2s.permutation_indices(a, ans, axis), axis)"},
        a="np.reshape(s2s.permuted_vjp(g, s2s.permutation_indices(a, ans, axis), axis), np.shape(a))",
    ),
    # the first true condition's choice at each element, else the default: linear in both together
    defvjp(
        "numpy.select(condlist, choicelist, default=0)", joint_jvp="np.select(condlist, choicelist, default)",
        constant_in=("condlist",),
        choicelist="s2s.select_vjp(g, condlist, choicelist)",
        default="s2s.unbroadcast(np.select(condlist, np.zeros((len(condlist),) + np.shape(g)), g), default)",
    ),
    _TAKE,
    defvjp(
        "numpy.take_along_axis(arr, indices, axis)", linear=("arr",),
        arr="s2s.take_along_axis_vjp(g, arr, indices, axis)",
    ),
    # ----- joining ----------------------------------------------------------------------------
    defvjp("numpy.hstack(tup)", linear=("tup",), tup="s2s.split_hstack(g, tup)"),
    defvjp("numpy.vstack(tup)", linear=("tup",), tup="s2s.split_vstack(g, tup)"),
    defvjp("numpy.row_stack(tup)", linear=("tup",), tup="s2s.split_vstack(g, tup)"),
    defvjp("numpy.dstack(tup)", linear=("tup",), tup="s2s.split_dstack(g, tup)"),
    defvjp("numpy.column_stack(tup)", linear=("tup",), tup="s2s.split_column_stack(g, tup)"),
    # np.r_[a, b] and np.c_[a, b] (index tricks: the lowering writes the call of the helper whose
    # rule names the object in ``indexed``, on the index's items as one tuple, a slice item as
    # np.r_[1:10] alone, where they hold no directive string)
    defvjp("s2sgrad.runtime.join_r(arrays)", linear=("arrays",), indexed="numpy.r_", array_result=True,
           arrays="s2s.split_join_r(g, arrays)"),
    defvjp("s2sgrad.runtime.join_c(arrays)", linear=("arrays",), indexed="numpy.c_", array_result=True,
           arrays="s2s.split_join_c(g, arrays)"),
    defvjp(
        "numpy.append(arr, values, axis=None)",
        joint_jvp="np.append(arr, values, axis)",
        constant_in=("axis",),
        arr="s2s.split_append(g, arr, values, axis)[0]",
        values="s2s.split_append(g, arr, values, axis)[1]",
    ),
    # ----- construction -----------------------------------------------------------------------
    defvjp(
        "numpy.full(shape, fill_value, dtype=None)",
        linear=("fill_value",),
        fill_value="s2s.unbroadcast(g, fill_value)",
    ),
    defvjp(
        "numpy.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)",
        joint_jvp="np.linspace(start, stop, num, endpoint, retstep, dtype, axis)",
        constant_in=("num", "endpoint", "retstep", "dtype", "axis"),
        start="s2s.linspace_vjp(g, start, stop, num, endpoint=endpoint, axis=axis)[0]",
        stop="s2s.linspace_vjp(g, start, stop, num, endpoint=endpoint, axis=axis)[1]",
    ),
)
