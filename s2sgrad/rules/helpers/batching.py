"""Rules of the helpers of s2sgrad/runtime/batching.py, so that batched tangent code (a Hessian's
columns in one sweep) is differentiated again: ``jacfwd`` of a Hessian, ``grad`` through one.

Each ``batch_f(rows, ...)`` is ``columns(f, rows, ...)``: ``f`` of each row ``rows[k]``, stacked.
It is linear in ``rows`` (forward mode: the same call on its tangent); the products are bilinear
in ``rows`` and their other array argument (the sum of the two calls), and read a third only for
its shape. Reverse mode: per argument, the transpose, which is a helper of the same module again.
A stacked argument's transpose is stacked too (``rows[0]`` stands for one row's shape where an
unbatched adjoint reads it); an unbatched argument's transpose sums over the stack
(``batch_matmul_vjp_b_sum``: ``sum_k matmul_vjp_b(g[k], rows[k], b)``). For a product ``P``
(``matmul``, ``dot``) with adjoints ``VA``, ``VB`` the transposes close among nine helpers:

    batch_P(S, b) = [P(S_k, b)]            S: batch_P_vjp_a(G, S[0], b)   b: batch_P_vjp_b_sum(G, S, b)
    batch_rP(a, S) = [P(a, S_k)]           a: batch_P_vjp_a_sum(G, a, S)  S: batch_P_vjp_b(G, a, S[0])
    batch_P_vjp_a(S, a, b) = [VA(S_k, a, b)]    S: batch_P(G, b)     b: batch_P_vjp_b_sum(S, G, b)
    batch_P_vjp_b(S, a, b) = [VB(S_k, a, b)]    S: batch_rP(a, G)    a: batch_P_vjp_a_sum(S, a, G)
    batch_P_vjp_a_b(g, a, S) = [VA(g, a, S_k)]  g: batch_P_sum(G, S)  S: batch_P_vjp_b_a(g, G, S[0])
    batch_P_vjp_b_a(g, S, b) = [VB(g, S_k, b)]  g: batch_P_sum(S, G)  S: batch_P_vjp_a_b(g, S[0], G)
    batch_P_sum(L, R) = sum_k P(L_k, R_k)       L: batch_P_vjp_a_b(G, L[0], R)  R: batch_P_vjp_b_a(G, L, R[0])
    batch_P_vjp_a_sum(S, a, R) = sum_k VA(S_k, a, R_k)  S: batch_rP(G, R)  R: batch_P_vjp_b(S, G, R[0])
    batch_P_vjp_b_sum(S, L, b) = sum_k VB(S_k, L_k, b)  S: batch_P(L, G)   L: batch_P_vjp_a(S, L[0], G)

where a matmul's transposes in its adjoint argument are summed to that argument's shape (batch
axes broadcast), as products.py's are. The helpers' parameters named ``g`` or ``t`` are renamed
(``value``, ``rows``): generated code passes them by position.
"""

from ..table import defvjp

_P = "s2sgrad.runtime."
_S2S = "s2s."  # generated code's name of the runtime helpers


def _rows_shape(name: str) -> str:
    """One row's shape of the stacked parameter ``name`` (a tuple, as batch_unbroadcast takes)."""
    return f"np.shape({name})[1:]"


