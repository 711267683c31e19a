"""Rules of the helpers of s2sgrad/runtime/custom.py: custom_result is linear in the gradients a
grad_fn returned (zeros for None, each summed to its parameter's shape) and reads the primals only
for their shapes; ``name`` and ``params`` are strings. ``stated`` is how a custom_gradient's
output keeps its stated gradient in generated code read again: its adjoint rule is the generated
backward sweep ``bwd`` (the user's grad_fn), its tangent ``stated_jvp`` (that rule transposed)."""

from ..table import defvjp

RULES = (
    # a custom_gradient function's output in its generated forward sweep: the stated gradient
    # governs it (the args get bwd(residuals, g), plain generated code differentiated again at
    # the next order), nothing flows to the value's own computation or the residuals
    defvjp(
        "s2sgrad.runtime.stated(value, bwd, residuals, args)",
        constant_in=("value", "bwd", "residuals"),
        joint_jvp="s2s.stated_jvp(value, bwd, residuals, args)",
        args="bwd(residuals, g)",
    ),
    # stated's tangent J t, J^T g being bwd(residuals, g): linear in the tangents, its transpose
    # the stated rule again; J's own dependence on the residuals has no rule (refused)
    defvjp(
        "s2sgrad.runtime.stated_jvp(value, bwd, residuals, tangents)",
        linear=("tangents",),
        constant_in=("value", "bwd"),
        tangents="bwd(residuals, g)",
    ),
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
