"""A value the backward sweep reads only for its type, dtype and shape (the rule table's
SHAPE_READS: ``s2s.sum_vjp(g, x, axis)``'s ``x``, ``s2s.unbroadcast(g, x)``'s) is handed to it as
a shape template (``s2s.template(x)``: one element's memory), so the forward sweep's array is
freed when it returns: the gradients are the same (autograd's), and what the forward sweep
returns holds no such array. Only in code made for a call's shapes: no transformation reads it
again."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad

RNG = np.random.default_rng(8)


def pairs(P, m):
    D = P[:, None, :] - P[None, :, :]
    r = np.sqrt(np.sum(D * D, axis=-1) + 1.0)
    return np.sum(np.outer(m, m) / r) + np.sum(np.sum(P ** 2, axis=1) * m)


def pairs_ag(P, m):
    D = P[:, None, :] - P[None, :, :]
    r = anp.sqrt(anp.sum(D * D, axis=-1) + 1.0)
    return anp.sum(anp.outer(m, m) / r) + anp.sum(anp.sum(P ** 2, axis=1) * m)


def read_for_value(x):
    y = np.sin(x)
    s = np.sum(y * y, axis=0)  # y * y read for its shape only; y for its value too
    return np.sum(s * s) + np.sum(y)


def read_for_value_ag(x):
    y = anp.sin(x)
    s = anp.sum(y * y, axis=0)
    return anp.sum(s * s) + anp.sum(y)


@pytest.mark.parametrize("fn, oracle, shapes", [(pairs, pairs_ag, ((6, 3), (6,))),
                                                (read_for_value, read_for_value_ag, ((5, 4),))])
def test_gradients_and_templates_in_the_code_for_the_shapes(fn, oracle, shapes):
    args = tuple(RNG.normal(size=s) for s in shapes)
    argnums = tuple(range(len(args)))
    want = autograd.grad(oracle, argnums)(*args)
    vjp_of = s2sgrad.value_and_grad(fn, argnums=argnums)
    for _ in range(3):  # code for any shape, then code for the shapes
        for got, expected in zip(vjp_of(*args)[1], want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    made = s2sgrad.source(vjp_of, like=args)
    namespace: dict = {}
    exec(compile(made, "<generated>", "exec"), namespace)
    _, residuals = namespace[f"{fn.__name__}_fwd"](*args)
    templates = [r for r in residuals if isinstance(r, np.ndarray) and r.ndim and not any(r.strides)]
    assert "s2s.template(" in made and templates, made
    # the parameters are handed as they are (the caller holds them anyway)
    params = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    assert not any(f"s2s.template({p})" in made for p in params), made
    # code for any shape, which a Hessian reads again, hands the values (a template would carry a
    # zero tangent there)
    assert "s2s.template(" not in s2sgrad.source(vjp_of)

def test_pairs_hands_no_array_only_its_shape_is_read_for():
    P, m = RNG.normal(size=(6, 3)), RNG.uniform(0.5, 2.0, size=6)
    vg = s2sgrad.value_and_grad(pairs, argnums=(0, 1))
    vg(P, m)
    made = s2sgrad.source(vg, like=(P, m))
    returned = made[made.index("return pairs, ("):made.index(")\n\n\ndef pairs_bwd")]
    # D * D is read by the backward sweep only for sum_vjp's shape: a template, not the (6, 6, 3) array
    assert "s2s.template(D_times_D)" in returned and ", D_times_D," not in returned, returned