def _products(p: str, sized: bool) -> tuple:
    """The rules of the nine batched helpers of the product ``p`` (``matmul`` or ``dot``)."""
    def stacked(code: str, like: str) -> str:
        return f"s2s.batch_unbroadcast({code}, {_rows_shape(like)})" if sized else code

    def plain(code: str, like: str) -> str:
        return f"s2s.unbroadcast({code}, {like})" if sized else code

    b, r = f"{_S2S}batch_{p}", f"{_S2S}batch_r{p}"  # the stacked product, and with the stack on the right
    return (
        # [P(rows_k, b)]: bilinear in (rows, b)
        defvjp(f"{_P}batch_{p}(rows, b)", linear=("rows", "b"),
               rows=f"{b}_vjp_a(g, rows[0], b)", b=f"{b}_vjp_b_sum(g, rows, b)"),
        # [P(a, rows_k)]: bilinear in (a, rows)
        defvjp(f"{_P}batch_r{p}(a, rows)", linear=("a", "rows"),
               a=f"{b}_vjp_a_sum(g, a, rows)", rows=f"{b}_vjp_b(g, a, rows[0])"),
        # [VA(value_k, a, b)]: bilinear in (value, b), a read for its shape
        defvjp(f"{_P}batch_{p}_vjp_a(value, a, b)", linear=("value", "b"), constant_in=("a",),
               value=stacked(f"{b}(g, b)", "value"), b=f"{b}_vjp_b_sum(value, g, b)"),
        # [VB(value_k, a, b)]: bilinear in (value, a), b read for its shape
        defvjp(f"{_P}batch_{p}_vjp_b(value, a, b)", linear=("value", "a"), constant_in=("b",),
               value=stacked(f"{r}(a, g)", "value"), a=f"{b}_vjp_a_sum(value, a, g)"),
        # [VA(value, a, rows_k)]: bilinear in (value, rows), a read for its shape
        defvjp(f"{_P}batch_{p}_vjp_a_b(value, a, rows)", linear=("value", "rows"), constant_in=("a",),
               value=plain(f"{b}_sum(g, rows)", "value"), rows=f"{b}_vjp_b_a(value, g, rows[0])"),
        # [VB(value, rows_k, b)]: bilinear in (value, rows), b read for its shape
        defvjp(f"{_P}batch_{p}_vjp_b_a(value, rows, b)", linear=("value", "rows"), constant_in=("b",),
               value=plain(f"{b}_sum(rows, g)", "value"), rows=f"{b}_vjp_a_b(value, rows[0], g)"),
        # sum_k P(left_k, right_k): bilinear in (left, right)
        defvjp(f"{_P}batch_{p}_sum(left, right)", linear=("left", "right"),
               left=f"{b}_vjp_a_b(g, left[0], right)", right=f"{b}_vjp_b_a(g, left, right[0])"),
        # sum_k VA(value_k, a, rows_k): bilinear in (value, rows), a read for its shape
        defvjp(f"{_P}batch_{p}_vjp_a_sum(value, a, rows)", linear=("value", "rows"), constant_in=("a",),
               value=stacked(f"{r}(g, rows)", "value"), rows=f"{b}_vjp_b(value, g, rows[0])"),
        # sum_k VB(value_k, rows_k, b): bilinear in (value, rows), b read for its shape
        defvjp(f"{_P}batch_{p}_vjp_b_sum(value, rows, b)", linear=("value", "rows"), constant_in=("b",),
               value=stacked(f"{b}(rows, g)", "value"), rows=f"{b}_vjp_a(value, rows[0], g)"),
    )


_SHAPES = (
    # rows with axes of length one after the leading one: reshaped back; the operands give ranks
    defvjp(f"{_P}lead(rows, *operands)", linear=("rows",), constant_in=("operands",),
           rows="np.reshape(g, np.shape(rows))"),
    # one value for every row: the rows' adjoints summed
    defvjp(f"{_P}batch_constant(value, rows)", linear=("value",), constant_in=("rows",),
           value="s2s.unbroadcast(g, value)"),
    defvjp(f"{_P}batch_reshape(rows, shape, order='C')", linear=("rows",), constant_in=("shape", "order"),
           rows=f"s2s.batch_reshape(g, {_rows_shape('rows')}, order)"),
    # a transpose of each row and its transpose, each the other's adjoint
    defvjp(f"{_P}batch_transpose(rows, axes=None)", linear=("rows",), constant_in=("axes",),
           rows="s2s.batch_transpose_vjp(g, axes)"),
    defvjp(f"{_P}batch_transpose_vjp(value, axes=None)", linear=("value",), constant_in=("axes",),
           value="s2s.batch_transpose(g, axes)"),
    # each row spread to a shape, and each summed down to one: each the other's adjoint
    defvjp(f"{_P}batch_broadcast(rows, shape)", linear=("rows",), constant_in=("shape",),
           rows=f"s2s.batch_unbroadcast(g, {_rows_shape('rows')})"),
    defvjp(f"{_P}batch_unbroadcast(rows, x)", linear=("rows",), constant_in=("x",),
           rows=f"s2s.batch_broadcast(g, {_rows_shape('rows')})"),
    # each row as x's gradient (spread or summed), and its transpose: each row fit back
    defvjp(f"{_P}batch_like(rows, x)", linear=("rows",), constant_in=("x",),
           rows=f"s2s.batch_fit(g, {_rows_shape('rows')})"),
    defvjp(f"{_P}batch_fit(value, x)", linear=("value",), constant_in=("x",),
           value=f"s2s.batch_fit(g, {_rows_shape('value')})"),
)

