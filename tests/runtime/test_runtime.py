"""The runtime package (s2sgrad/runtime/): every helper generated code and the rule templates call
exists as ``s2s.<name>``, ``__all__`` lists its modules' helpers, and a helper's qualified name is
``s2sgrad.runtime.<name>`` (the name the rules know it by) whichever module defines it."""

import importlib
import inspect
import pathlib
import re

import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime
from s2sgrad.checks import numerical_grad
from s2sgrad.lower.resolve import object_name
from s2sgrad.rules import DEFAULT_TABLE

ROOT = pathlib.Path(__file__).resolve().parents[2]
HELPER = re.compile(r"\bs2s\.([A-Za-z_][A-Za-z0-9_]*)")
LISTED = ("batching", "broadcasting", "containers", "contexts", "contract", "custom", "elementwise", "fft", "inplace",
          "indexing", "jacobians", "linalg", "products", "reductions", "rows", "scans", "shapes", "sorting",
          "special", "scipy_calls", "stats", "sums")  # runtime.py's own, batching, contract
UNLISTED = ("complex",)  # re-exported by name, not in __all__ (as before the split)


def _defined_helpers(module):
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and callable(value)
                  and getattr(value, "__module__", None) == module.__name__)


@pytest.mark.parametrize("name", LISTED + UNLISTED)
def test_each_module_lists_the_helpers_it_defines(name):
    module = importlib.import_module(f"s2sgrad.runtime.{name}")
    assert sorted(module.__all__) == _defined_helpers(module)
    assert (module.__doc__ or "").strip(), f"s2sgrad/runtime/{name}.py has no docstring"
    for helper in module.__all__:
        assert getattr(runtime, helper) is getattr(module, helper)


def test_all_lists_the_helpers_of_the_listed_modules():
    modules = [importlib.import_module(f"s2sgrad.runtime.{name}") for name in LISTED]
    assert runtime.__all__ == sorted(h for m in modules for h in m.__all__)
    assert len(set(runtime.__all__)) == len(runtime.__all__)
    assert {"unbroadcast", "zeros_like", "sum_vjp", "matmul_vjp_b", "custom_result", "Parts"} <= set(
        runtime.__all__)
    assert "abs_slope" not in runtime.__all__ and "einsum_vjp" in runtime.__all__


def _named(texts):
    return sorted({name for text in texts for name in HELPER.findall(text)})


def _templates():
    for rule in DEFAULT_TABLE.rules.values():
        for _, code in tuple(getattr(rule, "vjps", ())) + tuple(getattr(rule, "jvps", ())) + \
                tuple(getattr(rule, "batched", ())):
            yield code


SOURCES = {
    "rule templates": lambda: list(_templates()),
    "s2sgrad's source": lambda: [p.read_text() for p in (ROOT / "s2sgrad").rglob("*.py")
                                 if "runtime" not in p.parts],
    "golden files": lambda: [p.read_text() for p in (ROOT / "tests/write/golden").glob("*.py")],
    "generated/": lambda: [p.read_text() for p in (ROOT / "generated").rglob("*.py")],
}


@pytest.mark.parametrize("where", sorted(SOURCES))
def test_every_helper_named_exists(where):
    names = _named(SOURCES[where]())
    assert names, f"no s2s.<helper> found in {where}"
    missing = [n for n in names if not callable(getattr(runtime, n, None))]
    assert not missing, f"{where} name s2s.{', s2s.'.join(missing)}, not in s2sgrad.runtime"


def test_helpers_resolve_to_the_package_name():
    """The lowering names a called value by its module; a helper's module is its own (e.g.
    s2sgrad.runtime.reductions), but its name is the package's, as generated code spells it."""
    helpers = [n for n in dir(runtime) if not n.startswith("_") and callable(getattr(runtime, n))
               and not inspect.ismodule(getattr(runtime, n))]
    assert set(runtime.__all__) <= set(helpers)
    for name in helpers:
        assert object_name(getattr(runtime, name)) == f"s2sgrad.runtime.{name}"
    assert object_name(np.sum) == "numpy.sum"  # anything else: by its own module
    assert object_name(runtime.reductions) == "s2sgrad.runtime.reductions"


def test_a_helper_read_through_a_closure_finds_its_rule():
    """A runtime helper bound to a name of an enclosing function is found through its live value
    (no import names it): its rule is the one for ``s2sgrad.runtime.safe_log_base``."""
    log_base = runtime.safe_log_base

    def f(x):
        return np.sum(log_base(x) * x)

    x = np.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose(s2sgrad.grad(f)(x), np.log(x) + 1.0)


def test_copied_gives_new_containers_and_numbers_themselves():
    from s2sgrad.runtime import copied

    xs, d, a = [1.0, 2.0], {"k": 1.0}, np.ones(3)
    assert copied(xs) == xs and copied(xs) is not xs
    assert copied(d) == d and copied(d) is not d
    assert copied(a) is not a and np.array_equal(copied(a), a)
    for number in (1.0, 2, 1j, np.float64(3.0), np.float32(1.5)):  # nothing writes into a number
        assert copied(number) is number


def h_of_value_and_grad(x, v, s):
    """grad of a function calling value_and_grad of one that sums an array both whole and by an
    index read, beside a dict's items: the second sweep differentiates the first's adjoint
    arithmetic on a number standing for an array (a property-test program, seed 1001)."""
    value, (gx, gv, gs) = s2sgrad.value_and_grad(_sums_twice, argnums=(0, 1, 2))(x, v, s)
    return np.sum(gx) + np.sum(gv) + gs


def _sums_twice(x, v, s):
    parts = {key: np.sin(value) * scale for key, value, scale in zip(("x", "v", "s"), (x, v, s), (0.5, -0.25, 0.75))}
    z = np.copy(x)
    z *= np.sin(np.sum(x, axis=1))[:, None]
    return (np.sum(z[np.array([2, 0, 1])]) + np.sum(z)) + (
        np.sum(parts["x"] * parts["v"]) + parts["s"] * np.sum(parts["v"]))


def test_grad_through_value_and_grad_of_a_sum_read_twice():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 4)), rng.normal(size=4), 0.3)
    got = s2sgrad.grad(h_of_value_and_grad, argnums=(0, 1, 2))(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, numerical_grad(h_of_value_and_grad, args, i), rtol=1e-5, atol=1e-7)


def test_unbroadcast_of_a_smaller_array_over_length_one_axes():
    # a full sum's adjoint (one number) given back for a parameter of shape (1,) or (1, 1)
    from s2sgrad.runtime import like, unbroadcast
    assert np.shape(unbroadcast(np.float64(3.0), (1,))) == ()
    np.testing.assert_array_equal(like(np.float64(3.0), np.ones(1)), [3.0])
    np.testing.assert_array_equal(like(np.float64(2.0), np.ones((1, 1))), [[2.0]])
    # (3,) over (1, 1): summed where the shape has length 1, left to broadcast up
    np.testing.assert_array_equal(np.broadcast_to(unbroadcast(np.ones(3), (1, 1)), (1, 1)), [[3.0]])
    np.testing.assert_array_equal(unbroadcast(np.ones((2, 3)), (1, 3)), [[2.0, 2.0, 2.0]])
