"""Rules of the helpers of s2sgrad/runtime/custom.py: custom_result is linear in the gradients a
grad_fn returned (zeros for None, each summed to its parameter's shape) and reads the primals only
for their shapes; ``name`` and ``params`` are strings."""

from ..table import defvjp

RULES = (
    # a grad_fn's gradients checked and summed to their parameters: the transpose broadcasts back
    defvjp(
        "s2sgrad.runtime.custom_result(name, grads, primals, params)",
        linear=("grads",),
        constant_in=("name", "primals", "params"),
        grads="s2s.custom_result_vjp(g, grads, params)",
    ),
    # custom_result of an adjoint shaped like grads, None slots kept None (custom_result_vjp's
    # transpose): linear in it
    defvjp(
        "s2sgrad.runtime.custom_result_tangent(name, tangents, grads, primals, params)",
        linear=("tangents",),
        constant_in=("name", "grads", "primals", "params"),
        tangents="s2s.custom_result_vjp(g, grads, params)",
    ),
    # custom_result's transpose: each result's adjoint broadcast back to its gradient's shape;
    # its own transpose sums them down again (zeros in a None gradient's slot)
    defvjp(
        "s2sgrad.runtime.custom_result_vjp(value, grads, params)",
        linear=("value",),
        constant_in=("grads", "params"),
        value="s2s.custom_result_tangent('custom_result_vjp', g, grads, value, params)",
    ),
)
