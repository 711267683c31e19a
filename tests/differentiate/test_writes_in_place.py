"""Index writes in loops cost O(the part written) a step (issue 28), never a different gradient.

The forward sweep writes into an array it owns where no one reads the old values afterwards
(differentiate/writes_in_place.py: ``s2s.setitem_into``); the backward sweep reads the written
part's adjoint, then zeroes it in the adjoint it owns, and adds index reads' adjoints into it
(``s2s.getitem_add``); a backward loop that reads a value only for its shape has the forward
sweep record a template (``s2s.template``). Every function of tests/inputs/inplace_inputs.py is
checked against central differences, the ones whose old values are read later or that alias the
array too (they keep the copying code, or are refused), and the generated loops' structure with
ast (no copy of the whole array per step where it is safe); second order reads the helpers again."""

import ast
import functools

import numpy as np
import pytest
import inplace_inputs as ii
from conftest import assert_gradients

import libcst as cst

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.differentiate.writes_in_place import write_in_place
from s2sgrad.program import Simple
from s2sgrad import runtime as s2s
from s2sgrad.checks import numerical_grad

X = np.array([0.7, -1.1, 0.4, 1.3, 0.2, -0.6])

GRADIENTS = ["row_writes", "slice_updates", "buffer_writes", "linear_stencil", "element_writes", "nested_rows",
             "old_values_read_later", "branch_writes", "masked_and_fancy", "list_item_writes", "concat_stencil"]


@pytest.mark.parametrize("name", GRADIENTS)
@pytest.mark.parametrize("n", [1, 5])
def test_gradients_of_index_writes_in_loops(name, n):
    fn = getattr(ii, name)
    x = X.copy()
    got = assert_gradients(fn, x, n, argnums=(0,), autograd_oracle=False)
    np.testing.assert_array_equal(x, X)  # the argument is never written
    # the generated code runs again on fresh arrays (nothing of one call's arrays is kept)
    np.testing.assert_array_equal(s2sgrad.grad(fn)(x, n), got[0] if isinstance(got, tuple) else got)
    value, _ = s2sgrad.value_and_grad(fn)(x, n)
    assert value == pytest.approx(fn(x.copy(), n))


def test_the_argument_written_is_the_callers_array_untouched():
    x = X.copy()
    got = s2sgrad.grad(ii.argument_written)(x, 4)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_allclose(got, numerical_grad(ii.argument_written, (X.copy(), 4), 0), rtol=1e-6)


@pytest.mark.parametrize("name", ["alias_then_write", "view_then_write", "list_holds_then_write",
                                  "list_of_views_written"])
def test_a_shared_array_is_refused_or_differentiated_as_it_runs(name):
    fn = getattr(ii, name)
    try:
        got = s2sgrad.grad(fn)(X.copy(), 3)
    except TransformError:
        return
    np.testing.assert_allclose(got, numerical_grad(fn, (X.copy(), 3), 0), rtol=1e-6, atol=1e-8)


def _loops(text: str, function: str) -> list:
    fn = next(node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and node.name == function)
    return [node for node in ast.walk(fn) if isinstance(node, (ast.For, ast.While))]


def _calls(nodes) -> list:
    return [ast.unparse(sub.func) for node in nodes for sub in ast.walk(node) if isinstance(sub, ast.Call)]


@pytest.mark.parametrize("name", ["row_writes", "linear_stencil", "buffer_writes"])
def test_no_whole_array_copy_or_tape_entry_per_step(name):
    text = s2sgrad.source(s2sgrad.value_and_grad(getattr(ii, name)))
    forward = _calls(_loops(text, f"{name}_fwd"))
    backward = _calls(_loops(text, f"{name}_bwd"))
    assert "s2s.setitem_into" in forward and "s2s.setitem" not in forward
    assert "s2s.setitem_into" in backward and "s2s.setitem" not in backward
    assert "s2s.getitem_vjp" not in backward  # added into the adjoint, not zeros plus a sum
    tape = [node for loop in _loops(text, f"{name}_fwd") for node in ast.walk(loop)
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("tape.append")]
    recorded = {ast.unparse(e) for call in tape for e in ast.walk(call.args[0]) if isinstance(e, ast.Name)}
    assert not ({"u", "out", "lap"} & recorded - {ast.unparse(e.args[0]) for call in tape
                                                   for e in ast.walk(call.args[0])
                                                   if isinstance(e, ast.Call) and e.args}), recorded


