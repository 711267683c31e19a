"""Batched tangents: the runtime helpers (s2sgrad/runtime/batching.py) against their definition,
each row computed alone by the unbatched function; the batched tangent code of Hessians
(differentiate/batching.py) against the per-column code and autograd; where it must refuse."""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import sys

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import derive
from s2sgrad import runtime as s2s
from s2sgrad.checks import numerical_grad
from s2sgrad.pipeline import generate_jvp
from s2sgrad.read.capture import from_function
from s2sgrad.read.live import entry_of

RNG = np.random.default_rng(7)
ROWS = 3


def stacked(shape):
    return RNG.normal(size=(ROWS,) + shape)


def per_row(fn, t):
    return np.stack([np.asarray(fn(row)) for row in t])


def check(batched, fn, t):
    got = batched
    want = per_row(fn, t)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


MATMUL_SHAPES = [((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)),
                 ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)),
                 ((2, 3, 4), (2, 4, 5))]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES)
def test_batched_products_are_the_products_of_each_row(a_shape, b_shape):
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    ta, tb = stacked(a_shape), stacked(b_shape)
    check(s2s.batch_matmul(ta, b), lambda r: r @ b, ta)
    check(s2s.batch_rmatmul(a, tb), lambda r: a @ r, tb)
    g = RNG.normal(size=np.shape(a @ b))
    tg = stacked(np.shape(a @ b))
    check(s2s.batch_matmul_vjp_a(tg, a, b), lambda r: s2s.matmul_vjp_a(r, a, b), tg)
    check(s2s.batch_matmul_vjp_b(tg, a, b), lambda r: s2s.matmul_vjp_b(r, a, b), tg)
    check(s2s.batch_matmul_vjp_a_b(g, a, tb), lambda r: s2s.matmul_vjp_a(g, a, r), tb)
    check(s2s.batch_matmul_vjp_b_a(g, ta, b), lambda r: s2s.matmul_vjp_b(g, r, b), ta)
    if len(a_shape) <= 2 and len(b_shape) <= 2:
        check(s2s.batch_dot(ta, b), lambda r: np.dot(r, b), ta)
        check(s2s.batch_rdot(a, tb), lambda r: np.dot(a, r), tb)


@pytest.mark.parametrize("a_shape,b_shape", [((), (4,)), ((3, 4), ()), ((2, 3, 4), (4, 5)),
                                             ((3, 4), (2, 4, 5))])
def test_batched_dot_of_numbers_and_stacks(a_shape, b_shape):
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    ta, tb = stacked(a_shape), stacked(b_shape)
    check(s2s.batch_dot(ta, b), lambda r: np.dot(r, b), ta)
    check(s2s.batch_rdot(a, tb), lambda r: np.dot(a, r), tb)
    g = RNG.normal(size=np.shape(np.dot(a, b)))
    tg = stacked(np.shape(np.dot(a, b)))
    check(s2s.batch_dot_vjp_a(tg, a, b), lambda r: s2s.dot_vjp_a(r, a, b), tg)
    check(s2s.batch_dot_vjp_b(tg, a, b), lambda r: s2s.dot_vjp_b(r, a, b), tg)
    check(s2s.batch_dot_vjp_a_b(g, a, tb), lambda r: s2s.dot_vjp_a(g, a, r), tb)
    check(s2s.batch_dot_vjp_b_a(g, ta, b), lambda r: s2s.dot_vjp_b(g, r, b), ta)


def test_unit_rows_pick_rows_and_columns_of_the_other_factor():
    m = RNG.normal(size=(5, 6))
    for first, stop in ((0, 5), (1, 4)):
        seeds = s2s.unit_rows(first, stop, (5,))
        plain = np.array(seeds)
        assert not seeds.flags.writeable
        np.testing.assert_array_equal(s2s.batch_matmul(seeds, m), s2s.batch_matmul(plain, m))
        np.testing.assert_array_equal(s2s.batch_rmatmul(m.T, seeds), s2s.batch_rmatmul(m.T, plain))
        np.testing.assert_array_equal(s2s.batch_dot(seeds, m[:, 0]), plain @ m[:, 0])
        result = s2s.batch_matmul(seeds, m)
        result[...] = 0.0  # a fresh array: writing it leaves m alone
        assert np.all(m != 0.0)
    for a in (m[0], m[:1]):  # a @ e_i, a vector or one row: a column of a, never a view of it
        assert not np.shares_memory(s2s.batch_rmatmul(a, s2s.unit_rows(1, 4, (6,))), a)


