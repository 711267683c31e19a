"""Third order for a generated program: ``grad`` of a function that calls ``grad`` of a function
that calls ``grad`` of the program (each level generated code s2sgrad reads again), against
central differences of the second level along the same direction (for a program with a stated
custom gradient, against autograd's third derivative of its twin: TensorFlow's semantics).

With ``h1(p) = <grad f(p), d>`` and ``h2(p) = <grad h1(p), d>``, ``grad h2 = T(d, d, .)``, the
derivative of ``grad h1 = H d`` along ``d``. Used by test_property_third.py and by
``run_seeds.py --third``.
"""

import itertools

import autograd
import autograd.numpy as anp
import numpy as np
import test_property as tp

import s2sgrad

_ids = itertools.count()


def _caller(directory, gradient, direction):
    """A module whose ``h`` is ``<gradient(...), direction>`` (test_property's caller)."""
    module = tp.load(directory, tp._CALLER, f"s2sgrad_prop_third_{next(_ids)}")
    module.GRAD, module.DIRECTION = gradient, direction
    return module


def check_third(prog, directory, direction_seed, eps=1e-4):
    """Build ``prog`` and check its third derivative along a random direction. Returns None, or
    the first line of the TransformError of a level s2sgrad refused."""
    module, twin = tp._build(prog, directory)
    f, args = module.f, prog.args()
    rng = np.random.default_rng(direction_seed)
    direction = [rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in args[:3]]
    stated = "custom_gradient_stated" in prog.tags
    if stated and twin is None:  # differences of H d would differentiate the custom values
        return "(a stated custom gradient: autograd, the oracle, cannot run the program)"
    try:
        first = _caller(directory, s2sgrad.grad(f, argnums=tp.ARGNUMS), direction)
        hessian_along = s2sgrad.grad(first.h, argnums=tp.ARGNUMS)  # H d
        second = _caller(directory, hessian_along, direction)
        third = s2sgrad.grad(second.h, argnums=tp.ARGNUMS)(*args)  # T(d, d, .)
    except s2sgrad.TransformError as exc:
        return str(exc).splitlines()[0]
    except Exception as exc:  # noqa: BLE001 - the report must carry the program
        raise AssertionError(tp._report(prog, f"third order raised {type(exc).__name__}: {exc}")) from exc
    if stated:  # TensorFlow's semantics: autograd's, whose primitives carry the stated rules
        try:
            differences = _autograd_third(twin, args, direction)
        except Exception:  # noqa: BLE001 - autograd's own limits (einsum "ii->i")
            return "(a stated custom gradient: autograd, the oracle, cannot run the program)"
    else:
        plus = hessian_along(*[a + eps * d for a, d in zip(args[:3], direction)], *args[3:])
        minus = hessian_along(*[a - eps * d for a, d in zip(args[:3], direction)], *args[3:])
        differences = [(np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(plus, minus)]
    for i, (got, want) in enumerate(zip(third, differences)):
        np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-5 * max(1.0, float(np.max(np.abs(want)))),
            err_msg=tp._report(prog, f"third order, argument {i}, vs differences of H d"))
    return None


def _autograd_third(twin, args, direction):
    """T(d, d, .) of the autograd twin (a program with a stated custom gradient)."""
    flag = args[3]

    def along(gradient):
        def h(x, v, s):
            gx, gv, gs = gradient(x, v, s)
            return anp.sum(gx * direction[0]) + anp.sum(gv * direction[1]) + gs * direction[2]
        return h

    first = autograd.grad(lambda x, v, s: twin.f(x, v, s, flag), tp.ARGNUMS)
    second = autograd.grad(along(first), tp.ARGNUMS)
    return [np.asarray(t) for t in autograd.grad(along(second), tp.ARGNUMS)(*args[:3])]
