"""Pytree arguments (trees.py, tree_arguments.py, lower/trees.py): the programs a new user writes
first (a params dict, a list of layers, a namedtuple or dataclass model, a has_aux dict), and
random structures read every way the tree pass rewrites, each against autograd or differences."""

import dataclasses
import textwrap
from collections import namedtuple

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_trees_close
from s2sgrad.checks import numerical_grad
from s2sgrad.trees import register_pytree, tree_flatten, tree_unflatten

RNG = np.random.default_rng(3)
PARAMS = {"W1": RNG.normal(size=(3, 4)) * 0.5, "b1": RNG.normal(size=4) * 0.1,
          "W2": RNG.normal(size=(4, 2)) * 0.5}
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=(5, 2))
LAYERS = [(RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=3) * 0.1),
          (RNG.normal(size=(3, 2)) * 0.5, RNG.normal(size=2) * 0.1)]


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.mean((h @ params["W2"] - y) ** 2)


def mlp_loss_autograd(params, x, y):
    h = anp.tanh(anp.dot(x, params["W1"]) + params["b1"])
    return anp.mean((anp.dot(h, params["W2"]) - y) ** 2)


def layers_loss(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def layers_loss_autograd(layers, x):
    h = x
    for W, b in layers:
        h = anp.tanh(anp.dot(h, W) + b)
    return anp.sum(h ** 2)


def test_an_mlp_with_a_params_dict_matches_autograd():
    got = s2sgrad.grad(mlp_loss)(PARAMS, X, Y)
    assert_trees_close(got, autograd.grad(mlp_loss_autograd)(PARAMS, X, Y))
    value, again = s2sgrad.value_and_grad(mlp_loss)(PARAMS, X, y=Y)
    assert value == pytest.approx(mlp_loss(PARAMS, X, Y))
    assert_trees_close(again, got)


def test_the_generated_code_names_leaves_by_their_keys():
    text = s2sgrad.source(s2sgrad.grad(mlp_loss))  # the code for arrays there, read as arrays
    assert "def mlp_loss_fwd(params, x, y)" in text
    from s2sgrad.pipeline import Options, generate
    from s2sgrad.read.capture import from_function

    trees = (("params", tree_flatten(PARAMS)[1]),)
    text = generate(from_function(mlp_loss), Options(wrt=("params",), trees=trees)).text
    assert "def mlp_loss_fwd(params_W1, params_W2, params_b1, x, y)" in text
    assert "x @ params_W1" in text and 'params["W1"]' not in text.split("def mlp_loss_fwd")[1]


def test_a_list_of_layers_matches_autograd_at_first_and_second_order():
    got = s2sgrad.grad(layers_loss)(LAYERS, X)
    assert type(got) is list and all(type(layer) is tuple for layer in got)
    assert_trees_close(got, autograd.grad(layers_loss_autograd)(LAYERS, X))
    hess = s2sgrad.hessian(layers_loss)(LAYERS, X)
    flat, structure = tree_flatten(LAYERS)
    sizes = [np.size(leaf) for leaf in flat]
    full = autograd.hessian(lambda v: layers_loss_autograd(_unpack(v, flat, structure), X))(
        np.concatenate([np.ravel(leaf) for leaf in flat]))
    offsets = np.cumsum([0] + sizes)
    for a in range(len(flat)):
        for b in range(len(flat)):
            block = hess[a // 2][a % 2][b // 2][b % 2]
            expected = full[offsets[a]:offsets[a + 1], offsets[b]:offsets[b + 1]]
            np.testing.assert_allclose(np.reshape(block, expected.shape), expected, rtol=1e-6, atol=1e-9)


def _unpack(vector, flat, structure):
    leaves, start = [], 0
    for leaf in flat:
        leaves.append(anp.reshape(vector[start:start + np.size(leaf)], np.shape(leaf)))
        start += np.size(leaf)
    return tree_unflatten(structure, leaves)


Layer = namedtuple("Layer", "W b")


@dataclasses.dataclass
class Model:
    W: np.ndarray
    b: np.ndarray
    scale: float


def model_loss(model, x):
    return np.sum(np.tanh(x @ model.W + model.b) * model.scale)


def namedtuple_loss(layer, x):
    return np.sum(np.tanh(x @ layer.W + layer[1]) ** 2)


def _flat_grad(fn, tree, *rest):
    leaves, structure = tree_flatten(tree)

    def flat(*xs):
        return fn(tree_unflatten(structure, list(xs)), *rest)
    return tree_unflatten(structure, [numerical_grad(flat, tuple(leaves), i) for i in range(len(leaves))])


@pytest.mark.parametrize("fn, tree", [
    (model_loss, Model(LAYERS[0][0], LAYERS[0][1], 1.5)),
    (namedtuple_loss, Layer(*LAYERS[0])),
])
def test_a_dataclass_and_a_namedtuple_get_gradients_of_their_type(fn, tree):
    got = s2sgrad.grad(fn)(tree, X)
    assert type(got) is type(tree)
    assert_trees_close(got, _flat_grad(fn, tree, X), rtol=1e-5, atol=1e-7)


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


register_pytree(Pair, lambda p: ((p.a, p.b), None), lambda aux, children: Pair(*children))


def pair_loss(p, x):
    return np.sum(x * p)  # a registered node read whole: refused where it is used


def test_a_registered_node_used_whole_is_refused_where_it_is_used():
    with pytest.raises(s2sgrad.TransformError, match=r"`p` is a Pair \(a pytree node\) used whole"):
        s2sgrad.grad(pair_loss)(Pair(np.ones(2), np.ones(2)), np.ones(2))


def pair_fields_loss(p, x):
    return np.sum(np.tanh(x * p.a) * p.b) + np.sum(p.a ** 3)  # the node's children by attribute


def pair_fields_loss_ag(a, b, x):
    return anp.sum(anp.tanh(x * a) * b) + anp.sum(a ** 3)


def test_a_registered_node_is_read_by_the_attributes_its_children_are():
    """``p.a`` of a registered class whose flatten returns ``(p.a, p.b)``: the child that is that
    attribute (matched by identity when flattened); the gradient and Hessian come back as Pairs."""
    a, b, x = np.linspace(-0.5, 0.5, 3), np.linspace(0.2, 1.0, 3), np.linspace(1.0, 2.0, 3)
    got = s2sgrad.grad(pair_fields_loss)(Pair(a, b), x)
    assert type(got) is Pair
    want = autograd.grad(pair_fields_loss_ag, (0, 1))(a, b, x)
    np.testing.assert_allclose(got.a, want[0], rtol=1e-12)
    np.testing.assert_allclose(got.b, want[1], rtol=1e-12)
    hessian = s2sgrad.hessian(pair_fields_loss)(Pair(a, b), x)
    assert type(hessian) is Pair and type(hessian.a) is Pair
    np.testing.assert_allclose(hessian.a.b, autograd.jacobian(autograd.grad(pair_fields_loss_ag, 0), 1)(a, b, x),
                               rtol=1e-10, atol=1e-12)


class Scaled:
    def __init__(self, w):
        self.w = w


register_pytree(Scaled, lambda s: ((s.w * 2.0,), None), lambda aux, children: Scaled(children[0] / 2.0))


def scaled_loss(s):
    return np.sum(s.w ** 2)


def test_a_registered_node_whose_children_are_not_its_attributes_is_refused_where_it_is_read():
    with pytest.raises(s2sgrad.TransformError, match=r"`s` is a Scaled \(a pytree node\) used whole"):
        s2sgrad.grad(scaled_loss)(Scaled(np.ones(2)))


def aux_loss(params, x):
    h = np.tanh(x @ params["W1"])
    return np.sum(h ** 2), {"h": h, "norm": np.sum(params["W1"] ** 2)}


def test_has_aux_returns_a_dict():
    g, aux = s2sgrad.grad(aux_loss, has_aux=True)(PARAMS, X)
    assert set(aux) == {"h", "norm"} and set(g) == set(PARAMS)
    assert_trees_close(g, autograd.grad(lambda p: anp.sum(anp.tanh(anp.dot(X, p["W1"])) ** 2))(PARAMS))


def test_jacobians_and_vjp_jvp_of_a_dict_argument():
    def f(params, x):
        return np.tanh(x @ params["W1"] + params["b1"])
    small = {"W1": PARAMS["W1"], "b1": PARAMS["b1"]}
    fwd = s2sgrad.jacfwd(f)(small, X)
    rev = s2sgrad.jacrev(f)(small, X)
    assert set(fwd) == {"W1", "b1"} and fwd["W1"].shape == (5, 4, 3, 4)
    assert_trees_close(fwd, rev)
    assert_trees_close(fwd, {
        "W1": autograd.jacobian(lambda w: anp.tanh(anp.dot(X, w) + small["b1"]))(small["W1"]),
        "b1": autograd.jacobian(lambda b: anp.tanh(anp.dot(X, small["W1"]) + b))(small["b1"])})
    tangent = {"W1": np.ones((3, 4)), "b1": np.ones(4)}
    out, out_dot = s2sgrad.jvp(f, (small, X), (tangent, np.zeros_like(X)))
    np.testing.assert_allclose(out_dot, np.einsum("ijkl,kl->ij", fwd["W1"], tangent["W1"])
                               + np.einsum("ijk,k->ij", fwd["b1"], tangent["b1"]), rtol=1e-6)
    out, pullback = s2sgrad.vjp(f, small, X)
    ct = RNG.normal(size=out.shape)
    (g_small, g_x) = pullback(ct)
    np.testing.assert_allclose(g_small["W1"], np.einsum("ij,ijkl->kl", ct, fwd["W1"]), rtol=1e-6)


# Random structures: nested dicts, lists, tuples and None around arrays and floats, read by
# constant keys (rewritten to the leaf's name), by loops and by whole displays passed on.
def _random_tree(rng, depth):
    kind = rng.choice(["leaf", "leaf", "dict", "list", "tuple"] if depth else ["leaf"])
    if kind == "leaf":
        return RNG.normal(size=tuple(rng.integers(1, 3, size=rng.integers(0, 2)))) \
            if rng.random() < 0.8 else float(rng.normal())
    n = int(rng.integers(1, 3))
    children = [_random_tree(rng, depth - 1) for _ in range(n)]
    if kind == "dict":
        return {f"k{i}": c for i, c in enumerate(children)}
    return children if kind == "list" else tuple(children)


def _reads(tree, text):
    """Expressions reading each leaf of ``tree`` (spelled ``text``) by constant keys."""
    if isinstance(tree, dict):
        return [r for k in tree for r in _reads(tree[k], f"{text}[{k!r}]")]
    if isinstance(tree, (list, tuple)):
        return [r for i, c in enumerate(tree) for r in _reads(c, f"{text}[{i}]")]
    return [text]


@pytest.mark.parametrize("seed", range(12))
def test_random_structures_read_by_keys_match_differences(seed, tmp_path, monkeypatch):
    rng = np.random.default_rng(seed)
    tree = {"a": _random_tree(rng, 3), "b": [_random_tree(rng, 2), _random_tree(rng, 2)]}
    reads = _reads(tree, "t")
    terms = [f"np.sum(np.sin({r}) * {i + 1}.0)" for i, r in enumerate(reads)]
    whole = "helper(t['b'])" if seed % 2 else "0.0"  # the list passed on whole: a display
    source = textwrap.dedent(f"""
        import numpy as np


        def helper(items):
            total = 0.0
            for item in items:
                total = total + 0.0
            return total


        def loss(t, scale):
            return scale * ({' + '.join(terms)}) + {whole}
        """)
    path = tmp_path / f"tree_prog_{seed}.py"
    path.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(f"tree_prog_{seed}")
    got = s2sgrad.grad(module.loss)(tree, 1.3)
    assert_trees_close(got, _flat_grad(module.loss, tree, 1.3), rtol=1e-5, atol=1e-6)
    if seed % 3 == 0:  # second order: the Hessian's diagonal block against differences of gradients
        hess = s2sgrad.hessian(module.loss)(tree, 1.3)
        leaves, structure = tree_flatten(tree)
        first = tree_flatten(hess)[0]
        assert len(first) == len(leaves) ** 2


def test_check_grads_checks_each_leaf_of_a_pytree_in_every_mode():
    s2sgrad.check_grads(mlp_loss, (PARAMS, X, Y), argnums=(0,), order=2, modes=("rev", "fwd"),
                        rtol=1e-4)
    s2sgrad.check_grads(layers_loss, (LAYERS, X), order=2, modes=("rev", "fwd"), rtol=1e-4)


def wrong_second_derivative(params, x):
    return np.sum(np.sin(s2sgrad.stop_gradient(params["w"]) * x) * params["w"])


def test_check_grads_with_a_pytree_names_the_leaf_that_disagrees():
    # a gradient that is not the derivative: the reverse-mode check names the leaf by its path
    params = {"w": np.array([0.3, -0.2]), "unused": np.array(1.0)}
    with pytest.raises(s2sgrad.GradientError, match=r"argument 0\['w'\]"):
        s2sgrad.check_grads(wrong_second_derivative, (params, np.array([0.5, 2.0])), argnums=(0,))


def dict_output(x):
    return {"a": np.sin(x), "b": (x ** 2, np.sum(x))}


@pytest.mark.parametrize("jacobian", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_the_jacobian_of_a_dict_output_has_the_outputs_structure_outermost(jacobian):
    x = np.array([0.1, 0.2, 0.3])
    got = jacobian(dict_output)(x)
    assert set(got) == {"a", "b"} and type(got["b"]) is tuple
    np.testing.assert_allclose(got["a"], np.diag(np.cos(x)))
    np.testing.assert_allclose(got["b"][0], np.diag(2 * x))
    np.testing.assert_allclose(got["b"][1], np.ones(3))
    both = jacobian(lambda p: {"o": p["u"] * p["w"]})({"u": x, "w": 2.0})
    np.testing.assert_allclose(both["o"]["u"], 2.0 * np.eye(3))
    np.testing.assert_allclose(both["o"]["w"], x)


def dict_of_two(x, y):
    return {"p": np.sin(x) * y, "q": (np.sum(x * y), np.cos(y[:2]))}


def dict_of_two_ag(x, y, key):
    out = {"p": anp.sin(x) * y, "q0": anp.sum(x * y), "q1": anp.cos(y[:2])}
    return out[key]


@pytest.mark.parametrize("jacobian", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_a_dict_output_with_a_tuple_argnums_is_laid_out_outputs_first(jacobian):
    x, y = np.array([0.1, 0.2, 0.3]), np.array([0.5, -0.4, 1.1])
    got = jacobian(dict_of_two, argnums=(0, 1))(x, y)
    leaves = {"p": got["p"], "q0": got["q"][0], "q1": got["q"][1]}
    for key, blocks in leaves.items():
        assert type(blocks) is tuple and len(blocks) == 2
        for i in (0, 1):
            np.testing.assert_allclose(blocks[i], autograd.jacobian(dict_of_two_ag, i)(x, y, key),
                                       rtol=1e-12, atol=1e-14)
    # the function s2sgrad returns runs the generated Jacobian function it shows
    name = "dict_of_two_jacfwd" if jacobian is s2sgrad.jacfwd else "dict_of_two_jacrev"
    assert f"def {name}(x, y):" in s2sgrad.source(jacobian(dict_of_two, argnums=(0, 1)))


def _tree_allclose(got, want):
    assert_trees_close(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("jacobian", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_a_jacobian_of_a_gradient_given_pytrees_is_the_hessian_in_jax_layout(jacobian):
    hessian = s2sgrad.hessian(mlp_loss)(PARAMS, X, Y)
    _tree_allclose(jacobian(s2sgrad.grad(mlp_loss))(PARAMS, X, Y), hessian)
    flat = autograd.hessian(lambda w1: mlp_loss_autograd(dict(PARAMS, W1=w1), X, Y))(PARAMS["W1"])
    np.testing.assert_allclose(hessian["W1"]["W1"], flat, rtol=1e-9, atol=1e-12)
    value, blocks = jacobian(s2sgrad.value_and_grad(mlp_loss))(PARAMS, X, Y)
    _tree_allclose(blocks, hessian)
    _tree_allclose(value, autograd.grad(mlp_loss_autograd)(PARAMS, X, Y))
    # a list of (W, b) records, with a tuple argnums
    both = s2sgrad.hessian(layers_loss, argnums=(0, 1))(LAYERS, X)
    _tree_allclose(jacobian(s2sgrad.grad(layers_loss, argnums=(0, 1)), argnums=(0, 1))(LAYERS, X),
                   both)


def test_gradients_of_other_arguments_and_jvp_of_a_gradient_given_pytrees():
    hessian = s2sgrad.hessian(mlp_loss, argnums=(0, 1))(PARAMS, X, Y)
    by_params = s2sgrad.jacfwd(s2sgrad.grad(mlp_loss, argnums=(0, 1)))(PARAMS, X, Y)
    # JAX's layout: hessian[i] a tree of argument i's structure, each leaf a tuple per argument j
    _tree_allclose(by_params, ({key: blocks[0] for key, blocks in hessian[0].items()},
                               hessian[1][0]))
    # JAX's Hessian-vector product idiom: jvp of the gradient, the tangent a tree like params
    along = {key: np.cos(value) for key, value in PARAMS.items()}
    gradient, product = s2sgrad.jvp(s2sgrad.grad(mlp_loss), (PARAMS, X, Y),
                                    (along, np.zeros_like(X), np.zeros_like(Y)))
    _tree_allclose(gradient, s2sgrad.grad(mlp_loss)(PARAMS, X, Y))
    _tree_allclose(product, s2sgrad.hvp(lambda p: mlp_loss(p, X, Y), (PARAMS,), (along,))[0])
    # and by reverse mode: vjp of the gradient, the cotangent a tree like params
    gradient, pullback = s2sgrad.vjp(s2sgrad.grad(mlp_loss), PARAMS, X, Y)
    _tree_allclose(gradient, s2sgrad.grad(mlp_loss)(PARAMS, X, Y))
    by_params, by_x, by_y = pullback(along)
    _tree_allclose(by_params, product)  # the Hessian is symmetric
    mixed = sum(np.tensordot(along[key], hessian[0][key][1], axes=np.ndim(along[key]))
                for key in PARAMS)  # sum over the params' leaves of v . d(grad_p)/dx
    np.testing.assert_allclose(by_x, mixed, rtol=1e-9, atol=1e-12)
    assert by_y.shape == Y.shape
    value_tangent, _ = s2sgrad.jvp(s2sgrad.value_and_grad(mlp_loss), (PARAMS, X, Y),
                                   (along, np.zeros_like(X), np.zeros_like(Y)))
    np.testing.assert_allclose(value_tangent[0], mlp_loss(PARAMS, X, Y), rtol=1e-12)


def test_transforming_again_a_function_given_pytrees_is_refused_where_not_read():
    gradient = s2sgrad.grad(mlp_loss)
    with pytest.raises((s2sgrad.TransformError, s2sgrad.GradientError), match="pytree"):
        s2sgrad.jacfwd(gradient, argnums=1)(PARAMS, X, Y)  # other arguments than grad's
    with pytest.raises(s2sgrad.TransformError, match="called here with pytree arguments"):
        s2sgrad.jacfwd(s2sgrad.grad(mlp_loss, argnums=(0, 1)), argnums=2)(PARAMS, X, {"y": Y})

    def through(params):  # a function of yours calling it with the dict, differentiated
        return np.sum(gradient(params, X, Y)["W1"] ** 2)
    with pytest.raises(s2sgrad.GradientError, match="reached generated code made for an array"):
        s2sgrad.grad(through)(PARAMS)


def loop_over_records(layers, x):
    h = x
    for W, b in layers:  # records-loop
        h = np.tanh(h @ W + b)
    return np.sum(h)


def walk_records_by_counter(layers, x):
    h, k = x, 0
    while k < len(layers):
        W, b = layers[k]  # records-walk
        h = np.tanh(h @ W + b)
        k += 1
    return np.sum(h)


def test_a_list_of_namedtuples_walked_whole_is_refused_at_the_walk():
    records = [Layer(*LAYERS[0]), Layer(*LAYERS[1])]
    with pytest.raises(s2sgrad.TransformError, match=r"`layers_0` is a Layer \(a pytree node\) used whole") as info:
        s2sgrad.grad(walk_records_by_counter)(records, X)
    assert "while k < len(layers):" in str(info.value)  # its first use
    got = s2sgrad.grad(lambda ls, x: np.sum(np.tanh(x @ ls[0].W + ls[0].b) @ ls[1].W))(records, X)
    assert type(got) is list and type(got[0]) is Layer and np.all(got[1].b == 0.0)


def test_a_loop_over_a_list_of_namedtuples_reads_their_fields_in_order():
    records = [Layer(*LAYERS[0]), Layer(*LAYERS[1])]
    got = s2sgrad.grad(loop_over_records)(records, X)
    want = s2sgrad.grad(loop_over_records)([tuple(layer) for layer in LAYERS], X)
    assert type(got) is list and type(got[0]) is Layer
    for layer, expected in zip(got, want):
        np.testing.assert_allclose(layer.W, expected[0], rtol=1e-12)
        np.testing.assert_allclose(layer.b, expected[1], rtol=1e-12)
    expected = autograd.grad(_records_autograd)(LAYERS, X)
    assert_trees_close([list(w) for w in want], [list(e) for e in expected], rtol=1e-10)


def _records_autograd(layers, x):
    h = x
    for W, b in layers:
        h = anp.tanh(anp.dot(h, W) + b)
    return anp.sum(h)


def test_dict_keys_of_several_types_flatten_in_a_fixed_order():
    leaves, structure = tree_flatten({1: 2.0, "a": 3.0, (0, 1): 4.0})
    assert tree_unflatten(structure, leaves) == {1: 2.0, "a": 3.0, (0, 1): 4.0}
    assert structure.keys == (1, "a", (0, 1))


@s2sgrad.differentiable
def decorated_mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.mean((h @ params["W2"] - y) ** 2)  # mlp_loss's body


def test_the_decorators_gradient_given_pytrees_is_transformed_again():
    hessian = s2sgrad.hessian(mlp_loss)(PARAMS, X, Y)
    _tree_allclose(s2sgrad.jacfwd(decorated_mlp_loss.grad)(PARAMS, X, Y), hessian)
    value, blocks = s2sgrad.jacrev(decorated_mlp_loss.value_and_grad)(PARAMS, X, Y)
    _tree_allclose(blocks, hessian)


# jacfwd of jacfwd in the default tier; the other three pairs (6-7 s each) in the slow one
@pytest.mark.parametrize("outer, inner", [
    (s2sgrad.jacfwd, s2sgrad.jacfwd),
    pytest.param(s2sgrad.jacfwd, s2sgrad.jacrev, marks=pytest.mark.slow),
    pytest.param(s2sgrad.jacrev, s2sgrad.jacfwd, marks=pytest.mark.slow),
    pytest.param(s2sgrad.jacrev, s2sgrad.jacrev, marks=pytest.mark.slow)],
    ids=["jacfwd-jacfwd", "jacfwd-jacrev", "jacrev-jacfwd", "jacrev-jacrev"])  # outer-inner
def test_a_jacobian_of_a_jacobian_given_pytrees_is_the_hessian(outer, inner):
    """JAX's jacfwd(jacrev(f)) habit with a params dict and a list of layers: the function jacfwd
    or jacrev returned is transformed again per structure (its value's structure read from f)."""
    _tree_allclose(outer(inner(mlp_loss))(PARAMS, X, Y), s2sgrad.hessian(mlp_loss)(PARAMS, X, Y))
    _tree_allclose(outer(inner(layers_loss))(LAYERS, X), s2sgrad.hessian(layers_loss)(LAYERS, X))
