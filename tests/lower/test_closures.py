"""Lambdas and nested defs inside a differentiated function (issue 26): each call inlined
(lower/closures.py), so every mode gets it. Reverse against central differences and autograd,
forward and second order against autograd, third order against differences of the Hessian,
the decorator and the CLI; what cannot be inlined refused where it is written."""

import subprocess
import sys
from pathlib import Path

import autograd
import numpy as np
import pytest
from conftest import _rebind, assert_gradients
from test_python_constructs import check_every_mode

import closure_inputs as ci
import s2sgrad

X = np.array([0.3, -0.5, 0.7, 1.2, 0.9])
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("fn", [ci.softplus_lambda, ci.closure_with_early_return,
                                ci.closure_with_a_loop_and_a_return_inside, ci.defaults_and_keywords,
                                ci.closures_calling_closures, ci.closure_in_a_comprehension,
                                ci.immediate_lambda, ci.late_binding,
                                ci.closure_names_shadowing_the_callers, ci.nested_defs,
                                ci.procedure_writing_a_local_list,
                                ci.calls_a_helper_holding_local_functions,
                                ci.closure_in_an_if_test_and_a_loop_iterable,
                                ci.passes_local_functions_to_helpers, ci.factory_of_closures,
                                ci.factory_returning_a_lambda, ci.functions_in_a_list_and_a_dict,
                                ci.factory_called_in_a_loop, ci.nested_factories,
                                ci.table_of_factories])
def test_local_functions_in_every_mode(fn):
    check_every_mode(fn, X)


def test_a_factory_of_closures_over_differentiated_weights():
    """Local functions returned by a local function and kept in a tuple: each call inlined as
    the body it runs, so the gradient in both arguments, the jvp and the Hessian are autograd's."""
    x = X[:3] * 0.7
    assert_gradients(ci.factory_closing_over_weights, ci.W3, x, argnums=(0, 1))
    check_every_mode(ci.factory_closing_over_weights, ci.W3, x)


def test_a_closure_over_differentiated_weights():
    x = X[:3] * 0.7
    assert_gradients(ci.predict_closure, ci.W3, x, argnums=(0, 1))
    check_every_mode(ci.predict_closure, ci.W3, x)  # the Hessian in the weights too


@pytest.mark.parametrize("fn", [ci.softplus_lambda, ci.factory_of_closures])
def test_third_order_of_a_closure(fn):
    """The Hessian's derivative along a direction equals central differences of the Hessian."""
    x, d = X * 0.8, np.linspace(-0.4, 0.6, X.size)
    hessian = s2sgrad.hessian(fn)
    along = s2sgrad.grad(lambda v: d @ hessian(v) @ d)(x)
    eps = 1e-4
    expected = np.array([(d @ hessian(x + eps * e) @ d - d @ hessian(x - eps * e) @ d) / (2 * eps)
                         for e in np.eye(X.size)])
    np.testing.assert_allclose(along, expected, rtol=1e-5, atol=1e-7)


def test_the_decorator():
    x = X[:3]
    twin = _rebind(ci.decorated_predict.__wrapped__ if hasattr(ci.decorated_predict, "__wrapped__")
                   else ci.decorated_predict)
    np.testing.assert_allclose(ci.decorated_predict.grad(x), autograd.grad(twin)(x), rtol=1e-9)
    np.testing.assert_allclose(ci.decorated_predict.hessian(x), autograd.hessian(twin)(x),
                               rtol=1e-8, atol=1e-12)


MODEL = '''\
import numpy as np

import s2sgrad


def apply(f, z):
    return f(z)


@s2sgrad.differentiable(wrt="w")
def loss(w, x):
    act = lambda z: np.log1p(np.exp(z))

    def predict(inp):
        return np.tanh(inp @ w)

    h = predict(act(x))
    for _ in range(2):
        h = predict(h) + apply(act, h)
    return np.sum(h * h)
'''


def test_the_cli_emits_inlined_closures(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    run = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "model.py", "-o", "out"],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "S2SGRAD_CACHE_DIR": ""})
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "out" / "model_grad.py").read_text()
    assert "# lambda z: np.log1p(np.exp(z))" in text and "# return np.tanh(inp @ w)" in text
    namespace: dict = {}
    exec(compile(text, "model_grad.py", "exec"), namespace)
    model: dict = {}
    exec(compile(MODEL.replace('@s2sgrad.differentiable(wrt="w")\n', ""), "model.py", "exec"), model)
    w, x = ci.W3 * 0.5, X[:3]
    got = namespace["loss_grad"](w, x)
    np.testing.assert_allclose(got, autograd.grad(_rebind(model["loss"]))(w, x), rtol=1e-9)


