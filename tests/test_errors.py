"""Bad input: every refusal is a TransformError located at file:line:col, quoting the line."""

import inspect
import re

import numpy as np
import pytest

import bad_inputs
import s2sgrad
from s2sgrad.checks import numerical_grad

REFUSED = [
    ("uses_try", "try/except"),
    ("uses_with", "`with`"),
    ("uses_yield", "generators"),
    ("uses_async", "async"),
    ("uses_global", "`global`"),
    ("uses_nonlocal", "`nonlocal`"),
    ("uses_class", "class definitions"),
    ("star_kwargs", "\\*\\*kwargs"),
    ("star_call", "star-arguments"),
    ("unknown_function", "no derivative rule for `scipy.special.ellipk`"),
    ("unknown_method", "`x.cumprod_like_nothing\\(...\\)` calls a method numpy arrays do not have"),
    ("subscript_write_to_global", "only a local array can be written"),
    ("subscript_write_nested", "only a local array can be written"),
    ("attribute_write", "assignment to an attribute"),
    ("inplace_method", "in-place method `.setflags\\(\\)` on `y`"),
    ("lambda_inside", "lambda"),
    ("comprehension", "comprehension evaluated only sometimes"),
    ("no_return", "does not return a value"),
    ("unknown_keyword", "not differentiable with `where=`"),
    ("recursive", "recursive call"),
    ("return_in_with", "a `return` inside a `with` block"),
    ("computed_while_condition", "while condition must be a comparison"),
    ("set_comprehension", "no derivative rule for `builtins.set`"),
    ("calls_builtin_without_rule", "no derivative rule for `builtins.divmod`"),
    ("index_built_row", "indexing the constant `np.r_` with a differentiated value"),
    ("index_built_columns", "indexing the constant `np.c_` with a differentiated value"),
    ("constant_indexed_by_varied", "indexing the constant `GLOBAL_ARRAY` with a differentiated"),
    ("ode_solution", "no derivative rule for `scipy.integrate.odeint`"),
]


def marker_line(name):
    lines, start = inspect.getsourcelines(getattr(bad_inputs, name))
    for offset, line in enumerate(lines):
        if "# refused" in line:
            return start + offset, line.rstrip("\n")
    raise AssertionError(f"no marker in {name}")


