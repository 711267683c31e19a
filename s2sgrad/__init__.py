"""s2sgrad: source-to-source automatic differentiation (reverse and forward mode) for Python and NumPy."""

from .version import __version__
from .api import grad, jvp, source, value_and_grad, vjp  # noqa: E402
from .jacobians import hessian, hvp, jacfwd, jacrev  # noqa: E402
from .checks import check_grads  # noqa: E402
from .custom import custom_gradient, stop_gradient  # noqa: E402
from .decorator import differentiable  # noqa: E402
from .errors import ArgumentError, CompileWarning, ComputeWarning, GradientError, TransformError  # noqa: E402
from .registry import register_gradient  # noqa: E402
from .trees import register_pytree, tree_flatten, tree_unflatten  # noqa: E402

__all__ = [
    "ArgumentError",
    "CompileWarning",
    "ComputeWarning",
    "GradientError",
    "TransformError",
    "__version__",
    "check_grads",
    "custom_gradient",
    "differentiable",
    "grad",
    "hessian",
    "hvp",
    "jacfwd",
    "jacrev",
    "jvp",
    "register_gradient",
    "register_pytree",
    "source",
    "stop_gradient",
    "tree_flatten",
    "tree_unflatten",
    "value_and_grad",
    "vjp",
]
