"""Shape, indexing and joining rules: the adjoint is the output's adjoint moved back into place."""

from .table import alias, defvjp

_RESHAPE_BACK = "np.reshape(g, np.shape(a))"

_RESHAPE = defvjp("numpy.reshape(a, shape=None, order='C')", a="np.reshape(g, np.shape(a), order=order)")
_RAVEL = defvjp("numpy.ravel(a, order='C')", a="np.reshape(g, np.shape(a), order=order)")
_SQUEEZE = defvjp("numpy.squeeze(a, axis=None)", a=_RESHAPE_BACK)
_TRANSPOSE = defvjp("numpy.transpose(a, axes=None)", a="s2s.transpose_vjp(g, axes)")

RULES = (
    _RESHAPE,
    _RAVEL,
    _SQUEEZE,
    _TRANSPOSE,
    defvjp("numpy.expand_dims(a, axis)", a=_RESHAPE_BACK),
    defvjp("numpy.atleast_1d(a)", a=_RESHAPE_BACK),
    defvjp("numpy.atleast_2d(a)", a=_RESHAPE_BACK),
    defvjp("numpy.flip(m, axis=None)", m="np.flip(g, axis)"),
    defvjp("numpy.fliplr(m)", m="np.fliplr(g)"),
    defvjp("numpy.flipud(m)", m="np.flipud(g)"),
    defvjp("numpy.swapaxes(a, axis1, axis2)", a="np.swapaxes(g, axis1, axis2)"),
    defvjp("numpy.moveaxis(a, source, destination)", a="np.moveaxis(g, destination, source)"),
    defvjp("numpy.concatenate(arrays, axis=0)", arrays="s2s.split_concatenate(g, arrays, axis)"),
    defvjp("numpy.stack(arrays, axis=0)", arrays="s2s.split_stack(g, arrays, axis)"),
    defvjp("numpy.broadcast_to(array, shape)", array="s2s.unbroadcast(g, array)"),
    defvjp("numpy.asarray(a, dtype=None)", a="g"),
    defvjp("numpy.array(object, dtype=None)", object="g"),
    defvjp("operator.getitem(a, index)", a="s2s.getitem_vjp(g, a, index)"),
    defvjp("ndarray.T(self)", self="np.transpose(g)"),
    defvjp("ndarray.reshape(self, *shape, order='C')", self="np.reshape(g, np.shape(self), order=order)"),
    defvjp("ndarray.transpose(self, *axes)", self="s2s.transpose_vjp(g, axes)"),
    alias("ndarray.ravel", _RAVEL, rename={"a": "self"}),
    alias("ndarray.flatten", _RAVEL, rename={"a": "self"}),
    alias("ndarray.squeeze", _SQUEEZE, rename={"a": "self"}),
    defvjp("ndarray.copy(self)", self="g"),
    defvjp("ndarray.astype(self, dtype)", self="g"),
)