def test_an_adjoint_made_anew_each_step_is_added_into_in_place():
    # the adjoint of u is a new array each step (the adjoint of its concatenation's last piece);
    # the other pieces are views of the previous one, read after the additions: the additions go
    # into the new array (its group holds the old one too, so only the line-by-line proof allows it)
    text = s2sgrad.source(s2sgrad.value_and_grad(ii.concat_stencil))
    backward = _calls(_loops(text, "concat_stencil_bwd"))
    assert backward.count("s2s.getitem_add") == 5 and "s2s.getitem_vjp" in backward


def _written(lines: str, params=frozenset()) -> str:
    items = tuple(Simple(cst.parse_statement(line).body[0]) for line in lines.strip().splitlines())
    return "\n".join(item.text for item in write_in_place(items, frozenset(params), ()))


def test_a_new_array_written_in_place_only_where_no_view_of_it_is_read_later():
    made = """
g = s2s.getitem_vjp(h0, x, (slice(0, 1),))
g = g + s2s.getitem_vjp(h1, x, (slice(1, 2),))
r = g * 2.0
"""
    assert "s2s.getitem_add(g, h1" in _written(made, {"h0", "h1", "x"})
    viewed = """
g = s2s.getitem_vjp(h0, x, (slice(0, 1),))
v = g[0:1]
g = g + s2s.getitem_vjp(h1, x, (slice(1, 2),))
r = v * 2.0
"""
    assert "v = s2s.owned_array(g[0:1])" in _written(viewed, {"h0", "h1", "x"})  # copied when taken
    aliased = """
g = s2s.getitem_vjp(h0, x, (slice(0, 1),))
v = g
g = g + s2s.getitem_vjp(h1, x, (slice(1, 2),))
r = v * 2.0
"""
    assert "s2s.getitem_add" not in _written(aliased, {"h0", "h1", "x"})
    passed = """
g = s2s.getitem_vjp(h0, x, (slice(0, 1),))
v = s2s.unbroadcast(g, (2,))
g = g + s2s.getitem_vjp(h1, x, (slice(1, 2),))
r = v * 2.0
"""
    assert "s2s.getitem_add" not in _written(passed, {"h0", "h1", "x"})
    held = """
g = s2s.getitem_vjp(h0, x, (slice(0, 1),))
keep = [g]
g = g + s2s.getitem_vjp(h1, x, (slice(1, 2),))
r = keep[0] * 2.0
"""
    assert "s2s.getitem_add" not in _written(held, {"h0", "h1", "x"})
    not_made = """
g = h0
g = g + s2s.getitem_vjp(h1, x, (slice(1, 2),))
r = h0 * 2.0
"""
    written = _written(not_made, {"h0", "h1", "x"})  # a parameter: copied once, where bound
    assert "g = s2s.owned_array(h0)" in written and "s2s.getitem_add(g, h1" in written


def test_old_values_read_later_keep_the_copy():
    # ``u * u``'s adjoint reads u as it was before each write: the forward sweep keeps each
    # version (the backward sweep's adjoints are its own either way)
    text = s2sgrad.source(s2sgrad.value_and_grad(ii.old_values_read_later))
    forward = _calls(_loops(text, "old_values_read_later_fwd"))
    assert "s2s.setitem" in forward and "s2s.setitem_into" not in forward


def test_a_part_read_after_the_write_is_copied_where_it_is_taken():
    # ``np.cos(u[1:-1])``'s adjoint reads that part of u after the write: it is copied when taken
    # (O(the part)), and u is written in place
    text = s2sgrad.source(s2sgrad.value_and_grad(ii.slice_updates))
    forward = _calls(_loops(text, "slice_updates_fwd"))
    assert "s2s.setitem_into" in forward and "s2s.setitem" not in forward
    assert forward.count("s2s.owned_array") == 1