@pytest.mark.parametrize("shape,axis,keepdims", [((3, 4), None, False), ((3, 4), 0, False),
                                                 ((3, 4), -1, True), ((2, 3, 4), (0, 2), False),
                                                 ((2, 3, 4), None, True)])
def test_batched_reductions(shape, axis, keepdims):
    t = stacked(shape)
    check(s2s.batch_sum(t, axis, None, keepdims), lambda r: np.sum(r, axis=axis, keepdims=keepdims), t)
    check(s2s.batch_mean(t, axis, None, keepdims), lambda r: np.mean(r, axis=axis, keepdims=keepdims), t)


def test_batched_shapes():
    t = stacked((3, 4))
    check(s2s.batch_reshape(t, (4, 3)), lambda r: np.reshape(r, (4, 3)), t)
    check(s2s.batch_reshape(t, ((2, 6),)), lambda r: r.reshape((2, 6)), t)  # a method's *shape
    check(s2s.batch_reshape(t, 12), lambda r: np.reshape(r, 12), t)
    check(s2s.batch_reshape(t, (4, 3), "F"), lambda r: np.reshape(r, (4, 3), order="F"), t)
    check(s2s.batch_transpose(t), np.transpose, t)
    u = stacked((2, 3, 4))
    check(s2s.batch_transpose(u, (2, 0, 1)), lambda r: np.transpose(r, (2, 0, 1)), u)
    check(s2s.batch_transpose(u, ((-1, 0, 1),)), lambda r: r.transpose((-1, 0, 1)), u)
    check(s2s.batch_transpose(u, ()), lambda r: r.transpose(), u)


def test_batched_broadcasting_and_like():
    t = stacked((3, 4))
    for x in (np.zeros((3, 4)), np.zeros((1, 4)), np.zeros(4), np.zeros((3, 1)), (1, 4)):
        check(s2s.batch_unbroadcast(t, x), lambda r: s2s.unbroadcast(r, x), t)
    for shape, rows in itertools.product(((3, 4), (2, 3, 4)), (stacked(()), stacked((4,)))):
        check(s2s.batch_broadcast(rows, shape), lambda r: s2s.broadcast(r, shape), rows)
    for x in (2.0, np.zeros((3, 4)), np.zeros((3, 4), dtype=np.float32), np.arange(12).reshape(3, 4)):
        got = s2s.batch_like(t, x)
        check(got, lambda r: s2s.like(r, x), t)
        assert got.dtype == per_row(lambda r: s2s.like(r, x), t).dtype
    complex_rows = t + 1j
    check(s2s.batch_like(complex_rows, np.zeros((3, 4))), lambda r: s2s.like(r, np.zeros((3, 4))),
          complex_rows)


def test_lead_aligns_a_stack_to_broadcast_as_each_row():
    t = stacked(())
    other = RNG.normal(size=(3, 4))
    check(s2s.lead(t, other) * other, lambda r: r * other, t)
    u = stacked((4,))
    check(s2s.lead(u, other) + other, lambda r: r + other, u)
    assert s2s.lead(u, 2.0) is u


# ----- the batched tangent code of Hessians ---------------------------------------------------

A = np.random.default_rng(1).normal(size=(6, 5)) / 3.0
M = np.random.default_rng(2).normal(size=(4, 3))


def lse(x):
    z = A @ x
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def lse_ag(x):
    z = anp.dot(A, x)
    m = anp.max(z)
    return m + anp.log(anp.sum(anp.exp(z - m)))


def shaped(w):
    W = w.reshape(4, 3)
    return np.sum(np.tanh(W * M) ** 2, axis=0) @ np.mean(W.T, axis=1, keepdims=True)[:, 0] + \
        np.sum(np.sin(W[1:, 0]) * W[0])


def shaped_ag(w):
    W = anp.reshape(w, (4, 3))
    return anp.dot(anp.sum(anp.tanh(W * M) ** 2, axis=0), anp.mean(W.T, axis=1, keepdims=True)[:, 0]) + \
        anp.sum(anp.sin(W[1:, 0]) * W[0])


