"""Containers of differentiated values inside a differentiated function (issue 25): nested
displays (``[(W1, b1), (W2, b2)]``), dicts read by constant keys (nested too), loops over
``d.items()``, ``d.values()``, a dict's keys and a list of tuples, ``layers[i][0]``, a list of
dicts, helpers taking and returning them, and functions returning them. Each is checked in
reverse mode, forward mode, at second order and (some) at third order against autograd and
central differences."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from autograd.misc import flatten
from conftest import _rebind, assert_gradients

import s2sgrad
from s2sgrad import runtime as s2s
from s2sgrad.checks import numerical_grad
from s2sgrad.errors import TransformError

RNG = np.random.default_rng(25)
W1, W2 = RNG.normal(size=(2, 2)), RNG.normal(size=(2, 2))
B1, B2 = RNG.normal(size=2), RNG.normal(size=2)
X = RNG.normal(size=2)
ARGS = (W1, B1, W2, B2, X)


def nested_display(W1, b1, W2, b2, x):
    layers = [(W1, b1), (W2, b2)]
    h = x
    for W, b in layers:
        h = np.tanh(W @ h + b)
    return np.sum(h ** 2)


def nested_display_indexed(W1, b1, W2, b2, x):
    layers = [(W1, b1), (W2, b2)]
    h = x
    for i in range(len(layers)):
        h = np.tanh(layers[i][0] @ h + layers[i][1])
    return np.sum(h ** 2)


def nested_three_deep(W1, b1, W2, b2, x):
    t = ((W1, (b1, b2)), W2)
    return np.sum(t[0][0] @ x * t[0][1][1] + t[1] @ np.sin(t[0][1][0]))


def nested_lists_read_by_index(W1, b1, W2, b2, x):
    layers = [[W1, b1], [W2, b2]]
    return np.sum(np.tanh(layers[0][0] @ x + layers[1][1]) * (layers[1][0] @ x))


def nested_dict(W1, b1, W2, b2, x):
    q = {"l1": {"a": W1, "b": b1}, "W2": W2}
    h = np.tanh(q["l1"]["a"] @ x + q["l1"]["b"])
    return np.sum(np.tanh(q["W2"] @ h) ** 2)


def dict_items(W1, b1, W2, b2, x):
    p = {"a": W1, "b": W2 * b1}
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(np.tanh(v @ x))
    return s


def dict_values(W1, b1, W2, b2, x):
    p = {"a": W1, "b": W2}
    s = 0.0
    for v in p.values():
        s = s + np.sum(np.tanh(v @ x + b2))
    return s


def dict_keys(W1, b1, W2, b2, x):
    p = {"a": W1, "b": W2}
    s = 0.0
    for k in p:
        s = s + np.sum(np.tanh(p[k] @ x) * b1)
    return s / len(p)


def dict_of_tuples_items(W1, b1, W2, b2, x):
    p = {"l1": (W1, b1), "l2": (W2, b2)}
    h = x
    for k, (W, b) in p.items():
        h = np.sin(W @ h) + b
    return np.sum(h ** 2)


def dict_of_tuples_values(W1, b1, W2, b2, x):
    p = {"l1": (W1, b1), "l2": (W2, b2)}
    h = x
    for W, b in p.values():
        h = np.sin(W @ h) * b
    return np.sum(h ** 2)


def dict_in_branch(W1, b1, W2, b2, x):
    if np.sum(x) > 0:
        p = {"W": W1, "b": b1}
    else:
        p = {"W": W2, "b": b2}
    return np.sum(np.tanh(p["W"] @ x + p["b"]) ** 2)


def list_of_dicts(W1, b1, W2, b2, x):
    layers = [{"W": W1, "b": b1}, {"W": W2, "b": b2}]
    h = x
    for layer in layers:
        h = np.tanh(layer["W"] @ h + layer["b"])
    return np.sum(h ** 2)


def zip_names_layers(W1, b1, W2, b2, x):
    layers = [(W1, b1), (W2, b2)]
    scales = [1.0, 2.0]
    h = x
    for scale, (W, b) in zip(scales, layers):
        h = np.tanh(scale * (W @ h) + b)
    return np.sum(h * h)


def dict_of_numbers(W1, b1, W2, b2, x):
    p = {"s": np.sum(W1 * W2), "t": np.sum(b1 * b2 * x)}
    total = 0.0
    for v in p.values():
        total = total + v * v
    return total


def layer_apply(layer, h):
    return np.tanh(layer["W"] @ h + layer["b"])


def helper_takes_dicts(W1, b1, W2, b2, x):
    layers = [{"W": W1, "b": b1}, {"W": W2, "b": b2}]
    h = x
    for layer in layers:
        h = layer_apply(layer, h)
    return np.sum(h ** 2)


def walk_items(p, x):
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(np.cos(v @ x))
    return s


def helper_walks_items(W1, b1, W2, b2, x):
    return walk_items({"a": W1, "b": W2 * b1}, x)


def walk_keys(p, x):
    s = 0.0
    for k in p:  # a parameter indexed by the loop's target: walked by its keys
        s = s + np.sum(np.cos(p[k] @ x))
    return s


def helper_walks_keys(W1, b1, W2, b2, x):
    return walk_keys({"a": W1, "b": W2 * b1}, x)


def make_params(W1, b1):
    return {"W": W1 * 2.0, "b": b1}


def helper_returns_dict(W1, b1, W2, b2, x):
    p = make_params(W1, b1)
    return np.sum(np.tanh(p["W"] @ x + p["b"]) ** 2)


def make_layers(W1, b1, W2, b2):
    return [(W1, b1), (W2 * 1.5, b2)]


def run_layers(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(W @ h + b)
    return h


def apply_layers_indexed(layers, x):
    h = x
    for i in range(len(layers)):
        h = np.tanh(layers[i][0] @ h + layers[i][1])
    return h


def helper_list_of_tuples(W1, b1, W2, b2, x):
    # the helpers' parameter is a list of tuples of arrays of two shapes (they do not stack)
    return np.sum(run_layers(make_layers(W1, b1, W2, b2), x) ** 2)


def helper_list_of_tuples_indexed(W1, b1, W2, b2, x):
    return np.sum(apply_layers_indexed(make_layers(W1, b1, W2, b2), x) ** 2)


CASES = [nested_display, nested_display_indexed, nested_three_deep, nested_lists_read_by_index,
         nested_dict, dict_items, dict_values, dict_keys, dict_of_tuples_items,
         dict_of_tuples_values, dict_in_branch, list_of_dicts, zip_names_layers, dict_of_numbers,
         helper_takes_dicts, helper_walks_items, helper_walks_keys, helper_returns_dict,
         helper_list_of_tuples, helper_list_of_tuples_indexed]
ALL = (0, 1, 2, 3, 4)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_reverse_mode(fn):
    got = assert_gradients(fn, *ARGS, argnums=ALL)
    assert any(np.any(g != 0) for g in got)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_forward_mode(fn):
    tangents = tuple(RNG.normal(size=np.shape(a)) for a in ARGS)
    value, tangent = s2sgrad.jvp(fn, ARGS, tangents)
    full = autograd.grad(_rebind(fn), list(ALL))(*ARGS)
    np.testing.assert_allclose(value, fn(*ARGS), rtol=1e-12)
    np.testing.assert_allclose(tangent, sum(np.sum(g * t) for g, t in zip(full, tangents)),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_second_order(fn):
    for argnum in (0, 1):  # a matrix and a vector inside the containers
        got = s2sgrad.hessian(fn, argnums=argnum)(*ARGS)
        want = autograd.hessian(_rebind(fn), argnum)(*ARGS)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    s2sgrad.check_grads(fn, ARGS, order=2)  # Hessian-vector products against differences


def third_nested(x):
    layers = [(x[:2], x[2]), (x[1:], x[0])]
    s = 0.0
    for a, c in layers:
        s = s + np.sum(np.sin(a) * c)
    return s


def third_dicts(x):
    p = {"u": x[:2], "v": {"w": x[1:] * x[0]}}
    s = np.sum(np.tanh(p["u"]) * p["v"]["w"])
    for k, v in p.items():
        if k == "u":
            s = s + np.sum(np.cos(v) * x[2])
    return s


def cos_of_items(p):
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(np.cos(v))
    return s


def third_helper(x):
    return cos_of_items({"a": np.outer(x[:2], x[1:]), "b": x * x[0]})


@pytest.mark.slow  # 6-10 s each: the slow tier (CI runs it)
@pytest.mark.parametrize("fn", [third_nested, third_dicts, third_helper], ids=lambda f: f.__name__)
def test_third_order(fn):
    x = np.array([0.3, -0.8, 0.5])
    want = autograd.jacobian(autograd.hessian(_rebind(fn)))(x)
    got = s2sgrad.jacrev(s2sgrad.jacrev(s2sgrad.grad(fn)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    # and the third derivative along a direction against differences of Hessians
    t, eps = np.array([0.2, -0.4, 0.7]), 1e-5
    hess = s2sgrad.hessian(fn)
    np.testing.assert_allclose(np.tensordot(got, t, axes=1),
                               (hess(x + eps * t) - hess(x - eps * t)) / (2 * eps),
                               rtol=1e-5, atol=1e-6)


def returns_dict(W1, x):
    h = np.tanh(W1 @ x)
    return {"out": np.sum(h ** 2), "h": h}


def returns_tuple_of_tuples(W1, x):
    h = np.tanh(W1 @ x)
    return ((h, np.sin(h)), np.sum(h))


def returns_list_of_dicts(W1, x):
    h = np.tanh(W1 @ x)
    return [{"a": h}, {"a": h * 2.0}]


def _structure(value):
    """The containers of ``value`` with every leaf replaced by None."""
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_structure(v) for v in value)
    return None


@pytest.mark.parametrize("fn, cotangent", [
    (returns_dict, {"out": 1.3, "h": RNG.normal(size=2)}),
    (returns_tuple_of_tuples, ((RNG.normal(size=2), RNG.normal(size=2)), 0.7)),
    (returns_list_of_dicts, [{"a": RNG.normal(size=2)}, {"a": RNG.normal(size=2)}]),
], ids=["dict", "tuple_of_tuples", "list_of_dicts"])
def test_a_returned_container_has_a_vjp_and_a_jvp_of_its_structure(fn, cotangent):
    value, pullback = s2sgrad.vjp(fn, W1, X)
    assert _structure(value) == _structure(fn(W1, X))
    got = pullback(cotangent)
    for i in (0, 1):
        want = numerical_grad(
            lambda *a: np.sum(flatten(fn(*a))[0] * flatten(cotangent)[0]), (W1, X), i)
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-8)
    tangents, eps = (RNG.normal(size=W1.shape), RNG.normal(size=X.shape)), 1e-6
    value, tangent = s2sgrad.jvp(fn, (W1, X), tangents)
    assert _structure(tangent) == _structure(value) == _structure(fn(W1, X))
    plus = fn(W1 + eps * tangents[0], X + eps * tangents[1])
    minus = fn(W1 - eps * tangents[0], X - eps * tangents[1])
    np.testing.assert_allclose(flatten(tangent)[0], (flatten(plus)[0] - flatten(minus)[0]) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


def test_a_nested_display_reads_as_written_and_each_item_gets_its_adjoint():
    # the core holds only flat displays (the inner ones named), which the generated code folds
    # back into the display as written; the backward sweep reads each item's adjoint by index
    text = s2sgrad.source(s2sgrad.grad(nested_display, argnums=(0, 1, 2, 3)))
    assert "layers = [(W1, b1), (W2, b2)]" in text
    for name in ("W1_bar", "b1_bar", "W2_bar", "b2_bar"):
        assert f"{name} = " in text


def test_dict_adjoints_add_key_by_key():
    a = s2s.list_zeros({"p": np.ones(2), "q": {"r": 1.0}})
    assert isinstance(a, s2s.Keyed)
    b = s2s.list_getitem_vjp(s2s.list_getitem_vjp(np.full(2, 2.0), {"p": 0.0, "q": 0.0}, "p"),
                             {"p": {"p": np.ones(2), "q": 0.0}, "z": 1.0}, "p")
    total = a + {"p": np.full(2, 3.0), "q": {"r": 0.5}}  # + of a Keyed adds key by key
    np.testing.assert_allclose(total["p"], [3.0, 3.0])
    assert total["q"]["r"] == 0.5
    np.testing.assert_allclose(b["p"]["p"], [2.0, 2.0])  # a dict item's adjoint added with add
    c = s2s.Keyed(p=np.ones(2))
    c += s2s.Keyed(p=np.ones(2))
    np.testing.assert_allclose(c["p"], [2.0, 2.0])
    assert 0.0 + c is c


def test_rows_of_containers_stack_into_one_adjoint_per_row():
    rows = [s2s.Parts([np.ones((2, 2)), np.ones(2)]), s2s.Parts([np.zeros((2, 2)), np.zeros(2)])]
    layers = [(np.eye(2), np.ones(2)), (np.eye(2), np.ones(2))]
    assert s2s.rows_shape(layers) == (2, None)  # the items do not stack into one array
    out = s2s.stack_rows(rows, s2s.rows_shape(layers))
    assert isinstance(out, s2s.Parts) and len(out) == 2
    np.testing.assert_allclose(out[1][0], np.ones((2, 2)))  # rows come last visited first
    short = s2s.stack_rows(rows[:1], (3, None))
    assert short[1] == 0.0 and short[2] == 0.0
    assert s2s.rows_shape(np.ones((3, 2))) == (3, 2)


def pairs_walked_unpacked_wrongly(W1, b1, W2, b2, x):
    p = {"a": W1, "b": W2}
    s = 0.0
    for item in p.items():
        s = s + np.sum(item[1] @ x)
    return s


def test_items_unpacked_into_one_name_is_refused_with_its_location():
    with pytest.raises(TransformError, match=r"unpack a dict's items into a key and a value"):
        s2sgrad.grad(pairs_walked_unpacked_wrongly)(*ARGS)