_REDUCTIONS = (
    # each row's sum (mean): its transpose spreads each row's adjoint back, and the other way
    defvjp(f"{_P}batch_sum(rows, axis=None, dtype=None, keepdims=False)", linear=("rows",),
           constant_in=("axis", "dtype", "keepdims"), rows="s2s.batch_sum_vjp(g, rows[0], axis, keepdims)"),
    defvjp(f"{_P}batch_mean(rows, axis=None, dtype=None, keepdims=False)", linear=("rows",),
           constant_in=("axis", "dtype", "keepdims"), rows="s2s.batch_mean_vjp(g, rows[0], axis, keepdims)"),
    defvjp(f"{_P}batch_sum_vjp(value, x, axis=None, keepdims=False)", linear=("value",),
           constant_in=("x", "axis", "keepdims"),
           value=f"s2s.batch_unbroadcast(s2s.batch_sum(g, axis, None, keepdims), {_rows_shape('value')})"),
    defvjp(f"{_P}batch_mean_vjp(value, x, axis=None, keepdims=False)", linear=("value",),
           constant_in=("x", "axis", "keepdims"),
           value=f"s2s.batch_unbroadcast(s2s.batch_mean(g, axis, None, keepdims), {_rows_shape('value')})"),
)

_INDEXING = (
    # each row read at index, and each row scattered into zeros there: each the other's adjoint
    defvjp(f"{_P}batch_getitem(rows, index)", linear=("rows",), constant_in=("index",),
           rows="s2s.batch_getitem_vjp(g, rows[0], index)"),
    defvjp(f"{_P}batch_getitem_vjp(value, x, index)", linear=("value",), constant_in=("x", "index"),
           value=f"s2s.batch_unbroadcast(s2s.batch_getitem(g, index), {_rows_shape('value')})"),
    # value written into a copy of each row: affine in (rows, value) together, as setitem is;
    # rows' adjoint loses the written places, value's sums theirs over the stack
    defvjp(f"{_P}batch_setitem(rows, index, value)", constant_in=("index",),
           jvps={"rows": "s2s.batch_setitem(t, index, 0.0)",
                 "value": "s2s.batch_constant(s2s.setitem(s2s.zeros_like(rows[0]), index, t), rows)"},
           rows="s2s.batch_setitem(g, index, 0.0)",
           value="s2s.unbroadcast(s2s.batch_setitem_value_vjp(g, index, value), value)"),
    # each row written into a copy of x: affine in (x, rows) together
    defvjp(f"{_P}batch_setitem_value(x, index, rows)", constant_in=("index",),
           jvps={"x": "s2s.batch_constant(s2s.setitem(t, index, 0.0), rows)",
                 "rows": "s2s.batch_setitem_value(s2s.zeros_like(x), index, t)"},
           x="s2s.unbroadcast(s2s.batch_setitem(g, index, 0.0), x)",
           rows="s2s.batch_setitem_value_vjp(g, index, rows[0])"),
    # each row read where the writes stay, summed to value's shape: its transpose writes back
    defvjp(f"{_P}batch_setitem_value_vjp(rows, index, value)", linear=("rows",),
           constant_in=("index", "value"),
           rows="s2s.batch_setitem_value(s2s.zeros_like(rows[0]), index, g)"),
)

RULES = (*_products("matmul", True), *_products("dot", False), *_SHAPES, *_REDUCTIONS, *_INDEXING)

# The seeds of a Hessian's columns and an axis argument: constants.
NONDIFF = (f"{_P}unit_rows", f"{_P}batch_axis")

NO_RULE = {"columns": "takes the function it maps over the rows: the batch_ helpers' general path, which "
                      "generated code never calls itself"}