def two(x, s):
    return np.sum(np.exp(x * s)) + s ** 3 * np.dot(x, x)


def two_ag(x, s):
    return anp.sum(anp.exp(x * s)) + s ** 3 * anp.dot(x, x)


CASES = [(lse, lse_ag, (np.linspace(-1.0, 1.0, 5),), 0),
         (shaped, shaped_ag, (np.linspace(0.1, 1.2, 12),), 0),
         (two, two_ag, (np.linspace(-0.5, 0.5, 4), 0.7), (0, 1)),
         (two, two_ag, (np.linspace(-0.5, 0.5, 4), 0.7), 1)]


def _batched_and_columns(fun, args, argnums):
    """The Hessian by its generated function, with the batched tangent code (chunks of unit
    tangents) and with the tangent code per column (the same module, its batched part unused)."""
    wrt = s2sgrad.parameters.wrt_names(fun, argnums)
    single = isinstance(argnums, int)
    code = derive.code_for(fun, from_function(fun), wrt, mode="rev2")
    assert code["call"]["hvp_tangents"], "no batched tangent code"
    per_column = {**code, "call": {**code["call"], "hvp_tangents": ""}}
    text, batched = derive.hessian_function(fun, wrt, single, code=code)
    columns_text, by_columns = derive.hessian_function(fun, wrt, single, code=per_column)
    assert "s2s.unit_chunks(" in text and "s2s.unit_chunks(" not in columns_text
    return batched(*args), by_columns(*args)


@pytest.mark.parametrize("fun,fun_ag,args,argnums", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_by_batched_tangents_matches_columns_and_autograd(fun, fun_ag, args, argnums, monkeypatch):
    batched, columns = _batched_and_columns(fun, args, argnums)
    want = autograd.hessian(fun_ag, argnums)(*args) if isinstance(argnums, int) else None
    if isinstance(argnums, int):
        np.testing.assert_allclose(batched, columns, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(batched, want, rtol=1e-9, atol=1e-12)
    else:
        for i, j in itertools.product(range(len(argnums)), repeat=2):
            np.testing.assert_allclose(batched[i][j], columns[i][j], rtol=1e-12, atol=1e-12)
            block = autograd.jacobian(autograd.grad(fun_ag, argnums[i]), argnums[j])(*args)
            np.testing.assert_allclose(batched[i][j], block, rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(s2s.jacobians, "_AT_ONCE", 2)  # several chunks per input
    again, _ = _batched_and_columns(fun, args, argnums)
    flat = np.concatenate([np.ravel(b) for b in np.asarray(again, dtype=object).ravel()]) \
        if not isinstance(argnums, int) else again
    expect = np.concatenate([np.ravel(b) for b in np.asarray(batched, dtype=object).ravel()]) \
        if not isinstance(argnums, int) else batched
    np.testing.assert_allclose(flat, expect, rtol=1e-12, atol=1e-12)


def test_the_hessian_of_a_float_is_a_float_through_the_batched_code():
    h = s2sgrad.hessian(lambda_free_cube)(1.5)
    assert type(h) is float and h == pytest.approx(6.0 * 1.5 + np.cos(1.5) * -1.0)


def lambda_free_cube(s):
    return s ** 3 + np.cos(s)


def cumulative(x):
    return np.sum(np.cumsum(x) ** 2)


def cumulative_ag(x):
    return anp.sum(anp.cumsum(x) ** 2)


def test_a_tangent_part_without_a_batched_form_runs_per_column():
    x = np.linspace(0.1, 0.9, 4)
    text = s2sgrad.source(s2sgrad.hessian(cumulative))
    assert "_grad_jvp_tangent(" in text and "_grad_jvp_tangents(" not in text
    np.testing.assert_allclose(s2sgrad.hessian(cumulative)(x), autograd.hessian(cumulative_ag)(x),
                               rtol=1e-10)


def test_generated_batched_code_reads_as_rows():
    text = s2sgrad.source(s2sgrad.hessian(lse))
    body = text[text.index("def lse_grad_jvp_tangents("):]
    assert "s2s.batch_rmatmul(A, x_dot)" in body
    assert "s2s.batch_sum(" in body and "s2s.batch_like(" in body


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, False), (-1, False), (1, True),
                                           ((0, 1), False)])
