"""Rules of the helpers of s2sgrad/runtime/reductions.py."""

from ..table import defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_GENERATED = "a helper of generated forward-mode code, which only reverse mode reads again (hvp)"

RULES = (
    # the mean of the tangents where x attains its extremum m: linear in t, piecewise constant in
    # m and x (their derivative is zero wherever it exists)
    defvjp(
        "s2sgrad.runtime.extremum_jvp(t, m, x, axis=None, keepdims=False)",
        reverse_only=_GENERATED,
        t="s2s.extremum_vjp(g, m, x, axis, keepdims)",
        m="s2s.zeros_like(m)",
        x="s2s.zeros_like(x)",
    ),
)
