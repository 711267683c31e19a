"""Forward mode by reverse mode, for a function forward mode cannot read (a custom_gradient
function it calls, a rule with no tangent): a function and ``wrt`` -> ``(text, fn, tangent
names)`` as forward_code.build_jvp returns, ``fn(*args, **{tangent name: t})`` -> ``(value, J t)``; or
None when this route does not apply either.

The generated ``<f>_grads(*args, seed)`` (write/entries.py) is ``J^T seed``: linear in the seed.
Reverse mode over it, seeded on its output with the tangents, gives the adjoint of the seed:
``J t`` (the transpose of a linear map's transpose is the map). Both levels are generated code;
a custom_gradient's ``grad_fn`` is differentiated as the contract says. One array (or scalar)
output only: a tuple output would need a tuple seed.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import numpy as np

from .errors import GradientError, TransformError
from . import derive


def jvp_by_reverse(fun: Callable, wrt: tuple, trees: tuple = (), count: int = 0) -> Optional[tuple]:
    """See the module doc. ``trees``: the structures of pytree parameters (``count`` leaves
    differentiated in all, one tangent each)."""
    try:
        grads = derive.api_function(fun, wrt, False, False, False, trees=trees)
        if grads is None:
            return None
        seed = tuple(inspect.signature(grads).parameters)[-1]
        text, (fwd, _, _) = derive.build(fun, wrt, trees=trees)
        outer_text, (outer_fwd, outer_bwd, _) = derive.build(grads, (seed,))
    except TransformError:
        return None
    tangent_names = tuple(f"{name}_dot" for name in wrt) if not trees else \
        tuple(f"leaf{i}_dot" for i in range(count))

    def fn(*args: Any, **tangents: Any) -> tuple:
        derive.fresh(fwd)
        derive.fresh(outer_fwd)
        value = fwd(*args)[0]
        if isinstance(value, (tuple, list)):
            raise GradientError(f"jvp of {getattr(fun, '__name__', fun)}: forward mode cannot "
                                "read it, and the reverse-mode route takes one array output, not "
                                "a tuple; take the jvp of a function that returns one of its items")
        # the seed's zero of the value's type: a real seed's adjoint would be read as real
        if np.ndim(value) == 0:
            zero = np.result_type(value).type(0) if np.iscomplexobj(value) else 0.0
        else:
            zero = np.zeros_like(value, dtype=np.result_type(value, float))
        residuals = outer_fwd(*args, **{seed: zero})[1]
        along = tuple(tangents[name] for name in tangent_names)
        tangent = outer_bwd(residuals, along)[0]
        if np.ndim(value) == 0 and type(tangent) is np.ndarray:
            tangent = tangent[()]  # one number's tangent is one number, as the value is
        return value, tangent

    return text + "\n\n" + outer_text, fn, tangent_names


__all__ = ["jvp_by_reverse"]