def test_batched_adjoints_of_reductions(axis, keepdims):
    x = np.zeros((3, 4))
    t = stacked(np.shape(np.sum(x, axis=axis, keepdims=keepdims)))
    check(s2s.batch_sum_vjp(t, x, axis, keepdims), lambda r: s2s.sum_vjp(r, x, axis, keepdims), t)
    check(s2s.batch_mean_vjp(t, x, axis, keepdims), lambda r: s2s.mean_vjp(r, x, axis, keepdims), t)


@pytest.mark.parametrize("index", [0, (slice(1, None), 0), (Ellipsis, None, 2), np.array([0, 0, 2]),
                                   (np.array([1, 2]), slice(None)), np.array([True, False, True]),
                                   (slice(None), [3, 1, 3]), ([0, 2, 0], [1, 1, 1])])
def test_batched_index_adjoints_and_writes(index):
    x = RNG.normal(size=(3, 4))
    selection = np.shape(x[index])
    t = stacked(selection)
    check(s2s.batch_getitem_vjp(t, x, index), lambda r: s2s.getitem_vjp(r, x, index), t)
    rows = stacked((3, 4))
    value = RNG.normal(size=selection)
    check(s2s.batch_setitem(rows, index, value), lambda r: s2s.setitem(r, index, value), rows)
    check(s2s.batch_setitem_value(x, index, t), lambda r: s2s.setitem(x, index, r), t)
    one = stacked(())  # one number written over the whole selection
    check(s2s.batch_setitem_value(x, index, one), lambda r: s2s.setitem(x, index, r), one)
    adjoint = stacked((3, 4))  # the written value's adjoint, to the value's shape or one number
    for written in (value, 2.0):
        check(s2s.batch_setitem_value_vjp(adjoint, index, written),
              lambda r: s2s.setitem_value_vjp(r, index, written), adjoint)


def test_the_decorators_hessian_runs_the_batched_code(monkeypatch):
    calls = []
    real = s2s.unit_chunks

    def counted(x):
        calls.append(np.shape(x))
        return real(x)

    monkeypatch.setattr(s2s, "unit_chunks", counted)
    decorated = s2sgrad.differentiable(order=2)(shaped)
    w = np.linspace(-0.4, 0.7, 12)
    np.testing.assert_allclose(decorated.hessian(w), autograd.hessian(shaped_ag)(w), rtol=1e-9,
                               atol=1e-12)
    assert calls == [(12,)]
    assert "def shaped_grad_jvp_tangents(" in decorated.source
    assert entry_of(decorated.hessian).__name__ == "shaped_hessian"


@pytest.mark.parametrize("index", [
    0, slice(None, None, 2), (slice(None, None, 2),), (1, slice(None)), (0, slice(None), 1),
    (np.array([0, 2]), 1), (slice(None), np.array([0, 3])), (Ellipsis, None),
    (np.array([0, 2]), slice(None), np.array([1, 3])),  # apart: numpy moves their axes first
    np.array([[True, False, True, True]] * 3)])
def test_batched_getitem_is_each_rows_index(index):
    t = stacked((3, 4, 5)) if isinstance(index, tuple) and len(index) == 3 else stacked((3, 4))
    check(s2s.batch_getitem(t, index), lambda r: r[index], t)


def strided_writes(v):
    y = v * 1.0
    y[::2] *= np.cos(v[-1] ** 2)  # the generated code names the slice: y[slice_..._2]
    y /= 1.0 + np.exp(v) * np.exp(v)
    return np.sum(y * y) + np.sum(y[1:3] * v[np.array([0, 2])])


