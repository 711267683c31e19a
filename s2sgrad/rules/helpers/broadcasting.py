"""Rules of the helpers of s2sgrad/runtime/broadcasting.py: unbroadcast, broadcast, like, fit."""

from ..table import defvjp

RULES = (
    # the sum of an adjoint down to a shape (or to another value's): its transpose spreads back
    defvjp(
        "s2sgrad.runtime.unbroadcast(value, x)",
        linear=("value",),
        constant_in=("x",),
        batched={"value": "s2s.batch_unbroadcast(t, x)"},
        value="s2s.broadcast(g, np.shape(value))",
    ),
    # a tangent given the output's shape: the adjoint is summed back to the tangent's shape
    defvjp(
        "s2sgrad.runtime.broadcast(value, shape)",
        linear=("value",),
        constant_in=("shape",),
        batched={"value": "s2s.batch_broadcast(t, shape)"},
        value="s2s.unbroadcast(g, value)",
    ),
    # an adjoint given its input's shape and dtype: spread from one number standing for an
    # array, or summed to a float; the adjoint goes the other way
    defvjp(
        "s2sgrad.runtime.like(value, x)",
        linear=("value",),
        constant_in=("x",),
        batched={"value": "s2s.batch_like(t, x)"},
        value="s2s.fit(g, value)",
    ),
    defvjp(
        "s2sgrad.runtime.fit(value, x)",
        linear=("value",),
        constant_in=("x",),
        batched={"value": "s2s.batch_fit(t, x)"},
        value="s2s.fit(g, value)",
    ),
)

NO_RULE = {"check_scalar": "a check that raises or returns None: generated code calls it as a statement"}
