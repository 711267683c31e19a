"""Rules of the helpers of s2sgrad/runtime/products.py: the adjoints of products, and a backward
loop's sums of them.

Each ``*_vjp_a(g, a, b) = d/da <g, P(a, b)>`` is bilinear in ``(g, b)`` and reads ``a`` only for its
shape; its transpose in ``g`` is the product with ``a`` replaced by the adjoint ``G``
(``P(G, b)``), and in ``b`` it is ``vjp_b(g, G, b)``; ``*_vjp_b`` the same with the roles swapped.
The ``_sum`` helpers take the lists a backward loop collected (``gs``, ``lefts``, ``rights``): they
are linear in each list, and their adjoints are lists (``s2s.Parts``), one item per pair.
"""

from ..table import defvjp


_BATCHED = ("matmul", "dot")  # the pairs with helpers for a batched adjoint (runtime/batching.py)


def _pair(name: str, product: str, sized: bool) -> tuple:
    """The rules of ``{name}_vjp_a`` and ``{name}_vjp_b`` for ``product`` (a template of ``a`` and
    ``b``); ``sized``: the transpose in ``g`` is summed to g's shape (batch axes broadcast)."""
    def to_value(code):
        return f"s2s.unbroadcast({code}, value)" if sized else code

    def batched(which):
        """The adjoint batched, and the other factor (the one the adjoint is not of) batched."""
        if name not in _BATCHED:
            return {}
        other, args = {"a": ("b", "value, a, t"), "b": ("a", "value, t, b")}[which]
        helper = f"batch_{name}_vjp_{which}"
        return {"value": f"s2s.{helper}(t, a, b)", other: f"s2s.{helper}_{other}({args})"}
    return (
        # d/da <g, a*b>: bilinear in (g, b), a read for its shape only
        defvjp(f"s2sgrad.runtime.{name}_vjp_a(value, a, b)", linear=("value", "b"), constant_in=("a",),
               batched=batched("a"), value=to_value(product.format(a="g", b="b")), b=f"s2s.{name}_vjp_b(value, g, b)"),
        # d/db <g, a*b>: bilinear in (g, a), b read for its shape only
        defvjp(f"s2sgrad.runtime.{name}_vjp_b(value, a, b)", linear=("value", "a"), constant_in=("b",),
               batched=batched("b"), value=to_value(product.format(a="a", b="g")), a=f"s2s.{name}_vjp_a(value, a, g)"),
    )


_TENSORDOT = (
    # d/da <g, tensordot(a, b, axes)>: bilinear in (g, b)
    defvjp("s2sgrad.runtime.tensordot_vjp_a(value, a, b, axes=2)", linear=("value", "b"),
           constant_in=("a",), value="np.tensordot(g, b, axes)",
           b="s2s.tensordot_vjp_b(value, g, b, axes)"),
    # d/db <g, tensordot(a, b, axes)>: bilinear in (g, a)
    defvjp("s2sgrad.runtime.tensordot_vjp_b(value, a, b, axes=2)", linear=("value", "a"),
           constant_in=("b",), value="np.tensordot(a, g, axes)",
           a="s2s.tensordot_vjp_a(value, a, g, axes)"),
)