FACTORY = '''\
import numpy as np

import s2sgrad


@s2sgrad.differentiable(wrt="w", order=2)
def loss(w, x):
    def make_layer(scale):
        return lambda z: np.tanh(z * scale)

    layers = [make_layer(w), make_layer(w * 2.0)]
    h = layers[0](x) + layers[-1](x)
    return np.sum(h * h)
'''


def test_the_cli_emits_inlined_factories_and_tables(tmp_path):
    """Read statically: a factory's lambda kept in a list, called by constant keys; the
    gradient and the second order (order=2) equal autograd's."""
    (tmp_path / "model.py").write_text(FACTORY)
    run = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "model.py", "-o", "out"],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "S2SGRAD_CACHE_DIR": ""})
    assert run.returncode == 0, run.stderr
    namespace: dict = {}
    exec(compile((tmp_path / "out" / "model_grad.py").read_text(), "model_grad.py", "exec"), namespace)
    model: dict = {}
    exec(compile(FACTORY.replace('@s2sgrad.differentiable(wrt="w", order=2)\n', ""), "model.py", "exec"), model)
    w, x = 0.7, X[:3]
    twin = _rebind(model["loss"])
    np.testing.assert_allclose(namespace["loss_grad"](w, x), autograd.grad(twin)(w, x), rtol=1e-9)
    np.testing.assert_allclose(namespace["loss_grad_hvp"](w, x, w_dot=1.0),
                               autograd.hessian(twin)(w, x), rtol=1e-8)


def returns_the_closure(x):
    def predict(inp):
        return inp * x

    return predict


def stores_the_closure_with_an_array(x):
    act = lambda z: z * 2.0  # noqa: E731
    fns = [act, x]
    return np.sum(fns[0](x))


def iterates_stored_closures(x):
    act = lambda z: z * 2.0  # noqa: E731
    fns = [act, lambda z: np.sin(z)]
    for fn in fns:
        x = fn(x)
    return np.sum(x)


def calls_a_stored_closure_by_a_computed_index(x):
    fns = [lambda z: z * 2.0, lambda z: np.sin(z)]
    i = int(x[0] > 0)
    return np.sum(fns[i](x))


def returns_stored_closures(x):
    fns = {"double": lambda z: z * 2.0}
    return fns


def binds_a_made_closure_twice(x):
    def make(c):
        return lambda z: z * c

    act = make(2.0)
    if x[0] > 0:
        act = make(3.0)
    return np.sum(act(x))


def helper(fn, v):
    return fn(v)


def passes_it_to_a_module_function(x):
    act = lambda z: z * 2.0  # noqa: E731
    return np.sum(helper(act, x))


def passes_it_to_a_function_of_another_file(x):
    act = lambda z: z * 2.0  # noqa: E731
    return np.sum(ci.apply(act, x))


def recursive(x):
    def power(v, n):
        return v if n == 0 else v * power(v, n - 1)

    return np.sum(power(x, 3))


def calls_it_sometimes(x):
    act = lambda z: z * 2.0  # noqa: E731
    return np.sum(act(x) if x[0] > 0 else x)


def calls_it_in_a_branch_of_a_conditional(x):
    act = lambda z: z * 2.0  # noqa: E731
    return np.sum(x if x[0] > 0 else act(x))


def binds_it_twice(x):
    act = lambda z: z * 2.0  # noqa: E731
    if x[0] > 0:
        act = lambda z: z * 3.0  # noqa: E731
    return np.sum(act(x))


@pytest.mark.parametrize("fn, line, message", [
    (returns_the_closure, "return predict", "used as a value"),
    (stores_the_closure_with_an_array, "fns = [act, x]", "used as a value"),
    (iterates_stored_closures, "for fn in fns:", "holds local functions"),
    (calls_a_stored_closure_by_a_computed_index, "return np.sum(fns[i](x))", "holds local functions"),
    (returns_stored_closures, "return fns", "holds local functions"),
    (binds_a_made_closure_twice, "act = make(2.0)", "bound more than once"),
    (passes_it_to_a_function_of_another_file, "return np.sum(ci.apply(act, x))", "used as a value"),
    (recursive, "return v if n == 0 else v * power(v, n - 1)", "runs only sometimes"),
    (calls_it_in_a_branch_of_a_conditional, "return np.sum(x if x[0] > 0 else act(x))",
     "runs only sometimes"),
    (binds_it_twice, "act = lambda z: z * 3.0", "bound more than once"),
])
def test_a_local_function_that_cannot_be_inlined_is_refused_where_it_is_used(fn, line, message):
    with pytest.raises(s2sgrad.TransformError, match=message) as info:
        s2sgrad.grad(fn)(X)
    assert line in str(info.value)
    assert "test_closures.py:" in str(info.value)


