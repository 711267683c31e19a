"""Lists appended in a loop cost O(1) a step (issue 28), never a different gradient.

The forward sweep appends in place where no version an append replaces is observed later
(differentiate/growth.append_in_place); the backward sweep pops each append's adjoint from the
adjoint list it owns (growth.pop_in_place, s2s.split_last). Every function of
tests/inputs/growth_inputs.py is checked against autograd and central differences, the ones
that observe an older version of their list too (they keep the copying code), and the generated
loops' structure is checked with ast (no list copy per step where it is safe)."""

import ast

import autograd
import numpy as np
import pytest
import growth_inputs as gi
from conftest import _rebind, assert_gradients

import s2sgrad
from s2sgrad import jacobians

X = np.array([0.7, -1.1, 0.4, 1.3])

GRADIENTS = ["cumprod_loss", "last_item_read", "length_read", "stacked_inside", "stacked_before_append",
             "passed_to_function", "alias_before_loop", "alias_read_inside", "lists_of_lists",
             "appended_in_branches", "while_loop", "nested_loops", "comprehension", "summed_list",
             "two_loops_into_one_list"]


@pytest.mark.parametrize("name", GRADIENTS)
@pytest.mark.parametrize("n", [1, 6])
def test_gradients_of_lists_grown_in_loops(name, n):
    fn = getattr(gi, name)
    assert_gradients(fn, X, n, argnums=(0,))
    # the generated code runs again on fresh lists (nothing of one call's lists is kept)
    first = s2sgrad.grad(fn)(X, n)
    np.testing.assert_array_equal(s2sgrad.grad(fn)(X, n), first)


