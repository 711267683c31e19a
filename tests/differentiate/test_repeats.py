"""Repeated expressions computed once (s2sgrad/differentiate/repeats.py): the pass on small
programs, run before and after to show it keeps every value, and where it must leave code alone;
then the second-order code it shortens, checked against autograd."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.differentiate.repeats import without_repeats
from s2sgrad.program import Nest, lift, render


def _run(lines, x):
    scope = {"np": np, "x": np.array(x, dtype=float)}
    exec("\n".join(render(lift(lines), "")), scope)
    return {k: v for k, v in scope.items() if k not in ("np", "__builtins__")}


def _pass(lines):
    return render(without_repeats(lift(lines), ["x"]), "")


def test_a_repeated_subexpression_moves_up_and_is_read_once():
    lines = ["a = np.exp(x) * 2.0", "c = a + 1.0", "b = np.exp(x)", "d = np.exp(x) - b"]
    out = _pass(lines)
    assert out == ["b = np.exp(x)", "a = b * 2.0", "c = a + 1.0", "d = b - b"]
    before, after = _run(lines, [0.5, -1.0]), _run(out, [0.5, -1.0])
    for name in "abcd":
        np.testing.assert_array_equal(after[name], before[name])


def test_a_repeated_whole_value_reads_the_earlier_name():
    assert _pass(["a = 1.0 - x * x", "b = 1.0 - x * x"]) == ["a = 1.0 - x * x", "b = a"]


@pytest.mark.parametrize("lines", [
    # the array is changed in place between the two: the second computes a new value
    ["v = x * 1.0", "a = np.exp(v) * 2.0", "v += 1.0", "b = np.exp(v)"],
    # through an alias: u is a view of x, and x's values change
    ["u = x.reshape(-1)", "a = np.exp(x) * 2.0", "u += 1.0", "b = np.exp(x)"],
    ["u = x[1:]", "a = np.exp(x) * 2.0", "u[0] = 3.0", "b = np.exp(x)"],
    ["v = x * 1.0", "a = np.exp(v) * 2.0", "c, v[0] = 1.0, 3.0", "b = np.exp(v)"],
    # a name bound twice
    ["v = x * 1.0", "a = np.exp(v) * 2.0", "v = x * 3.0", "b = np.exp(v)"],
    # not numpy: may have an effect or differ per call
    ["a = f(x) * 2.0", "b = f(x)"],
    ["a = np.random.normal(x) * 2.0", "b = np.random.normal(x)"],
    # cheap: a slice is a view, a name a name
    ["a = x[1:] * 2.0", "b = x[1:]"],
])
def test_left_alone_where_a_value_could_change(lines):
    assert _pass(lines) == lines


def test_a_compound_statement_between_is_a_barrier():
    code = lift(["a = np.exp(x) * 2.0"]) + (Nest(lift_header("for i in range(2):"),
                                                 lift(["x2 = x * 2.0"])),) + lift(["b = np.exp(x)"])
    assert render(without_repeats(code, ["x"]), "") == render(code, "")


def lift_header(text):
    from s2sgrad.program import header
    return header(text)


def layer_loss(w):
    W = w.reshape(3, 3)
    r = np.tanh(M @ W) @ V - Y
    return np.sum(r * r)


def layer_loss_ag(w):
    r = anp.dot(anp.tanh(anp.dot(M, anp.reshape(w, (3, 3)))), V) - Y
    return anp.sum(r * r)


RNG = np.random.default_rng(4)
M, V, Y = RNG.normal(size=(5, 3)), RNG.normal(size=3), RNG.normal(size=5)


def test_second_order_code_computes_tanhs_derivative_once():
    code = s2sgrad.source(s2sgrad.hessian(layer_loss))
    hvp = code[code.index("def layer_loss_grad_hvp"):].split("\n\n\n")[0]
    lines = [line for line in hvp.splitlines() if not line.strip().startswith("#")]
    assert sum("1.0 - tanh" in line for line in lines) == 1, hvp
    w, v = RNG.normal(size=9), RNG.normal(size=9)
    want = autograd.hessian(layer_loss_ag)(w)
    np.testing.assert_allclose(s2sgrad.hessian(layer_loss)(w), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.hvp(layer_loss, (w,), (v,))[0], want @ v, rtol=1e-9)


def method_loss(x):
    r = np.sin(x) - 0.5
    return (r * r).sum()  # an ndarray method: numpy's, so the Hessian-vector product drops it


def method_loss_ag(x):
    r = anp.sin(x) - 0.5
    return anp.sum(r * r)


def test_the_hvp_drops_the_functions_value_computed_by_a_method():
    code = s2sgrad.source(s2sgrad.hessian(method_loss))
    hvp = code[code.index("def method_loss_grad_hvp"):].split("\n\n\n")[0]
    lines = [line.strip() for line in hvp.splitlines() if not line.strip().startswith("#")]
    assert not any(".sum()" in line for line in lines), hvp
    x, v = RNG.normal(size=4), RNG.normal(size=4)
    np.testing.assert_allclose(s2sgrad.hvp(method_loss, (x,), (v,))[0],
                               autograd.hessian(method_loss_ag)(x) @ v, rtol=1e-10)