def test_an_index_held_by_a_name_is_read_when_the_batched_code_runs():
    # The generated code binds a slice to a name and indexes with (name,): t[:, (name,)] was
    # an error (generator seed 194); s2s.batch_getitem looks at the index when it runs.
    v = np.array([0.66, -0.58, 0.57, 0.86])
    text = s2sgrad.source(s2sgrad.hessian(strided_writes))
    assert "s2s.batch_getitem(" in text[text.index("def strided_writes_grad_jvp_tangents("):]
    batched, columns = _batched_and_columns(strided_writes, (v,), 0)
    np.testing.assert_allclose(batched, columns, rtol=1e-12, atol=1e-12)
    grad, step = s2sgrad.grad(strided_writes), 1e-6
    differences = np.stack([(grad(v + step * e) - grad(v - step * e)) / (2 * step)
                            for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(batched, differences, rtol=1e-6, atol=1e-7)


# ----- the batched tangent code differentiated again (rules/helpers/batching.py) --------------
# A Hessian that is generated code calls <f>_grad_jvp_values once and <f>_grad_jvp_tangents per
# chunk of columns; a third derivative (jacfwd of a Hessian, grad through one) reads that code
# again. `through` below calls both parts as such code would, on stacked tangents of its own, and
# its derivatives in both modes must match central differences of the same function.

_SEEN = "np.sum(np.sin({r}) * np.cos(np.arange(np.size({r})) + 0.5).reshape(np.shape({r})))"

AGAIN = [(lse, (np.linspace(-1.0, 1.0, 5),), (0,)),
         (shaped, (np.linspace(0.1, 1.2, 12),), (0,)),
         (strided_writes, (np.array([0.66, -0.58, 0.57, 0.86]),), (0,)),
         (two, (np.linspace(-0.5, 0.5, 4), 0.7), (0, 1)),
         (two, (np.linspace(-0.5, 0.5, 4), 0.7), (1,))]


def _through(fun, argnums, tmp_path):
    """``through(*args, *tangent_stacks)``: a scalar of ``fun``'s Hessian code's values part
    and of its batched tangent part on the stacks, loaded from a file s2sgrad reads again."""
    argnums_arg = argnums[0] if len(argnums) == 1 else argnums
    text = s2sgrad.source(s2sgrad.hessian(fun, argnums=argnums_arg))
    name = fun.__name__
    assert f"def {name}_grad_jvp_tangents(" in text, "no batched tangent code"
    params = list(inspect.signature(fun).parameters)
    dots = [f"{params[i]}_dot" for i in argnums]
    outputs = [f"rows[{k}]" for k in range(len(dots))] if len(dots) > 1 else ["rows"]
    gradients = [f"gradient[{k}]" for k in range(len(dots))] if len(dots) > 1 else ["gradient"]
    seen = " + ".join(_SEEN.format(r=r) for r in outputs + gradients)
    wrapper = (f"\n\ndef through({', '.join(params + dots)}):\n"
               f"    gradient, values = {name}_grad_jvp_values({', '.join(params)})\n"
               f"    rows = {name}_grad_jvp_tangents(values, {', '.join(dots)})\n"
               f"    return {seen}\n")
    path = tmp_path / f"again_{name}_{len(argnums)}.py"
    path.write_text(f"from {__name__} import A, M\n" + text + wrapper)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.through, params + dots


@pytest.mark.parametrize("fun,args,argnums", AGAIN, ids=["lse", "shaped", "strided_writes", "two", "two_s"])
def test_batched_tangent_code_is_differentiated_again_in_both_modes(fun, args, argnums, tmp_path):
    through, names = _through(fun, argnums, tmp_path)
    rng = np.random.default_rng(11)
    stacks = tuple(rng.uniform(-1.0, 1.0, (ROWS,) + np.shape(args[i])) for i in argnums)
    point = tuple(args) + stacks
    every = tuple(range(len(point)))
    # reverse mode: grad of the function calling both parts
    grads = s2sgrad.grad(through, argnums=every)(*point)
    for i in every:
        np.testing.assert_allclose(grads[i], numerical_grad(through, point, i), rtol=1e-6, atol=1e-8,
                                   err_msg=f"d/d{names[i]}")
    # forward mode: generated forward-mode code of it (not reverse mode transposed), then jvp
    generate_jvp(from_function(through), tuple(names))
    tangents = tuple(float(rng.uniform(-1.0, 1.0)) if isinstance(p, float) else rng.uniform(-1.0, 1.0, np.shape(p))
                     for p in point)
    value, tangent = s2sgrad.jvp(through, point, tangents)
    step = 1e-6
    moved = [tuple(p + sign * step * t for p, t in zip(point, tangents)) for sign in (1.0, -1.0)]
    difference = (through(*moved[0]) - through(*moved[1])) / (2 * step)
    assert value == pytest.approx(through(*point), rel=1e-12)
    np.testing.assert_allclose(tangent, difference, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, sum(np.sum(g * t) for g, t in zip(grads, tangents)), rtol=1e-9)
