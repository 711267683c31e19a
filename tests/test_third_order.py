"""Third order through what the second order generates: reverse mode over reverse mode over a
gradient whose tapes hold tuples, whose list adjoints are written in place and sliced, and whose
residuals include index objects. Checked against autograd; the runtime pieces it needed on their
own."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s


def scaled_tanh(a, b):
    return np.tanh(a) * b


def stacked_parts(x):
    parts = []
    for i in range(3):
        parts.append(scaled_tanh(x[i], x[i + 1]))
    total = np.stack(parts)
    return np.sum(total ** 2) + np.prod(x[:2])


def stacked_parts_ag(x):
    parts = [anp.tanh(x[i]) * x[i + 1] for i in range(3)]
    return anp.sum(anp.stack(parts) ** 2) + anp.prod(x[:2])


@pytest.mark.slow  # 30 s: the slow tier (CI runs it)
def test_third_order_of_a_function_that_builds_a_list_in_a_loop():
    x = np.array([0.3, -0.8, 0.5, 1.1])
    want = autograd.jacobian(autograd.hessian(stacked_parts_ag))(x)
    for third in (s2sgrad.jacrev(s2sgrad.jacrev(s2sgrad.grad(stacked_parts))),
                  s2sgrad.jacfwd(s2sgrad.hessian(stacked_parts))):
        np.testing.assert_allclose(third(x), want, rtol=1e-9, atol=1e-12)


def test_adjoints_of_sequences_add_element_by_element_and_a_zero_number_adds_nothing():
    record = (np.ones(2), 3.0)
    assert s2s.add(0.0, record) is record and s2s.add(record, 0.0) is record
    total = s2s.add((np.ones(2), 1.0), (np.full(2, 2.0), 0.5))
    np.testing.assert_allclose(total[0], [3.0, 3.0])
    assert total[1] == 1.5 and len(total) == 2  # not a concatenation
    both = s2s.add(s2s.Parts([(np.ones(2), 1.0), 2.0]), s2s.Parts([0.0, 1.0]))
    np.testing.assert_allclose(both[0][0], [1.0, 1.0])
    assert both[1] == 3.0


def test_a_slice_of_a_list_adjoint_set_to_one_value_sets_each_element():
    g = s2s.Parts([np.ones(2), np.ones(2), np.ones(2)])
    cleared = s2s.setitem(g, (slice(None, -1),), 0.0)
    assert cleared[0] == 0.0 and cleared[1] == 0.0
    np.testing.assert_allclose(cleared[2], [1.0, 1.0])
    np.testing.assert_allclose(g[0], [1.0, 1.0])  # the input is left as it was


def test_the_zero_adjoint_of_an_index_object_is_a_zero_number():
    assert s2s.zeros_like(slice(None, 2)) == 0.0
    assert s2s.zeros_like(None) == 0.0
    assert s2s.list_zeros((np.ones(3), slice(1, None)))[1] == 0.0


def test_a_sequence_adjoint_spread_to_its_own_length_is_itself():
    parts = s2s.Parts([np.ones(2), 1.0])
    assert s2s.broadcast(parts, (2,)) is parts
    assert s2s.unbroadcast(parts, (2,)) is parts


def contracted(a, b):
    return np.sum(np.tanh(np.einsum("ij,jk->ik", a, b)) ** 2) + np.einsum("ii", a @ a)


def contracted_ag(a, b):
    return anp.sum(anp.tanh(anp.einsum("ij,jk->ik", a, b)) ** 2) + anp.trace(anp.dot(a, a))


def test_third_order_through_einsum():
    # einsum's adjoints are helpers whose own adjoints (einsum_vjps_value, einsum_vjps_operands)
    # had no rule: reverse mode over the second-order code was refused
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 2)) * 0.5
    want = autograd.jacobian(autograd.hessian(contracted_ag))(a, b)
    got = s2sgrad.jacrev(s2sgrad.jacrev(s2sgrad.grad(contracted)))(a, b)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    t = rng.normal(size=(3, 3))
    tangent = s2sgrad.jvp(s2sgrad.grad(contracted), (a, b), (t, np.zeros_like(b)))[1]
    np.testing.assert_allclose(tangent, np.tensordot(autograd.hessian(contracted_ag)(a, b), t, 2),
                               rtol=1e-9, atol=1e-12)


def test_a_sequence_adjoints_shape_is_its_stacked_arrays_where_they_stack():
    assert np.shape(s2s.Parts([np.ones(3), np.zeros(3)])) == (2, 3)
    assert np.shape(s2s.Parts([1.0, 2.0])) == (2,)
    assert np.shape(s2s.Parts([np.ones(3), np.ones(2)])) == (2,)  # ragged: one per item
    assert np.shape(s2s.Parts([(np.ones(2), 1.0)])) == (1,)
