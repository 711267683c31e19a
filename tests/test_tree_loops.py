"""Loops over pytree arguments' lists and tuples, written out per item (lower/tree_loops.py), and
the code made for the leaves' shapes (calls.TreeBuilds): every spelling of a loop over layers gives
autograd's gradient, reads each layer's own leaves (no list adjoint, no loop), and calls of other
shapes, structures or leaf types than the ones recorded get their own code."""

from __future__ import annotations

import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_trees_close as trees_close
from s2sgrad.lower.tree_loops import ITEMS_MOST
from s2sgrad.trees import tree_flatten, tree_unflatten

RNG = np.random.default_rng(7)
SIZES = (3, 5, 4, 2)
LAYERS = [(RNG.normal(size=(a, b)) * 0.5, RNG.normal(size=b) * 0.1)
          for a, b in zip(SIZES[:-1], SIZES[1:])]
SQUARE = [(RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=3) * 0.1) for _ in range(3)]
X = RNG.normal(size=(6, 3))
SCALES = (0.5, 1.5, -0.7)


def twin(fn):
    """``fn`` with ``np`` bound to autograd's numpy (the test's oracle)."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": anp}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def assert_trees_close(got, want, rtol=1e-10):
    trees_close(got, want, rtol=rtol, atol=1e-12)


def plain(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def last_apart(layers, x):
    h = x
    for W, b in layers[:-1]:
        h = np.tanh(h @ W + b)
    W, b = layers[-1]
    return np.sum((h @ W + b) ** 2)


def counted(layers, x):
    h = x
    for i, (W, b) in enumerate(layers):
        h = np.tanh(h @ W + b) * (1.0 + 0.1 * i)
    return np.sum(h ** 2)


def indexed(layers, x):
    h = x
    for i in range(len(layers)):
        W, b = layers[i]
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def next_one(layers, x):
    h = np.tanh(x @ layers[0][0] + layers[0][1])
    for i in range(len(layers) - 1):
        h = np.tanh(h @ layers[i + 1][0] + layers[i + 1][1])
    return np.sum(h ** 2)


def by_layer(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer[0] + layer[1])
    return np.sum(h ** 2)


def zipped(layers, scales, x):
    h = x
    for (W, b), s in zip(layers, scales):
        h = np.tanh(s * (h @ W) + b)
    return np.sum(h ** 2)


def backwards(layers, x):
    h = x
    for W, b in reversed(layers):
        h = np.sin(h @ W + b)
    return np.sum(h ** 2)


def nested(model, x):
    h = x
    for block in model["blocks"]:
        for W, b in block:
            h = np.tanh(h @ W + b)
    return np.sum(h ** 2) + model["scale"] * np.sum(h)


def last_item_after(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2) + np.sum(W ** 2) + np.sum(b)  # the last layer's, after the loop


def rebinds_item(layers, x):
    h = x
    for W, b in layers:
        W = W * 2.0
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def with_else(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    else:
        h = h * 3.0
    return np.sum(h ** 2)


def stops_early(layers, x):
    h = x
    for i, (W, b) in enumerate(layers):
        if i == 2:
            break
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


WRITTEN_OUT = [(plain, LAYERS), (last_apart, LAYERS), (counted, LAYERS), (indexed, LAYERS),
               (next_one, LAYERS), (by_layer, LAYERS), (backwards, SQUARE),
               (last_item_after, LAYERS), (rebinds_item, LAYERS), (with_else, LAYERS)]


@pytest.mark.parametrize("fn,layers", WRITTEN_OUT, ids=[f.__name__ for f, _ in WRITTEN_OUT])
def test_each_spelling_of_a_loop_over_layers_is_written_out_per_layer(fn, layers):
    got = s2sgrad.grad(fn)(layers, X)
    assert_trees_close(got, autograd.grad(twin(fn))(layers, X))
    vg = s2sgrad.value_and_grad(fn)
    for _ in range(3):  # the code for the leaves' shapes from the second call, recorded from the third
        value, again = vg(layers, X)
        assert_trees_close(again, got)
        np.testing.assert_allclose(value, fn(layers, X), rtol=1e-12)
    text = s2sgrad.source(vg, like=(layers, X))
    fwd = text[text.index("_fwd("):text.index("_bwd(")]
    assert "for " not in fwd.replace("# for ", "")  # no loop left: one block per layer
    assert "getitem_vjp" not in text and "unbroadcast" not in text and "s2s.add(" not in text


def test_a_loop_over_pairs_zipped_with_a_tuple_of_scales():
    got = s2sgrad.grad(zipped, argnums=(0, 1))(LAYERS, SCALES, X)
    assert_trees_close(got, autograd.grad(twin(zipped), argnum=(0, 1))(LAYERS, SCALES, X))
    assert type(got[1]) is tuple and len(got[1]) == 3


def test_nested_loops_over_a_dict_of_lists_of_pairs():
    model = {"blocks": [LAYERS[:2], [LAYERS[2]]], "scale": 0.3}
    got = s2sgrad.grad(nested)(model, X)
    assert_trees_close(got, autograd.grad(twin(nested))(model, X))
    text = s2sgrad.source(s2sgrad.grad(nested), like=(model, X))
    assert "model_blocks_1_0_0" in text and "getitem_vjp" not in text


@pytest.mark.parametrize("fn", [stops_early])
def test_a_loop_that_leaves_early_is_kept(fn):
    got = s2sgrad.grad(fn)(LAYERS, X)
    assert_trees_close(got, autograd.grad(twin(fn))(LAYERS, X))
    text = s2sgrad.source(s2sgrad.grad(fn), like=(LAYERS, X))
    assert "in enumerate(layers):" in text.replace("# for", "")  # the loop, as Python runs it


def test_a_list_longer_than_the_most_written_out_keeps_its_loop():
    many = [RNG.normal(size=3) * 0.1 for _ in range(ITEMS_MOST + 1)]

    def shifts(vs, x):
        h = x
        for v in vs:
            h = np.tanh(h + v)
        return np.sum(h ** 2)

    got = s2sgrad.grad(shifts)(many, X)
    assert_trees_close(got, autograd.grad(twin(shifts))(many, X))
    assert "for " in s2sgrad.source(s2sgrad.grad(shifts), like=(many, X)).replace("# for ", "")
    few = many[:ITEMS_MOST]
    assert_trees_close(s2sgrad.grad(shifts)(few, X), autograd.grad(twin(shifts))(few, X))


def test_a_dict_walked_by_its_items_runs_in_insertion_order():
    params = {"b": (RNG.normal(size=(3, 3)), 0.5), "a": (RNG.normal(size=(3, 3)), -1.0)}

    def ordered(p, x):
        h = x
        for name, (W, s) in p.items():
            h = np.sin(s * (h @ W))
        return np.sum(h ** 2)

    def by_keys(p, x):
        h = x
        for name in p:
            h = np.sin(p[name][1] * (h @ p[name][0]))
        return np.sum(h ** 2)

    for fn in (ordered, by_keys):
        value, got = s2sgrad.value_and_grad(fn)(params, X)
        assert_trees_close(got, autograd.grad(twin(fn))(params, X))
        np.testing.assert_allclose(value, fn(params, X), rtol=1e-12)
        assert list(got) == ["b", "a"]  # the gradient's keys in the argument's order


def test_calls_of_other_shapes_structures_and_leaf_types_get_their_own_code():
    vg = s2sgrad.value_and_grad(plain)
    wide = [(RNG.normal(size=(3, 7)) * 0.5, RNG.normal(size=7) * 0.1),
            (RNG.normal(size=(7, 2)) * 0.5, RNG.normal(size=2) * 0.1)]
    floats = [(W, float(b[0])) for W, b in SQUARE]
    calls = [LAYERS, LAYERS, LAYERS, wide, LAYERS, wide, wide, SQUARE, floats, floats, floats,
             LAYERS[:2], LAYERS[:2], LAYERS[:2], LAYERS]
    for layers in calls:
        value, got = vg(layers, X)
        assert_trees_close(got, autograd.grad(twin(plain))(layers, X))
        np.testing.assert_allclose(value, plain(layers, X), rtol=1e-12)
    assert type(vg(floats, X)[1][0][1]) is float


SHIFT = np.zeros(3)


def reads_a_global(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum((h + SHIFT) ** 2)


def test_a_global_array_of_another_shape_is_not_read_by_the_code_made_for_the_first():
    global SHIFT
    square = SQUARE
    vg = s2sgrad.value_and_grad(reads_a_global)
    try:
        for shift in (np.zeros(3), np.zeros(3), np.zeros(3), np.ones((6, 3)), np.ones((6, 3)),
                      np.full(3, 0.5)):
            SHIFT = shift
            got = vg(square, X)[1]
            assert_trees_close(got, autograd.grad(twin(reads_a_global))(square, X))
    finally:
        SHIFT = np.zeros(3)


@s2sgrad.differentiable
def decorated_layers(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def test_the_decorator_runs_the_same_records():
    want = autograd.grad(twin(plain))(LAYERS, X)
    for _ in range(3):
        assert_trees_close(decorated_layers.grad(LAYERS, X), want)
    assert_trees_close(decorated_layers.grad(SQUARE, X), autograd.grad(twin(plain))(SQUARE, X))
    value, got = decorated_layers.value_and_grad(LAYERS, X)
    assert_trees_close(got, want)


def test_comments_quote_the_loop_and_the_users_lines():
    text = s2sgrad.source(s2sgrad.grad(last_apart), like=(LAYERS, X))
    assert "# for W, b in layers[:-1]:" in text
    assert "# h = np.tanh(h @ W + b)" in text
    assert "# W, b = layers[-1]" in text


def _walks_a_nested_dict(p):
    got = []
    for key in p[0][2]:  # a dict inside the tree, walked by its keys: a chain, not a name
        got.append(p[0][2][key])
    v, w = got
    return np.sum(np.sin(v) * w) * p[0][1] + np.sum(p[0][0] ** 2)


def _calls_the_walk(q):
    return _walks_a_nested_dict(q)


@pytest.mark.parametrize("fn", [_walks_a_nested_dict, _calls_the_walk])
def test_a_dict_reached_by_a_chain_is_walked_by_its_keys_in_every_mode(fn):
    p = ((X[:2, :2], 1.5, {"k1": X[0], "k0": X[1] * 0.5}),)
    along = ((X[2:4, :2] * 0.1, -0.3, {"k1": X[3], "k0": X[4]}),)
    value, got = s2sgrad.value_and_grad(fn)(p)
    assert_trees_close(got, autograd.grad(twin(_walks_a_nested_dict))(p))
    flat, _ = tree_flatten(along)
    directional = sum(np.sum(a * b) for a, b in zip(tree_flatten(got)[0], flat))
    np.testing.assert_allclose(s2sgrad.jvp(fn, (p,), (along,))[1], directional, rtol=1e-10)
    eps = 1e-6
    step = [tuple(tree_flatten(p)[0][i] + sign * eps * flat[i] for i in range(len(flat))) for sign in (1, -1)]
    structure = tree_flatten(p)[1]
    plus, minus = (s2sgrad.grad(fn)(tree_unflatten(structure, list(s))) for s in step)
    differences = [(a - b) / (2 * eps) for a, b in zip(tree_flatten(plus)[0], tree_flatten(minus)[0])]
    product = tree_flatten(s2sgrad.hvp(fn, (p,), (along,))[0])[0]
    for a, b in zip(product, differences):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
