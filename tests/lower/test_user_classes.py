"""Methods and properties of the user's own classes inside a differentiated function (issue 26,
lower/methods.py): objects that are globals, built in the function (scalar replacement) or
differentiated dataclass arguments. Gradients against central differences and autograd (the
classes' module read with autograd.numpy), forward mode and Hessians against autograd, the
decorator and the CLI; the generated code guarded on the class's members; what cannot be read
refused where it is written."""

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import class_inputs as k
import decorated_object_inputs as do
import s2sgrad
from s2sgrad.checks import numerical_grad
from s2sgrad.read.live import fingerprint

X = np.array([0.3, -0.5, 0.7])
W = k.W0
REPO = Path(__file__).resolve().parents[2]
HERE = "tests/inputs/class_inputs.py"


@contextmanager
def autograd_numpy(module=k):
    """``module``'s functions and methods reading autograd.numpy as ``np`` (the oracle)."""
    saved = module.np
    module.np = anp
    try:
        yield
    finally:
        module.np = saved


def check_modes(fn, *args, argnums=(0,)):
    """Gradient in ``argnums`` against differences and autograd; jvp in the first argument
    against autograd's gradient; the Hessian in the first argument against autograd's."""
    got = s2sgrad.grad(fn, argnums=argnums)(*args)
    with autograd_numpy():
        expected = autograd.grad(fn, argnums)(*args)
        hessian = autograd.hessian(fn, argnums[0])(*args)
    for i, g, e in zip(argnums, got, expected):
        np.testing.assert_allclose(g, numerical_grad(fn, args, i), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
    first = argnums[0]
    tangent = np.linspace(0.2, 1.1, np.size(args[first])).reshape(np.shape(args[first]))
    tangents = tuple(tangent if i == first else np.zeros_like(a) for i, a in enumerate(args))
    value, along = s2sgrad.jvp(fn, args, tangents)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    np.testing.assert_allclose(along, np.sum(expected[0] * tangent), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.hessian(fn, argnums=first)(*args), hessian,
                               rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("fn", [k.global_object, k.global_subclass_object])
def test_methods_and_properties_of_a_global_object(fn):
    check_modes(fn, X)


@pytest.mark.parametrize("fn, first", [(k.built_object, W), (k.built_dataclass, W),
                                       (k.built_with_a_class_constant, W),
                                       (k.built_in_a_loop, np.hstack([W, W[:, :1]]))])
def test_an_object_built_in_the_function_from_differentiated_values(fn, first):
    check_modes(fn, first, X, argnums=(0, 1))
    check_modes(fn, first, X, argnums=(1, 0))


def test_the_built_objects_attributes_are_local_names():
    text = s2sgrad.source(s2sgrad.grad(k.built_object))
    assert "model_W = W" in text and "LinearModel(" not in text.split("# model =")[1].split("\n", 1)[1]
    assert "# model = LinearModel(W, np.zeros(2), scale=2.0)" in text  # the user's line quoted
    assert "# return model.loss(x, Y) + np.sum(model.W * model.scale)" in text


def test_a_dataclass_argument_whose_method_the_function_calls():
    """grad(loss)(model, x): the model's fields are differentiated (pytrees), its method read."""
    model = k.Dense(W, k.B0)
    grads = s2sgrad.grad(k.dataclass_argument, argnums=(0, 1))(model, X)
    assert isinstance(grads[0], k.Dense)

    def flat(W_, b_, x_):
        return k.dataclass_argument(k.Dense(W_, b_), x_)

    with autograd_numpy():
        expected = autograd.grad(flat, (0, 1, 2))(W, k.B0, X)
        hessian = autograd.hessian(flat, 0)(W, k.B0, X)
    for got, e, i in ((grads[0].W, expected[0], 0), (grads[0].b, expected[1], 1), (grads[1], expected[2], 2)):
        np.testing.assert_allclose(got, e, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got, numerical_grad(flat, (W, k.B0, X), i), rtol=1e-5, atol=1e-7)
    second = s2sgrad.hessian(k.dataclass_argument)(model, X)
    np.testing.assert_allclose(second.W.W, hessian, rtol=1e-8, atol=1e-12)
    value, along = s2sgrad.jvp(k.dataclass_argument, (model, X),
                               (k.Dense(np.ones_like(W), np.zeros(2)), np.zeros(3)))
    np.testing.assert_allclose(along, np.sum(expected[0]), rtol=1e-9)


def test_the_decorator():
    plain = getattr(k.decorated, "__wrapped__", k.decorated)
    with autograd_numpy():
        expected, hessian = autograd.grad(plain)(W, X), autograd.hessian(plain)(W, X)
    np.testing.assert_allclose(k.decorated.grad(W, X), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(k.decorated.hessian(W, X), hessian, rtol=1e-8, atol=1e-12)


def test_the_decorator_with_an_object_argument():
    """``@differentiable(wrt="x")`` on ``loss(model, x)``: the class is known at the first call,
    so the code is made then, per class (an array there is refused where the method is called)."""
    fn, fn2 = do.model_loss, do.model_loss_2
    for model in do.MODELS:
        with autograd_numpy(do):
            expected = autograd.grad(fn, 1)(model, X)
            hessian = autograd.hessian(fn2, 1)(model, X)
        np.testing.assert_allclose(fn.grad(model, X), expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(fn.grad(model, X), numerical_grad(fn, (model, X), 1), rtol=1e-5,
                                   atol=1e-7)
        value, again = fn.value_and_grad(model, X)
        np.testing.assert_allclose(value, fn(model, X), rtol=1e-12)
        np.testing.assert_allclose(again, expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(fn2.hessian(model, X), hessian, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(fn2.hvp(model, X, tangents=X * 0.5), hessian @ (X * 0.5),
                                   rtol=1e-8, atol=1e-12)
    with pytest.raises(s2sgrad.TransformError) as info:
        fn.grad(np.ones(3), X)  # an array where the method is called
    assert info.value.location.path.endswith("decorated_object_inputs.py")


MODEL_FILE = '''\
from dataclasses import dataclass

import numpy as np

import s2sgrad


class LinearModel:
    def __init__(self, W, b, scale=1.0):
        self.W = W
        self.b = b
        self.scale = scale

    def predict(self, x):
        return np.tanh(x @ self.W + self.b) * self.scale

    @property
    def penalty(self):
        return np.sum(self.b ** 2)


@dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(x @ self.W + self.b)


MODEL = LinearModel(np.linspace(-0.5, 0.5, 6).reshape(3, 2), np.array([0.1, -0.2]))


@s2sgrad.differentiable(wrt="W")
def loss(W, x):
    model = LinearModel(W, np.zeros(2) + x[:2], scale=2.0)
    layer = Dense(W, np.ones(2))
    return np.sum(model.predict(x) ** 2) + model.penalty + np.sum(layer.apply(x)) + \
        np.sum(MODEL.predict(x) * W[0])
'''


def test_the_cli_emits_inlined_methods(tmp_path, monkeypatch):
    """Objects built in the function, and a module-level object the file binds once to a call
    of its class (the command line reads the file, never runs it)."""
    monkeypatch.syspath_prepend(str(tmp_path))  # the emitted code imports MODEL from model.py
    monkeypatch.delitem(sys.modules, "model", raising=False)  # another test's model.py
    (tmp_path / "model.py").write_text(MODEL_FILE)
    run = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "model.py", "-o", "out"],
                         cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "S2SGRAD_CACHE_DIR": ""})
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "out" / "model_grad.py").read_text()
    assert "# model = LinearModel(W, np.zeros(2) + x[:2], scale=2.0)" in text
    assert "# return np.tanh(x @ self.W + self.b) * self.scale" in text
    assert "from model import MODEL" in text and "MODEL.W" in text
    namespace: dict = {}
    exec(compile(text, "model_grad.py", "exec"), namespace)
    model: dict = {"__name__": "model"}
    exec(compile(MODEL_FILE.replace('@s2sgrad.differentiable(wrt="W")\n', "").replace(
        "import numpy as np", "import autograd.numpy as np"), "model.py", "exec"), model)
    np.testing.assert_allclose(namespace["loss_grad"](W, X), autograd.grad(model["loss"])(W, X),
                               rtol=1e-9, atol=1e-12)


def test_a_class_changed_between_calls_is_read_again(monkeypatch):
    """The generated code is guarded on the class's members it inlined: a method replaced on
    the class is never run stale (refused: it is not the def in the file), one of the object's
    own attributes hiding it is read again, and the original is read once it is back."""
    gradient = s2sgrad.grad(k.global_object)
    before = gradient(X)
    monkeypatch.setattr(k.LinearModel, "predict", lambda self, x: x[:2] * 3.0)
    with pytest.raises(s2sgrad.TransformError, match="replaced at run time"):
        gradient(X)
    monkeypatch.undo()
    np.testing.assert_allclose(gradient(X), before)
    monkeypatch.setattr(k.MODEL, "predict", lambda x: x[:2] * 3.0, raising=False)
    residual = X[:2] * 3.0 - k.Y  # loss = |3 x[:2] - y|^2 + penalty
    np.testing.assert_allclose(gradient(X), np.concatenate([6.0 * residual, [0.0]]))
    monkeypatch.undo()
    np.testing.assert_allclose(gradient(X), before)


def test_the_cache_key_names_the_methods_read():
    text = fingerprint(k.global_object)
    assert "LinearModel.predict@" in text and "LinearModel.loss@" in text
    assert "LinearModel.penalty@" in text  # a property's getter


def test_a_method_of_a_class_of_another_file_is_refused_where_it_is_called():
    with pytest.raises(s2sgrad.TransformError, match="class is not defined in this file") as info:
        s2sgrad.grad(k.method_of_a_class_of_another_file)(X)
    assert f"{HERE}:" in str(info.value) and "# elsewhere" in str(info.value)
    assert "register_gradient" not in str(info.value)


@pytest.mark.parametrize("fn, argnums, where, message", [
    (k.method_changing_its_object, 0, "self.calls += 1", "changes an attribute of `self`"),
    (k.passes_the_object_on, 0, "model = LinearModel(W, B0)", "builds an object of your class"),
])
def test_what_cannot_be_read_is_refused_where_it_is_written(fn, argnums, where, message):
    args = (W, X)
    with pytest.raises(s2sgrad.TransformError, match=message) as info:
        s2sgrad.grad(fn, argnums=argnums)(*args)
    assert where in str(info.value) and f"{HERE}:" in str(info.value)
    assert "register_gradient" not in str(info.value)


def test_a_built_object_used_whole_is_refused():
    with pytest.raises(s2sgrad.TransformError, match="used whole") as info:
        s2sgrad.grad(k.uses_the_built_object_whole)(W, X)
    assert "# whole" in str(info.value)
    with pytest.raises(s2sgrad.TransformError, match="not an attribute `LinearModel") as info:
        s2sgrad.grad(k.reads_an_attribute_not_stored)(W, X)
    assert "# not-stored" in str(info.value)


@pytest.mark.parametrize("model", [k.MODEL, k.SHIFTED], ids=["class", "subclass"])
def test_an_object_passed_as_an_argument_not_differentiated(model):
    """``loss(model, x)`` differentiated in ``x``: the code is made per class of the argument
    (tree_arguments._objects), its methods read as written; the object's arrays constants."""
    fn = k.non_differentiated_argument
    with autograd_numpy():
        expected = autograd.grad(fn, 1)(model, X)
        hessian = autograd.hessian(fn, 1)(model, X)
    got = s2sgrad.grad(fn, argnums=1)(model, X)
    np.testing.assert_allclose(got, numerical_grad(fn, (model, X), 1), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    value, again = s2sgrad.value_and_grad(fn, argnums=1)(model, X)
    np.testing.assert_allclose(value, fn(model, X), rtol=1e-12)
    np.testing.assert_allclose(again, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.hessian(fn, argnums=1)(model, X), hessian,
                               rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.jacfwd(s2sgrad.grad(fn, argnums=1), argnums=1)(model, X),
                               hessian, rtol=1e-8, atol=1e-12)
    other = k.LinearModel(k.W0 * 2.0, k.B0 - 1.0)  # another instance: its own arrays read
    got = s2sgrad.grad(fn, argnums=1)(other, X)
    with autograd_numpy():
        np.testing.assert_allclose(got, autograd.grad(fn, 1)(other, X), rtol=1e-9, atol=1e-12)


def test_an_object_argument_whose_attribute_hides_a_method_is_refused():
    shadowing = k.LinearModel(k.W0, k.B0)
    shadowing.predict = lambda x: x  # an instance attribute named like the class's method
    with pytest.raises(s2sgrad.TransformError, match="cannot read this method"):
        s2sgrad.grad(k.non_differentiated_argument, argnums=1)(shadowing, X)