@pytest.mark.parametrize("name,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refusal_is_located(name, message):
    fn = getattr(bad_inputs, name)
    with pytest.raises(s2sgrad.TransformError) as info:
        # A method numpy arrays lack, on a parameter, is refused when the function is called with
        # an array there (a pytree there, a dataclass, is read): the others when it is transformed.
        s2sgrad.grad(fn)(np.ones(3))
    text = str(info.value)
    line, quoted = marker_line(name)
    head = text.splitlines()[0]
    assert re.match(rf"^tests/inputs/bad_inputs\.py:{line}:\d+: ", head), text
    assert re.search(message, head), text
    assert quoted.strip() in text
    assert "hint:" in text
    # The caret sits under the reported column.
    col = int(head.split(":")[2])
    caret_line = text.splitlines()[2]
    assert caret_line.index("^") == 4 + col - 1


def test_every_refusal_has_a_test():
    refused = {name for name, _ in REFUSED}
    defined = {n for n, v in vars(bad_inputs).items() if callable(v)
               and getattr(v, "__module__", "") == "bad_inputs" and n not in ("helper_condition", "decay")}
    assert refused == defined


def test_odeint_refusal_says_to_write_a_fixed_step_scheme():  # no silent approximation of the solver
    for run in (lambda: s2sgrad.grad(bad_inputs.ode_solution)(np.ones(3)),
                lambda: s2sgrad.jvp(bad_inputs.ode_solution, (np.ones(3),), (np.ones(3),))):
        with pytest.raises(s2sgrad.TransformError, match="(?s)odeint.*hint: .*fixed-step scheme as a loop"):
            run()


def test_constant_indexed_by_varied_value_is_refused_in_forward_mode_too():
    for name in ("index_built_row", "index_built_columns"):
        with pytest.raises(s2sgrad.TransformError, match="indexing the constant `np.[rc]_`"):
            s2sgrad.jvp(getattr(bad_inputs, name), (np.ones(3),), (np.ones(3),))


def global_rows(x):
    total = 0.0
    for i in range(2):  # a global indexed by a counter: no derivative through the index, no error
        total = total + np.sum(bad_inputs.GLOBAL_ARRAY[i:i + 2] * x[i]) + x[i] * x[i]
    return total


def test_constant_indexed_by_counter_is_fine():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(s2sgrad.grad(global_rows)(x), [2.0, 4.0, 0.0])
    np.testing.assert_allclose(s2sgrad.jvp(global_rows, (x,), (np.ones(3),))[1], 6.0)



def scales_of(x, n):
    acc = x
    for scale in [0.5, -1.0, 2.0][:n]:  # a display's index is an int or a slice
        acc = np.sin(acc * scale)
    return np.sum(acc)


def calls_scales_of(x, n):
    return scales_of(x, n) * 2.0  # a callee is differentiated in all its parameters


def test_a_display_indexed_by_a_parameter_of_a_callee_is_fine():
    # refused as "indexing the constant `[0.5, -1.0]`" where the function was a callee (all its
    # parameters varied) and in reverse mode over its gradient (session 25)
    x = np.array([0.3, -0.5, 0.8])
    for n in (0, 2):
        want = 2.0 * numerical_grad(scales_of, (x, n), 0)
        np.testing.assert_allclose(s2sgrad.grad(calls_scales_of)(x, n), want, rtol=1e-6)
        np.testing.assert_allclose(s2sgrad.jacrev(s2sgrad.grad(scales_of))(x, n),
                                   s2sgrad.hessian(scales_of)(x, n), rtol=1e-10, atol=1e-12)

def test_inactive_unknown_function_is_fine():
    import scipy.special

    def f(x, y):
        return np.sum(x * scipy.special.erfcx(y))

    g = s2sgrad.grad(f)(np.ones(3), np.ones(3))
    np.testing.assert_allclose(g, scipy.special.erfcx(np.ones(3)))


def test_wrong_wrt_name():
    from s2sgrad.pipeline import Options, generate
    from s2sgrad.read.capture import from_function

    with pytest.raises(s2sgrad.TransformError, match="no parameter `z`"):
        generate(from_function(bad_inputs.unknown_keyword), Options(wrt=("z",)))


def test_a_lambda_is_read_as_a_def_of_its_body():  # it was refused
    np.testing.assert_allclose(s2sgrad.grad(lambda x: np.sum(x * 2.0 * x))(np.ones(2)), [4.0, 4.0])


def test_not_a_function_refused():
    with pytest.raises(s2sgrad.TransformError, match="Python functions"):
        s2sgrad.grad(np.sin)


def test_a_numpy_function_given_directly_is_refused_with_the_cache_on(tmp_path, monkeypatch):
    # storing the refusal in the disk cache read the function's __code__, which a numpy function
    # written in Python behind numpy's dispatcher (np.append) does not have: an AttributeError
    monkeypatch.setenv("S2SGRAD_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):  # the second time from the cache, or made again: refused alike
        with pytest.raises(s2sgrad.TransformError):
            s2sgrad.vjp(np.append, np.arange(3.0), 1.0)


def test_hvp_of_a_numpy_function_given_directly_is_refused_before_it_runs():
    # hvp ran the function's scalar check before making its code: a partial of a numpy function
    # was called without its bound arguments (a TypeError)
    import functools

    x = np.ones((2, 3, 4))
    with pytest.raises(s2sgrad.TransformError):
        s2sgrad.hvp(functools.partial(np.moveaxis, source=0, destination=1), (x,), (x,))


@pytest.mark.parametrize("argnums", [None, 1.5])
def test_argnums_of_another_form_is_a_usage_error(argnums):
    # was Python's "'NoneType' object is not iterable" from inside s2sgrad
    with pytest.raises(TypeError, match=r"argnums .*: pass a parameter position"):  # UsageError
        s2sgrad.grad(scales_of, argnums=argnums)(np.ones(3), 1)