# The sums of a loop's contributions, one item of each list per iteration (runtime/products.py).
_SUMS = (
    # sum_i matmul_vjp_b(gs[i], lefts[i], b): linear in gs, and in lefts
    defvjp("s2sgrad.runtime.matmul_vjp_b_sum(gs, lefts, b)", linear=("gs", "lefts"), constant_in=("b",),
           consumes=("gs", "lefts"),
           gs="s2s.product_sum_vjp_gs(g, gs, lefts, 'matmul', True)",
           lefts="s2s.product_sum_vjp_others(g, gs, lefts, 'matmul', True)"),
    # the same with np.dot's adjoints
    defvjp("s2sgrad.runtime.dot_vjp_b_sum(gs, lefts, b)", linear=("gs", "lefts"), constant_in=("b",),
           consumes=("gs", "lefts"),
           gs="s2s.product_sum_vjp_gs(g, gs, lefts, 'dot', True)",
           lefts="s2s.product_sum_vjp_others(g, gs, lefts, 'dot', True)"),
    # sum_i matmul_vjp_a(gs[i], a, rights[i]): linear in gs, and in rights
    defvjp("s2sgrad.runtime.matmul_vjp_a_sum(gs, a, rights)", linear=("gs", "rights"), constant_in=("a",),
           consumes=("gs", "rights"),
           gs="s2s.product_sum_vjp_gs(g, gs, rights, 'matmul', False)",
           rights="s2s.product_sum_vjp_others(g, gs, rights, 'matmul', False)"),
    # the same with np.dot's adjoints
    defvjp("s2sgrad.runtime.dot_vjp_a_sum(gs, a, rights)", linear=("gs", "rights"), constant_in=("a",),
           consumes=("gs", "rights"),
           gs="s2s.product_sum_vjp_gs(g, gs, rights, 'dot', False)",
           rights="s2s.product_sum_vjp_others(g, gs, rights, 'dot', False)"),
)

RULES = (
    # the adjoints of a @ b, np.dot(a, b), np.inner(a, b)
    *_pair("matmul", "{a} @ {b}", True),
    *_pair("dot", "np.dot({a}, {b})", False),
    *_pair("inner", "np.inner({a}, {b})", False),
    *_TENSORDOT,
    *_SUMS,
    # the adjoints [a_bar, b_bar] of np.kron(a, b): a_bar is bilinear in (g, b), b_bar in (g, a)
    defvjp("s2sgrad.runtime.kron_vjp(value, a, b)",
           jvps={"value": "s2s.Parts(s2s.kron_vjp(t, a, b))", "a": "s2s.kron_vjp_tangent(value, a, b, t, 0)",
                 "b": "s2s.kron_vjp_tangent(value, a, b, t, 1)"},
           value="np.kron(g[0], b) + np.kron(a, g[1])",
           a="s2s.kron_vjp(value, a, g[1])[0]",
           b="s2s.kron_vjp(value, g[0], b)[1]"),
    # np.cross's adjoints: linear in the upstream and in the other factor (bilinear, as cross is)
    defvjp(
        "s2sgrad.runtime.cross_vjp_a(value, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None)",
        linear=("value", "b"), constant_in=("a",),
        value="np.cross(g, b, axisa, axisb, axisc, axis)",
        b="s2s.cross_vjp_b(value, g, b, axisa, axisb, axisc, axis)",
    ),
    defvjp(
        "s2sgrad.runtime.cross_vjp_b(value, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None)",
        linear=("value", "a"), constant_in=("b",),
        value="np.cross(a, g, axisa, axisb, axisc, axis)",
        a="s2s.cross_vjp_a(value, a, g, axisa, axisb, axisc, axis)",
    ),
    # np.convolve's adjoint: linear in the upstream (its transpose is the convolution's window
    # again) and in the other factor (bilinear, as convolve is)
    defvjp("s2sgrad.runtime.convolve_vjp(value, other, a, start)", linear=("value", "other"),
           constant_in=("a", "start"),
           value="np.convolve(g, other)[start:start + np.size(value)]",
           other="s2s.convolve_vjp(value, g, other, start)"),
)

# Where a convolution's window starts: a whole number.
NONDIFF = ("s2sgrad.runtime.convolve_start", "s2sgrad.runtime.correlate_start")

# The helpers of these rules' own second-order templates: a third derivative through them is not
# written yet (reading them again is refused with the location of the call).
_THIRD = "a helper of a second-derivative template: third derivatives through it are not written yet"
NO_RULE = {name: _THIRD for name in ("kron_vjp_tangent", "product_sum_vjp_gs", "product_sum_vjp_others")}