def test_a_loop_of_row_writes_is_linear_in_its_steps():
    """Per step, the generated code calls what the list-append spelling does: no call grows with n."""
    grad = s2sgrad.grad(ii.row_writes)
    calls = []
    original = s2s.setitem

    def counting(x, index, value):
        calls.append(np.size(x))
        return original(x, index, value)

    s2s.setitem = counting
    try:
        grad(X, 40)
    finally:
        s2s.setitem = original
    assert calls == []


# ----- second order: the helpers' rules -----------------------------------------------------------

@pytest.mark.parametrize("name", ["row_writes", "slice_updates", "linear_stencil", "buffer_writes",
                                  "element_writes", "concat_stencil"])
def test_second_order_reads_the_in_place_code_again(name):
    fn = getattr(ii, name)
    grad = s2sgrad.grad(fn)
    step = 1e-6
    differences = np.stack([(grad(X + step * e, 3) - grad(X - step * e, 3)) / (2 * step)
                            for e in np.eye(X.size)], axis=1)
    np.testing.assert_allclose(s2sgrad.hessian(fn)(X, 3), differences, rtol=1e-5, atol=1e-6)
    v = np.linspace(-1.0, 1.0, X.size)
    product = s2sgrad.hvp(functools.partial(fn, n=3), (X,), (v,))[0]
    np.testing.assert_allclose(product, differences @ v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2sgrad.jacrev(grad)(X, 3), differences, rtol=1e-5, atol=1e-6)


# ----- the runtime helpers --------------------------------------------------------------------

def test_setitem_into_writes_into_its_argument_or_copies_what_it_cannot():
    x = np.zeros(4)
    assert s2s.setitem_into(x, slice(1, 3), np.ones(2)) is x and x.tolist() == [0, 1, 1, 0]
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    out = s2s.setitem_into(frozen, 0, 2.0)
    assert out is not frozen and out[0] == 2.0 and frozen[0] == 0.0
    items = [1.0, 2.0]
    assert s2s.setitem_into(items, 0, 5.0) == [5.0, 2.0] and items == [1.0, 2.0]
    repeated = np.zeros(3)
    s2s.setitem_into(repeated, np.array([0, 0]), np.array([1.0, 2.0]))
    assert repeated[0] == 2.0  # the last write stays, as in setitem


def test_getitem_add_adds_in_place_only_where_the_sum_keeps_its_dtype():
    g = np.zeros(4)
    x = s2s.template(np.ones(4))
    assert s2s.getitem_add(g, np.ones(2), x, (slice(0, 2),)) is g and g.tolist() == [1, 1, 0, 0]
    s2s.getitem_add(g, np.ones(2), x, np.array([3, 3]))
    assert g[3] == 2.0  # repeats add up
    complex_sum = s2s.getitem_add(g, np.ones(2) * 1j, x, slice(0, 2))
    assert complex_sum is not g and complex_sum.dtype.kind == "c" and g.dtype.kind == "f"
    assert np.array_equal(s2s.getitem_add(0.0, np.ones(2), x, slice(0, 2)), [1, 1, 0, 0])


def test_the_written_parts_adjoint_is_its_own_array():
    g = np.arange(5.0)
    part = s2s.setitem_value_vjp(g, slice(1, 3), np.zeros(2))
    s2s.setitem_into(g, slice(1, 3), 0.0)
    assert part.tolist() == [1.0, 2.0]


def test_a_template_holds_type_dtype_and_shape_in_one_element():
    x = np.arange(12.0).reshape(3, 4)
    t = s2s.template(x)
    assert t.shape == x.shape and t.dtype == x.dtype and t.strides == (0, 0) and not t.flags.writeable
    assert s2s.template(x + 1.0) is t
    assert s2s.template([1.0]) == [1.0]
    assert np.array_equal(s2s.getitem_vjp(np.ones(4), t, 1), s2s.getitem_vjp(np.ones(4), x, 1))
