"""The helpers of s2sgrad/runtime/batching.py have no rules: batched tangent code (a Hessian's
columns in one sweep) is run, never read again."""

from ...runtime import batching

RULES = ()

NO_RULE = {name: "a helper of batched tangent code, which s2sgrad runs and never differentiates"
           for name in batching.__all__}
