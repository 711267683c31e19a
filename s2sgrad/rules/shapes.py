"""Shape, indexing and joining rules: the adjoint is the output's adjoint moved back into place."""

from .table import alias, defvjp

_RESHAPE_BACK = "np.reshape(g, np.shape(a))"

_RESHAPE = defvjp("numpy.reshape(a, shape=None, order='C')", a="np.reshape(g, np.shape(a), order=order)",
                  view=True)
_RAVEL = defvjp("numpy.ravel(a, order='C')", a="np.reshape(g, np.shape(a), order=order)", view=True)
_SQUEEZE = defvjp("numpy.squeeze(a, axis=None)", a=_RESHAPE_BACK, view=True)
_TRANSPOSE = defvjp("numpy.transpose(a, axes=None)", a="s2s.transpose_vjp(g, axes)", view=True)
_DIAGONAL = defvjp(
    "numpy.diagonal(a, offset=0, axis1=0, axis2=1)",
    a="s2s.diagonal_vjp(g, a, offset, axis1=axis1, axis2=axis2)",
    view=True,
)
_REPEAT = defvjp("numpy.repeat(a, repeats, axis=None)", a="s2s.repeat_vjp(g, a, repeats, axis)")
_SWAPAXES = defvjp("numpy.swapaxes(a, axis1, axis2)", a="np.swapaxes(g, axis1, axis2)", view=True)
_TAKE = defvjp("numpy.take(a, indices, axis=None)", a="s2s.take_vjp(g, a, indices, axis)")
_MATRIX_T = defvjp("numpy.matrix_transpose(x)", x="np.swapaxes(g, -1, -2)", view=True)

RULES = (
    _RESHAPE,
    _RAVEL,
    _SQUEEZE,
    _TRANSPOSE,
    defvjp("numpy.expand_dims(a, axis)", a=_RESHAPE_BACK, view=True),
    defvjp("numpy.atleast_1d(a)", a=_RESHAPE_BACK, view=True),
    defvjp("numpy.atleast_2d(a)", a=_RESHAPE_BACK, view=True),
    defvjp("numpy.flip(m, axis=None)", m="np.flip(g, axis)", view=True),
    defvjp("numpy.fliplr(m)", m="np.fliplr(g)", view=True),
    defvjp("numpy.flipud(m)", m="np.flipud(g)", view=True),
    _SWAPAXES,
    defvjp("numpy.moveaxis(a, source, destination)", a="np.moveaxis(g, destination, source)", view=True),
    defvjp("numpy.concatenate(arrays, axis=0)", arrays="s2s.split_concatenate(g, arrays, axis)"),
    defvjp("numpy.stack(arrays, axis=0)", arrays="s2s.split_stack(g, arrays, axis)"),
    defvjp("numpy.broadcast_to(array, shape)", array="s2s.unbroadcast(g, array)", view=True),
    defvjp("numpy.asarray(a, dtype=None)", a="g", view=True),
    defvjp("numpy.array(object, dtype=None)", object="g"),
    defvjp("operator.getitem(a, index)", a="s2s.getitem_vjp(g, a, index)", view=True),
    defvjp("ndarray.T(self)", self="np.transpose(g)", view=True),
    defvjp("ndarray.reshape(self, *shape, order='C')", self="np.reshape(g, np.shape(self), order=order)",
           view=True),
    defvjp("ndarray.transpose(self, *axes)", self="s2s.transpose_vjp(g, axes)", view=True),
    alias("ndarray.ravel", _RAVEL, rename={"a": "self"}),
    defvjp("ndarray.flatten(self, order='C')", self="np.reshape(g, np.shape(self), order=order)"),
    alias("ndarray.squeeze", _SQUEEZE, rename={"a": "self"}),
    defvjp("ndarray.copy(self)", self="g"),
    defvjp("ndarray.astype(self, dtype)", self="g"),
    defvjp("numpy.astype(x, dtype, copy=True)", x="g"),
    defvjp("numpy.copy(a)", a="g"),
    defvjp("numpy.asanyarray(a, dtype=None)", a="g", view=True),
    defvjp("numpy.ascontiguousarray(a, dtype=None)", a="g", view=True),
    defvjp("numpy.atleast_3d(a)", a=_RESHAPE_BACK, view=True),
    alias("numpy.permute_dims", _TRANSPOSE),
    _MATRIX_T,
    alias("numpy.linalg.matrix_transpose", _MATRIX_T),
    defvjp("ndarray.mT(self)", self="np.swapaxes(g, -1, -2)", view=True),
    alias("ndarray.swapaxes", _SWAPAXES, rename={"a": "self"}),
    # ----- diagonals and triangles ------------------------------------------------------------
    defvjp("numpy.diag(v, k=0)", v="s2s.diag_vjp(g, v, k)"),
    _DIAGONAL,
    alias("ndarray.diagonal", _DIAGONAL, rename={"a": "self"}),
    defvjp("numpy.tril(m, k=0)", m="np.tril(g, k)"),
    defvjp("numpy.triu(m, k=0)", m="np.triu(g, k)"),
    # ----- moving and copying elements --------------------------------------------------------
    defvjp("numpy.roll(a, shift, axis=None)", a="np.roll(g, np.negative(shift), axis)"),
    defvjp("numpy.rot90(m, k=1, axes=(0, 1))", m="np.rot90(g, -k, axes)", view=True),
    defvjp("numpy.rollaxis(a, axis, start=0)", a="s2s.rollaxis_vjp(g, a, axis, start=start)"),
    defvjp("numpy.tile(A, reps)", A="s2s.tile_vjp(g, A, reps)"),
    _REPEAT,
    alias("ndarray.repeat", _REPEAT, rename={"a": "self"}),
    defvjp("numpy.pad(array, pad_width, mode='constant')", array="s2s.pad_vjp(g, array, pad_width, mode)"),
    defvjp("numpy.sort(a, axis=-1, kind=None)", a="s2s.sort_vjp(g, a, axis=axis)"),
    _TAKE,
    alias("ndarray.take", _TAKE, rename={"a": "self"}),
    defvjp(
        "numpy.take_along_axis(arr, indices, axis)",
        arr="s2s.take_along_axis_vjp(g, arr, indices, axis)",
    ),
    # ----- joining ----------------------------------------------------------------------------
    defvjp("numpy.hstack(tup)", tup="s2s.split_hstack(g, tup)"),
    defvjp("numpy.vstack(tup)", tup="s2s.split_vstack(g, tup)"),
    defvjp("numpy.row_stack(tup)", tup="s2s.split_vstack(g, tup)"),
    defvjp("numpy.dstack(tup)", tup="s2s.split_dstack(g, tup)"),
    defvjp("numpy.column_stack(tup)", tup="s2s.split_column_stack(g, tup)"),
    defvjp(
        "numpy.append(arr, values, axis=None)",
        arr="s2s.split_append(g, arr, values, axis)[0]",
        values="s2s.split_append(g, arr, values, axis)[1]",
    ),
    # ----- construction -----------------------------------------------------------------------
    defvjp("numpy.full(shape, fill_value, dtype=None)", fill_value="s2s.unbroadcast(g, fill_value)"),
    defvjp(
        "numpy.linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)",
        start="s2s.linspace_vjp(g, start, stop, num, endpoint=endpoint, axis=axis)[0]",
        stop="s2s.linspace_vjp(g, start, stop, num, endpoint=endpoint, axis=axis)[1]",
    ),
)