def test_a_local_function_passed_to_a_helper_of_this_file():
    """The helper is inlined where it is given the local function (its call inlined there)."""
    assert_gradients(passes_it_to_a_module_function, X, argnums=(0,))
    text = s2sgrad.source(s2sgrad.grad(passes_it_to_a_module_function))
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert "# return fn(v)" in text and not any("helper(" in line for line in code)


def test_a_local_function_calling_itself_is_refused():
    def countdown(x):
        def down(v, n):
            if n == 0:
                return v
            return down(v * 0.5, n - 1)

        return np.sum(down(x, 3))

    with pytest.raises(s2sgrad.TransformError, match="calls itself") as info:
        s2sgrad.grad(countdown)(X)
    assert "return down(v * 0.5, n - 1)" in str(info.value)


class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b


def builds_an_object_of_a_users_class(W, x):
    model = Linear(W, np.zeros(2))
    return np.sum((x @ model.W) ** 2)


def builds_a_constant_object(W, x):
    config = Linear(np.ones((3, 2)), np.zeros(2))
    return np.sum((x @ W + config.b) ** 2)


class Clipped:
    def __init__(self, W):
        if np.max(np.abs(W)) > 10.0:  # not only storing attributes: not read
            W = W / np.max(np.abs(W))
        self.W = W


def builds_an_object_whose_init_computes(W, x):
    model = Clipped(W)
    return np.sum((x @ model.W) ** 2)


def test_an_object_of_a_users_class_built_from_differentiated_values():
    """Read where its __init__ only stores attributes (lower/methods.py: each a local name);
    refused where it does more."""
    W = ci.W3[:, :2]
    assert_gradients(builds_an_object_of_a_users_class, W, X[:3], argnums=(0, 1),
                     autograd_oracle=False)
    with pytest.raises(s2sgrad.TransformError, match="builds an object of your class `Clipped`") as info:
        s2sgrad.grad(builds_an_object_whose_init_computes)(W, X[:3])
    assert "model = Clipped(W)" in str(info.value)
    assert "register_gradient" not in str(info.value)
    assert_gradients(builds_a_constant_object, W, X[:3], argnums=(0, 1))  # one of constants is read


SCALE = 2.0


def scaled_helper(fn, v):
    return fn(v) * SCALE


def passes_a_local_function_to_a_helper_reading_a_global_it_binds(x):
    SCALE = 3.0  # noqa: N806 -- the helper's SCALE is the global, not this one
    act = lambda z: z * SCALE  # noqa: E731
    return np.sum(scaled_helper(act, x))


class Scaled:
    def __init__(self, W):
        self.W = W

    def apply(self, v):
        return (v @ self.W) * SCALE


def calls_a_method_reading_a_global_it_binds(W, x):
    SCALE = 3.0  # noqa: N806
    model = Scaled(W)
    return np.sum(model.apply(x) * SCALE)


@pytest.mark.parametrize("fn, args, line, subject", [
    (passes_a_local_function_to_a_helper_reading_a_global_it_binds, (X,),
     "return np.sum(scaled_helper(act, x))", "`scaled_helper`, given a local function here,"),
    (calls_a_method_reading_a_global_it_binds, (ci.W3[:, :2], X[:3]),
     "return np.sum(model.apply(x) * SCALE)", "`apply` of your class"),
])
def test_an_inlined_def_reading_a_global_the_caller_binds_is_refused(fn, args, line, subject):
    """One refusal (closures.check_reads_unbound) for a module helper given a local function and a
    method of the user's class: inlined, either would read the caller's `SCALE`, not the global."""
    with pytest.raises(s2sgrad.TransformError, match="reads the global `SCALE`") as info:
        s2sgrad.grad(fn)(*args)
    assert line in str(info.value) and subject in str(info.value)
    assert "rename `SCALE` in this function" in str(info.value)
