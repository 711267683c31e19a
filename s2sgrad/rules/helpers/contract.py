"""Rules of the helpers of s2sgrad/runtime/contract.py: the adjoints of np.einsum's operands.

``einsum_vjp(g, subscripts, operands, index)`` is linear in ``g`` and in each operand other than
``operands[index]`` (read for its shape only): multilinear in the sequence, not linear in it as a
whole. Its transpose in ``g`` is the einsum with
``operands[index]`` replaced by the adjoint ``G``; in the operands, the einsum's adjoints there.
"""

from ..table import defvjp

# Why forward mode has no tangent for them (Rule.reverse_only).
_MULTILINEAR = ("multilinear in the items of `operands` (one term per varied operand); forward mode "
                "derives the tangent of a sequence argument only for a function linear in the whole "
                "sequence, and reads its own tangent templates only for a sequence held in a name, "
                "while generated code passes a tuple display")

RULES = (
    # the adjoint of one einsum operand
    defvjp(
        "s2sgrad.runtime.einsum_vjp(value, subscripts, operands, index)",
        reverse_only=_MULTILINEAR,
        value="s2s.einsum_with(g, subscripts, operands, index)",
        # einsum_vjps_operands with the one item: its rules cover the next order (einsum_vjp_operands
        # has none)
        operands="s2s.einsum_vjps_operands(value, s2s.one_at(g, index, operands), subscripts, operands)",
    ),
    # the adjoints of every einsum operand (a list): the sums of einsum_vjp's over them
    defvjp(
        "s2sgrad.runtime.einsum_vjps(value, subscripts, operands)",
        reverse_only=_MULTILINEAR,
        value="s2s.einsum_vjps_value(g, subscripts, operands)",
        operands="s2s.einsum_vjps_operands(value, g, subscripts, operands)",
    ),
    # an einsum with one operand replaced: linear in it, multilinear in the others
    defvjp(
        "s2sgrad.runtime.einsum_with(x, subscripts, operands, index)",
        reverse_only=_MULTILINEAR,
        x="s2s.einsum_vjp(g, subscripts, operands, index)",
        operands="s2s.einsum_vjps_operands(g, s2s.one_at(x, index, operands), subscripts, operands)",
    ),
    # a list with one item (the others zero): linear in it
    defvjp(
        "s2sgrad.runtime.one_at(x, index, operands)",
        linear=("x",), constant_in=("index", "operands"),
        x="g[index]",
    ),
    # the adjoint of einsum_vjps's upstream: the sum of the einsums with one operand replaced by
    # its item (einsum_vjp reads the operand it is the adjoint of for its shape only)
    defvjp(
        "s2sgrad.runtime.einsum_vjps_value(items, subscripts, operands)",
        reverse_only=_MULTILINEAR,
        items="s2s.einsum_vjps(g, subscripts, operands)",
        operands="s2s.einsum_vjps_operands(g, items, subscripts, operands)",
    ),
    # the adjoints of einsum_vjps's operands: for each operand, the sum of its adjoints in the
    # einsums with one other operand replaced by its item (symmetric in value and items' roles)
    defvjp(
        "s2sgrad.runtime.einsum_vjps_operands(value, items, subscripts, operands)",
        reverse_only=_MULTILINEAR,
        value="s2s.einsum_pairs_value(items, g, subscripts, operands)",
        items="s2s.einsum_vjps_operands(value, g, subscripts, operands)",
        operands="s2s.einsum_pairs_operands(value, items, g, subscripts, operands)",
    ),
)

# the subscripts of an einsum written in its interleaved form: a string
NONDIFF = ("s2sgrad.runtime.einsum_interleaved",)

_LATER = "a helper of an einsum's higher-derivative templates: derivatives through it are not written yet"
NO_RULE = {name: _LATER for name in ("einsum_pairs_value", "einsum_pairs_operands", "einsum_vjp_operands")}
