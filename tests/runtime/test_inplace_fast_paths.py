"""The in-place index helpers' fast paths (runtime/inplace.py, containers.setitem_value_vjp): for
every kind of index they agree with the copying helpers (setitem, getitem_vjp), write into the
array itself only where it is a writable numpy array, and hand back arrays of their own."""

import numpy as np
import pytest

from s2sgrad import runtime as s2s

INDICES = [
    (slice(1, -1, None),),
    slice(2, None, None),
    3,
    (np.int64(2),),
    (slice(None, None, 2),),
    (Ellipsis, 1),
    np.array([1, 1, 4]),  # repeats: the last write stays, the adjoints add up
    np.array([True, False, True, False, False, True]),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_setitem_into_agrees_with_setitem(index):
    x = np.linspace(-1.0, 1.0, 6)
    value = np.arange(1.0, 1.0 + np.size(x[index])).reshape(np.shape(x[index]))
    expected = s2s.setitem(x, index, value)
    out = s2s.setitem_into(x.copy(), index, value)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(s2s.setitem_into(x.copy(), index, 0.5), s2s.setitem(x, index, 0.5))


def test_setitem_into_writes_only_a_writable_array():
    x = np.zeros(4)
    assert s2s.setitem_into(x, (slice(1, 3, None),), np.ones(2)) is x
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    out = s2s.setitem_into(frozen, (slice(1, 3, None),), np.ones(2))
    assert out is not frozen and not frozen.any() and out.tolist() == [0.0, 1.0, 1.0, 0.0]
    assert s2s.setitem_into([1.0, 2.0], 0, 5.0) == [5.0, 2.0]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_add_agrees_with_the_sum(index):
    x = np.linspace(-1.0, 1.0, 6)
    g = np.linspace(0.5, 1.5, 6)
    value = np.arange(1.0, 1.0 + np.size(x[index])).reshape(np.shape(x[index]))
    expected = g + s2s.getitem_vjp(value, x, index)
    buffer = g.copy()
    out = s2s.getitem_add(buffer, value, x, index)
    np.testing.assert_allclose(out, expected)
    assert out is buffer


def test_getitem_add_of_a_complex_value_or_a_read_only_adjoint_makes_a_new_array():
    x, index = np.zeros(4), (slice(0, 2, None),)
    g = np.ones(4)
    out = s2s.getitem_add(g, np.array([1j, 2j]), x, index)
    assert out is not g and out.dtype.kind == "c" and g.tolist() == [1.0] * 4
    frozen = np.broadcast_to(1.0, (4,))
    out = s2s.getitem_add(frozen, np.ones(2), x, index)
    assert out.tolist() == [2.0, 2.0, 1.0, 1.0]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_setitem_value_vjp_is_the_part_read_as_an_array_of_its_own(index):
    adjoint = np.linspace(0.5, 1.5, 6)
    value = np.zeros(np.shape(adjoint[index]))
    out = s2s.setitem_value_vjp(adjoint, index, value)
    assert not np.may_share_memory(out, adjoint)
    read = adjoint[index]
    if isinstance(index, np.ndarray) and index.dtype.kind == "i":
        read = np.where([False, True, True], read, 0.0)  # of two writes to 1, the last stays
    np.testing.assert_array_equal(out, read)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_split_stack_parts_are_arrays_of_their_own(axis):
    # the slices of one copy of g: each part changes in place without touching g or another part
    g = np.arange(24.0).reshape(2, 3, 4)
    n = g.shape[axis]
    for adjoint in (g, np.broadcast_to(2.5, g.shape)):  # a read-only broadcast one too
        parts = s2s.split_stack(adjoint, [None] * n, axis)
        assert len(parts) == n
        for i, part in enumerate(parts):
            np.testing.assert_array_equal(part, np.take(adjoint, i, axis=axis))
        before = np.array(adjoint)
        parts[0] += 1.0
        np.testing.assert_array_equal(adjoint, before)
        np.testing.assert_array_equal(parts[1], np.take(before, 1, axis=axis))
        assert not np.shares_memory(parts[0], adjoint)
