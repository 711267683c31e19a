"""Rules of the helpers of s2sgrad/runtime/sorting.py: both are linear in the adjoints or
tangents they move, and read the values only for their order; each is the other's transpose."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.sorted_jvp(t, xs, key=None, reverse=False)", linear=("t",),
           constant_in=("xs", "key", "reverse"), t="s2s.sorted_vjp(g, xs, key, reverse)"),
    # its parameter ``g`` renamed (a template's ``g`` is the output's adjoint)
    defvjp("s2sgrad.runtime.sorted_vjp(grads, xs, key=None, reverse=False)", linear=("grads",),
           constant_in=("xs", "key", "reverse"), grads="s2s.sorted_jvp(g, xs, key, reverse)"),
)