@pytest.mark.parametrize("name", ["cumprod_loss", "appended_in_branches", "lists_of_lists", "while_loop"])
def test_second_order_reads_the_in_place_code_again(name):
    fn = getattr(gi, name)
    expected = autograd.hessian(_rebind(fn))(X, 4)
    np.testing.assert_allclose(s2sgrad.hessian(fn)(X, 4), expected, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(s2sgrad.jacfwd(s2sgrad.grad(fn))(X, 4), expected, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(s2sgrad.jacrev(s2sgrad.grad(fn))(X, 4), expected, rtol=1e-7, atol=1e-10)


def _functions(source: str) -> dict:
    return {node.name: node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


def _loop_bodies(fn: ast.FunctionDef) -> list:
    return [node for node in ast.walk(fn) if isinstance(node, (ast.For, ast.While))]


def _list_copies(node: ast.AST) -> list:
    """``a + [v]`` (a new list a step) and ``g[:-1]`` (a copy of an adjoint list)."""
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Add) and isinstance(sub.right, ast.List):
            out.append(ast.unparse(sub))
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Slice):
            out.append(ast.unparse(sub))
    return out


def _calls(node: ast.AST, attr: str) -> list:
    return [sub for sub in ast.walk(node) if isinstance(sub, ast.Call) and
            isinstance(sub.func, ast.Attribute) and sub.func.attr == attr]


def _sweeps(fn) -> tuple:
    functions = _functions(s2sgrad.source(s2sgrad.grad(fn)))
    name = fn.__name__
    return functions[f"{name}_fwd"], functions[f"{name}_bwd"]


@pytest.mark.parametrize("name", ["cumprod_loss", "appended_in_branches", "while_loop", "comprehension",
                                  "length_read", "summed_list"])
def test_a_safe_loop_copies_no_list_per_step(name):
    forward, backward = _sweeps(getattr(gi, name))
    for loop in _loop_bodies(forward) + _loop_bodies(backward):
        assert _list_copies(loop) == [], ast.unparse(loop)
    appends = [c for c in _calls(forward, "append") if "tape" not in ast.unparse(c.func.value)]
    assert appends, "the forward sweep appends in place"
    pops = _calls(backward, "split_last")
    assert pops and all(isinstance(c.args[0], ast.Name) for c in pops), [ast.unparse(c) for c in pops]
    for loop in _loop_bodies(backward):  # the adjoint list is copied once, where it is made
        assert _calls(loop, "owned") == [], ast.unparse(loop)


@pytest.mark.parametrize("name", ["stacked_inside", "stacked_before_append", "passed_to_function",
                                  "last_item_read", "alias_read_inside", "nested_loops"])
def test_a_list_observed_before_a_later_append_keeps_its_copies(name):
    # the list (or an older version of it) is recorded on the tape, passed to a function or
    # saved before an inner loop: appending in place would change what those hold
    forward, _ = _sweeps(getattr(gi, name))
    copies = [c for loop in _loop_bodies(forward) for c in _list_copies(loop)]
    assert copies, ast.unparse(forward)


@pytest.mark.parametrize("name, holder", [("stored_then_appended", "rows"), ("empty_alias_read_after", "prev")])
def test_a_list_changed_in_place_that_another_name_holds_is_refused(name, holder):
    # rows.append(out) then out.append(v): rows holds out itself, so Python's rows sees every
    # later append (the copying lowering gave a wrong gradient in silence); `prev = []` was no
    # object at all to the aliasing pass
    with pytest.raises(s2sgrad.TransformError, match=rf"`{holder}`"):
        s2sgrad.grad(getattr(gi, name))(X, 3)


def test_lists_of_lists_made_anew_each_trip_are_accepted():
    # each trip's `row = []` is a new list: rows holds the finished ones, never changed again
    assert_gradients(gi.lists_of_lists, X, 4, argnums=(0,))
    forward, _ = _sweeps(gi.lists_of_lists)
    assert any(ast.unparse(c.func.value) == "rows" for c in _calls(forward, "append"))


def test_split_stack_of_a_broadcast_adjoint_copies_one_slice_per_input():
    # np.take of one index copied all of a broadcast adjoint first (O(n) per input, quadratic in
    # the steps of every list stacked after a loop); each input's adjoint is its own array still
    from s2sgrad import runtime as s2s

    g = np.broadcast_to(np.arange(3.0), (5, 3))
    parts = s2s.split_stack(g, [None] * 5)
    assert len(parts) == 5 and all(np.array_equal(p, np.arange(3.0)) for p in parts)
    parts[0] += 1.0  # writable, shares nothing with the others
    np.testing.assert_array_equal(parts[1], np.arange(3.0))
    columns = s2s.split_stack(np.broadcast_to(2.0, (4, 6)), [None] * 6, axis=-1)
    assert len(columns) == 6 and all(np.array_equal(c, np.full(4, 2.0)) for c in columns)


# Differentiated twice by each way of the Hessian-vector product: ``unpacked_then_called_twice``
# (reverse mode over forward mode reads the forward-mode code again, which reads the list an
# append extended after the append: ``got_2 = got + [x]`` then ``s2s.zeros_like(got)``; in place,
# that read saw the longer list and the product's part through the list was zero: property seed
# 195 of the tree loops), ``list_made_in_a_loop`` (its forward-mode tangent is a number before
# the loop: property seed 445).
@pytest.mark.parametrize("name", ["unpacked_then_called_twice", "list_made_in_a_loop"])
@pytest.mark.parametrize("way", range(len(jacobians._HVP_WAYS)))
def test_lists_differentiated_twice_by_every_hvp_way(name, way):
    fn = getattr(gi, name)
    x, along = np.array([-0.45, 0.163, -0.064, 0.405]), np.array([1.0, 0.5, -0.3, 0.2])
    made = jacobians._HVP_WAYS[way](fn, ("x",), True, ())
    if made is None:
        pytest.skip("this way is not written for this function")
    got = made[1](x, tangents=along)
    np.testing.assert_allclose(got, autograd.hessian(_rebind(fn))(x) @ along, rtol=1e-10, atol=1e-12)
