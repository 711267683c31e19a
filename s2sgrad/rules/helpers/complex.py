"""Rules of the helpers of s2sgrad/runtime/complex.py."""

from ..table import defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_GENERATED = "a helper of generated forward-mode code, which only reverse mode reads again (hvp)"

RULES = (
    # the slopes in the tangents of abs and angle: 0 for real values
    defvjp(
        "s2sgrad.runtime.abs_slope(x)",
        reverse_only=_GENERATED,
        x="s2s.abs_slope_vjp(g, x)",
    ),
    defvjp(
        "s2sgrad.runtime.angle_slope(x, deg=False)",
        reverse_only=_GENERATED,
        x="s2s.angle_slope_vjp(g, x, deg)",
    ),
)
