"""Rules of the helpers of s2sgrad/runtime/rows.py: a loop's per-step products and tails, at once.

``rows_matmul(a, n, b)`` (``a[t] @ b`` for ``t < n``) and its kin already have rules (the ones
lower/hoist.py's calls use, rules/linalg.py's ROW_PRODUCTS). Their adjoints are bilinear like
the products' (rules/helpers/products.py): ``rows_matmul_vjp_a(g, a, n, b)`` holds the adjoint
of each ``a[t]`` (``d/da <g, rows_matmul(a, n, b)>``), so its transpose in ``g`` is
``rows_matmul(G, n, b)`` and in ``b`` it is ``rows_matmul_vjp_b(g, G, n, b)``; the ``_vjp_b``
ones (the sum over the rows) transpose to ``rows_matmul(a, n, G)`` and ``_vjp_a(g, a, n, G)``.
"""

from ..linalg import ROW_PRODUCTS as _ROW_PRODUCTS
from ..table import alias, defvjp


def _adjoints(name: str) -> tuple:
    """The rules of ``{name}_vjp_a`` and ``{name}_vjp_b``."""
    return (
        # the adjoint of the stacked rows: bilinear in (g, b), a read for its shape only
        defvjp(f"s2sgrad.runtime.{name}_vjp_a(value, a, n, b)", linear=("value", "b"),
               constant_in=("a",), array_result=True,
               value=f"s2s.{name}(g, n, b)", b=f"s2s.{name}_vjp_b(value, g, n, b)"),
        # the adjoint of the loop-invariant factor: bilinear in (g, a), b read for its shape only
        defvjp(f"s2sgrad.runtime.{name}_vjp_b(value, a, n, b)", linear=("value", "a"),
               constant_in=("b",),
               value=f"s2s.{name}(a, n, g)", a=f"s2s.{name}_vjp_a(value, a, n, g)"),
    )


TAILS = "tails"  # a loop's tails at once (lower/batched_loops.py)


def _tails_shape(shapes: tuple):
    """``tails(x, start, padded)``'s shape: ``padded``'s, then ``x``'s less its first length."""
    x, padded = shapes[0], shapes[2] if len(shapes) > 2 else None
    if not x or padded is None or len(padded) != 2:
        return None
    return tuple(padded) + tuple(x[1:])


# a loop's tails at once (lower/batched_loops.py): linear in x where the fill (x[-1]) is held
# constant, which the batched loop never reads a derivative through (runtime/rows.py)
_TAILS = (
    defvjp("s2sgrad.runtime.tails(x, start, padded, fill=True)", array_result=True,
           constant_in=("padded",), result_shape=_tails_shape,
           jvps={"x": "s2s.tails(t, start, padded, False)"},
           x="s2s.tails_vjp(g, x, start, padded)"),
    defvjp("s2sgrad.runtime.tails_vjp(value, x, start, padded)", linear=("value",), array_result=True,
           constant_in=("x", "padded"), value="s2s.tails(g, start, padded, False)"),
)

RULES = (
    # the products themselves, under the names generated code calls them by
    *(alias(f"s2sgrad.runtime.{rule.name[len('s2s.'):]}", rule) for rule in _ROW_PRODUCTS),
    *(rule for name in ("rows_matmul", "rows_rmatmul", "rows_dot", "rows_rdot")
      for rule in _adjoints(name)),
    *_TAILS,
)
