"""Linear-algebra adjoints that share work: np.linalg.solve's two adjoints from one solve with the
transposed matrix (Rule.together: ``a_bar, b_bar = s2s.solve_vjps(...)`` where both are wanted),
checked against autograd and central differences at first and second order (the Hessian is
forward mode over the generated gradient; grad of a function calling the gradient is reverse
over reverse), for matrices and stacks of matrices, b a vector and a matrix."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_gradients
from s2sgrad.checks import numerical_grad

RNG = np.random.default_rng(28)


def solve_loss(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def solve_loss_ag(a, b):
    return anp.sum(anp.sin(anp.linalg.solve(a, b)))


def solve_sum(a, b):  # the upstream adjoint one number standing for an array (made one first)
    return np.sum(np.linalg.solve(a, b))


def solve_twice(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(np.linalg.solve(np.swapaxes(a, -1, -2), x) * x)


def solve_in_a_loop(a, b):
    x = b
    for _ in range(3):
        x = np.linalg.solve(a, x) + 0.1 * x
    return np.sum(x ** 2)


def solve_in_a_loop_ag(a, b):
    x = b
    for _ in range(3):
        x = anp.linalg.solve(a, x) + 0.1 * x
    return anp.sum(x ** 2)


def _matrix(shape):
    return RNG.normal(size=shape) + 3.0 * np.eye(shape[-1])


# a matrix, b a vector; b a matrix; stacks of both; a stack against one vector (numpy 2: b 1-D is
# one vector for every matrix); one matrix against a stack of b (its adjoint summed over the stack)
# one matrix against a stack of b (its adjoint summed over the stack); as many columns as
# unknowns or more (the transposed solve by the inverse: runtime._transposed_solve)
SHAPES = [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((2, 3, 3), (3,)),
          ((3, 3), (2, 3, 2)), ((3, 3), (3, 3)), ((3, 3), (3, 7)), ((2, 3, 3), (2, 3, 4)),
          ((3, 3), (2, 3, 5))]
AUTOGRAD_RUNS = {((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((3, 3), (3, 7)),
                 ((2, 3, 3), (2, 3, 4))}


def test_both_adjoints_come_from_one_call_and_one_adjoint_from_its_own_template():
    both = s2sgrad.source(s2sgrad.grad(solve_loss, argnums=(0, 1)))
    assert both.count("s2s.solve_vjps(") == 1
    assert "solve_vjp_a" not in both and "solve_vjp_b" not in both
    only_b = s2sgrad.source(s2sgrad.grad(solve_loss, argnums=1))
    assert "solve_vjp_b(" in only_b and "solve_vjps" not in only_b and "solve_vjp_a" not in only_b
    only_a = s2sgrad.source(s2sgrad.grad(solve_loss, argnums=0))
    assert "solve_vjp_a(" in only_a and "solve_vjps" not in only_a


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_solve_gradients(shapes):
    a, b = _matrix(shapes[0]), RNG.normal(size=shapes[1])
    got = assert_gradients(solve_loss, a, b, argnums=(0, 1), autograd_oracle=False)
    if shapes in AUTOGRAD_RUNS:
        want = autograd.grad(solve_loss_ag, (0, 1))(a, b)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert_gradients(solve_sum, a, b, argnums=(0, 1), autograd_oracle=False)
    if np.ndim(b) > 1 or np.ndim(a) == 2:  # x = solve(a, b) is a stack of vectors, not one
        assert_gradients(solve_twice, a, b, argnums=(0, 1), autograd_oracle=False)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_solve_hessian_forward_over_the_shared_adjoint(shapes):
    a, b = _matrix(shapes[0]), RNG.normal(size=shapes[1])
    hessian = s2sgrad.hessian(solve_loss, argnums=(0, 1))(a, b)
    gradient = s2sgrad.grad(solve_loss, argnums=(0, 1))
    eps = 1e-6
    for j, x in enumerate((a, b)):
        t = RNG.normal(size=x.shape)
        moved = [list((a, b)), list((a, b))]
        moved[0][j], moved[1][j] = x + eps * t, x - eps * t
        plus, minus = gradient(*moved[0]), gradient(*moved[1])
        for i in range(2):
            along = np.tensordot(hessian[i][j], t, t.ndim)
            np.testing.assert_allclose(along, (plus[i] - minus[i]) / (2 * eps), rtol=1e-5, atol=1e-7,
                                       err_msg=f"block [{i}][{j}]")
    if shapes in AUTOGRAD_RUNS:
        want = autograd.hessian(lambda a_: solve_loss_ag(a_, b))(a)
        np.testing.assert_allclose(hessian[0][0], want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_solve_tangent_in_both_arguments(shapes):
    # forward mode of solve itself (its tangent in a reads ans as b's rank: one vector, or a
    # stack of them against a stack of matrices, is a column there)
    a, b = _matrix(shapes[0]), RNG.normal(size=shapes[1])
    ta, tb = RNG.normal(size=a.shape), RNG.normal(size=b.shape)
    value, along = s2sgrad.jvp(solve_loss, (a, b), (ta, tb))
    ga, gb = s2sgrad.grad(solve_loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(value, solve_loss(a, b), rtol=1e-12)
    np.testing.assert_allclose(along, np.sum(ga * ta) + np.sum(gb * tb), rtol=1e-9, atol=1e-11)
    eps = 1e-6
    moved = (solve_loss(a + eps * ta, b + eps * tb) - solve_loss(a - eps * ta, b - eps * tb)) / (2 * eps)
    np.testing.assert_allclose(along, moved, rtol=1e-6, atol=1e-8)


def test_solve_in_a_loop_first_and_second_order():
    a, b = _matrix((3, 3)), RNG.normal(size=(3, 2))
    assert "s2s.solve_vjps(" in s2sgrad.source(s2sgrad.grad(solve_in_a_loop, argnums=(0, 1)))
    got = assert_gradients(solve_in_a_loop, a, b, argnums=(0, 1), autograd_oracle=False)
    want = autograd.grad(solve_in_a_loop_ag, (0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    hessian = s2sgrad.hessian(solve_in_a_loop, argnums=(0, 1))(a, b)
    for i in range(2):
        for j in range(2):
            block = autograd.jacobian(autograd.grad(solve_in_a_loop_ag, i), j)(a, b)
            np.testing.assert_allclose(hessian[i][j], block, rtol=1e-8, atol=1e-10, err_msg=f"[{i}][{j}]")


FIRST = None  # set by the test: the gradient the function below calls (reverse over reverse)
A0, B0 = _matrix((3, 3)), RNG.normal(size=(3, 2))
DA, DB = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))


def along_first(a, b):
    ga, gb = FIRST(a, b)
    return np.sum(ga * DA) + np.sum(gb * DB)


def test_solve_second_order_reverse_over_reverse():
    global FIRST
    FIRST = s2sgrad.grad(solve_loss, argnums=(0, 1))
    assert "solve_vjps" in s2sgrad.source(FIRST)
    got = s2sgrad.grad(along_first, argnums=(0, 1))(A0, B0)
    for i in range(2):
        np.testing.assert_allclose(got[i], numerical_grad(along_first, (A0, B0), i), rtol=1e-5, atol=1e-7)


def test_together_is_a_fact_of_the_rule_checked_and_renamed_like_the_others():
    from s2sgrad.rules.table import alias, defvjp, validate

    rule = defvjp("s2sgrad.runtime.solve_vjps_like(a, b)", a="g", b="g", together=(("a", "b"), "(g, g)"))
    validate(rule)
    renamed = alias("other.name", rule, rename={"a": "x"})
    assert renamed.together == (("x", "b"), "(g, g)")
    with pytest.raises(AssertionError, match="unknown parameters"):
        defvjp("f(a, b)", a="g", b="g", together=(("a", "c"), "(g, g)"))
    with pytest.raises(AssertionError, match="without their own templates"):
        validate(defvjp("f(a, b)", a="g", together=(("a", "b"), "(g, g)")))
