"""Lengths computed from lengths (dims.Linear): sums of labels, literals and loop counters as
slice bounds and array lengths, in code made for a call's shape signature. What is proved is
used (no shape recorded or summed back); what may be otherwise (a length that may be negative,
a bound past the end or not, a length changing with a counter read in another step) is not
known, and every signature's gradient stays right."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad import dims
from s2sgrad.analyze.scalars import known_scalars
from s2sgrad.analyze.integers import COUNTER
from s2sgrad.analyze.shapes import shape_classes
from s2sgrad.checks import numerical_grad
from s2sgrad.lower.ir import flatten
from s2sgrad.pipeline import DEFAULT_TABLE, find_function, from_function, lower
from s2sgrad.specialize import shape_signature

L = dims.Linear


def classes_for(fn, args):
    core = lower(find_function(from_function(fn)), DEFAULT_TABLE)
    params = [p.name for p in core.params]
    numbers = frozenset(p for p, a in zip(params, args) if isinstance(a, (int, float)))
    return shape_classes(core, DEFAULT_TABLE, known_scalars(core, DEFAULT_TABLE, numbers),
                         dict(shape_signature(params, args)))


# ----- the algebra ---------------------------------------------------------------------------


def test_sums_of_lengths_have_one_canonical_dim_each():
    n0, n1 = L.symbol("n0"), L.symbol("n1")
    assert dims.length_of(n0) == "n0" and dims.length_of(n0.times(3)) == "3*n0"
    assert dims.length_of(n0 - L((), 2)) == ("n0", 2) == dims.trimmed("n0", 2)
    window = n1 - n0 + L((), 1)
    assert dims.length_of(window) == window and dims.linear(window) == window
    assert dims.length_of(window) == dims.length_of(L((), 1) + n1 - n0)  # one form, whatever the order
    assert dims.length_of(L((), -3)) == 0  # an empty slice
    k = L.symbol((COUNTER, "k"))
    assert dims.length_of(k) == k  # changes with a counter: the shape classes keep it in its step
    assert dims.linear(("n0", 2)) == n0 - L((), 2) and dims.linear(None) is None


def test_what_is_certainly_not_negative():
    n0, n1 = L.symbol("n0"), L.symbol("n1")
    window = n1 - n0 + L((), 1)
    assert dims.nonnegative(n0 - L((), 2)) and not dims.nonnegative(n0 - L((), 3))  # labels are 2 or more
    assert dims.nonnegative(window) and dims.least(window) == 2  # labels in order: n0 < n1
    shorter = n0 - n1 + L((), 1)  # the taps longer than the signal: may be negative
    assert not dims.nonnegative(shorter) and dims.least(n1 - n0.times(2)) is None
    assert dims.nonnegative(shorter, facts=(shorter,)) and dims.nonnegative(shorter + n1, facts=(shorter,))
    k = L.symbol((COUNTER, "k"))
    bounds = {(COUNTER, "k"): (L(), n0 - L((), 1))}.get  # for k in range(n0)
    assert dims.nonnegative(k, bounds) and dims.nonnegative(n0 - L((), 1) - k, bounds)
    assert not dims.nonnegative(n0 - L((), 2) - k, bounds) and not dims.nonnegative(k)
    assert dims.not_one(n0 + n1) and dims.not_one(window) and not dims.not_one(shorter) and dims.not_one(0)


def test_slices_by_computed_bounds():
    n0, n1 = L.symbol("n0"), L.symbol("n1")
    m = n1 - n0 + L((), 1)
    k = L.symbol((COUNTER, "k"))
    bounds = {(COUNTER, "k"): (L(), n0 - L((), 1))}.get
    assert dims.sliced("n1", k, k + m, bounds, facts=(m,)) == m  # a convolution's window
    assert dims.sliced("n1", k, k + m, bounds) == m  # n0 < n1: m is 2 or more
    short = n0 - n1 + L((), 1)  # a signal shorter than its taps
    taps = {(COUNTER, "k"): (L(), n1 - L((), 1))}.get
    assert dims.sliced("n0", k, k + short, taps) is None  # may be negative: it counts from the end
    assert dims.sliced("n1", k + L((), 1), None, bounds) == n1 - k - L((), 1)  # x[k + 1:]: with k
    assert dims.sliced("n0", 0, 1) == 1 and dims.sliced("n0", n0 - L((), 1), None) == 1
    assert dims.sliced("n0", 0, 2) == 2 and dims.sliced("n0", 0, 3) is None  # 3 long, or 2
    assert dims.sliced(("n0", 3), 0, None) is None  # an axis that may be empty: no slice known


def test_joins_of_displays():
    assert dims.joined(([(1,), (("n0", 2),), (1,)],)) == ("n0",)
    assert dims.joined(([(1, "n1"), (("n0", 2), "n1")],)) == (("n0", 1), "n1")
    assert dims.joined(([("n0",), (("n0", 3),)],)) is None  # a part that may be negative as written
    assert dims.joined(([("n0",), ("n0", "n1")],)) is None  # ranks differ: numpy raises
    assert dims.joined((("n0",),)) is None  # not a display's items
    assert dims.stacked(([("n0",), ("n0",), ("n0",)],)) == (3, "n0")
    assert dims.stacked(([("n0",), ("n1",)],)) is None


# ----- classes ---------------------------------------------------------------------------------


def conv_windows(w, x):
    K = w.shape[0]
    m = x.shape[0] - K + 1
    y = np.zeros(m)
    for k in range(K):
        y = y + w[k] * x[k:k + m]
    return np.sum(np.tanh(y))


def conv_enumerate(w, x):
    m = len(x) - len(w) + 1  # no array made from m: m may be negative, the windows of other lengths
    y = 0.0
    for k, wk in enumerate(w):
        y = y + wk * x[k:k + m]
    return np.sum(np.tanh(y))


def conv_read_before_made(w, x):
    m = len(x) - len(w) + 1
    first = x[0:m] * 2.0  # before the array made from m: m may be negative here
    y = np.zeros(m)
    for k in range(len(w)):
        y = y + w[k] * x[k:k + m]
    return np.sum(np.tanh(y)) + np.sum(first ** 2)


def heat_joined(u0, r, n):
    u = u0
    for _ in range(n):
        interior = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = np.concatenate([u[:1], interior, u[-1:]])
    return np.sum(u ** 2)


def tails(x):
    total = 0.0
    n = len(x)
    for i in range(n - 1):
        d = x[i + 1:] - x[i]  # n - i - 1 long: changes with i
        total = total + np.sum(d * d)
    return total


def tails_named(x):
    total = 0.0
    for i in range(len(x) - 1):
        j = i + 1
        d = x[j:] - x[i]
        total = total + np.sum(d * d)
    return total


def tails_in_a_branch(x):
    total = 0.0
    for i in range(len(x) - 1):
        if i % 2 == 0:
            d = x[i + 1:] - x[i]  # bound and read in the branch's arm, in one step
            total = total + np.sum(d * d)
    return total


def stale_tail(x):
    total = 0.0
    prev = x[1:]
    for i in range(len(x) - 1):
        if i > 0:
            total = total + np.sum(prev * x[i:])  # prev: the last step's tail, n - i long
        prev = x[i + 1:]
    return total


def tail_after_the_loop(x):
    total = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1:] * x[i]
        total = total + np.sum(d)
    return total + np.sum(d * d)  # the last step's: i holds its counter still, but no class is kept


def targets(fn):
    return {t for stmt in flatten(lower(find_function(from_function(fn)), DEFAULT_TABLE).body) for t in stmt.targets}


def test_windows_joins_and_what_stays_unknown():
    rng = np.random.default_rng(0)
    w, x = rng.normal(size=4), rng.normal(size=21)
    window = L.of({"n1": 1, "n0": -1}, 1)
    found = classes_for(conv_windows, (w, x))
    assert found["y"] == found["x_k_k_m"] == found["y_2"] == (window,)
    # (a name of no class: its shape is not known; each name below is one the code binds)
    found = classes_for(conv_enumerate, (w, x))  # the signal longer than the taps: m >= 2
    assert found["x_k_k_m"] == (window,) and "y" not in found  # (y starts as 0.0)
    found = classes_for(conv_enumerate, (w, x[:3]))  # shorter (n0) than the taps (n1)
    assert "x_k_k_m" in targets(conv_enumerate) and "x_k_k_m" not in found
    found = classes_for(conv_read_before_made, (w, x))
    assert found["y"] == found["x_k_k_m"] == found["x_0_m"] == (window,)  # n0 < n1: m >= 2
    # a signal (n0) no longer than the taps (n1): m = n0 - n1 + 1 is known to be 0 or more only
    # after the array made from it
    shorter = L.of({"n0": 1, "n1": -1}, 1)
    found = classes_for(conv_read_before_made, (rng.normal(size=4), rng.normal(size=3)))
    assert found["y"] == found["x_k_k_m"] == (shorter,)
    assert "x_0_m" in targets(conv_read_before_made) and "x_0_m" not in found
    found = classes_for(heat_joined, (rng.normal(size=12), 0.25, 3))
    assert found["u"] == found["u_3"] == ("n0",) and found["u__1"] == found["u_neg1"] == (1,)
    found = classes_for(tails, (rng.normal(size=6),))
    tail = (L.of({"n0": 1, (COUNTER, "i"): -1}, -1),)  # n - i - 1, read in the step that bound it
    assert found["x_i_1"] == found["d"] == tail
    assert classes_for(tails_named, (rng.normal(size=6),))["d"] == tail  # j = i + 1, read in its step
    assert classes_for(tails_in_a_branch, (rng.normal(size=6),))["d_2"] == tail  # (d, in the arm)
    # (lowered: ``prev_2 = x[i + 1:]`` in the step, carried as ``prev``; ``d`` read after the loop)
    for fn, name, kept in [(stale_tail, "prev", "prev_2"), (tail_after_the_loop, "d", "x_i_1")]:
        found = classes_for(fn, (rng.normal(size=6),))
        assert name in targets(fn) and name not in found, fn.__name__
        assert found[kept] == tail, fn.__name__


CASES = [
    (conv_windows, lambda rng, n, K: (rng.normal(size=K), rng.normal(size=n))),
    (conv_enumerate, lambda rng, n, K: (rng.normal(size=K), rng.normal(size=n))),
    (conv_read_before_made, lambda rng, n, K: (rng.normal(size=K), rng.normal(size=n))),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_of_each_signature_in_turn(fn, make):
    grad = s2sgrad.grad(fn, argnums=(0, 1))
    rng = np.random.default_rng(1)
    # windows of every kind: longer than the taps, as long, one longer, of length 1, 2 taps
    for n, K in [(20, 4), (4, 4), (5, 4), (9, 8), (7, 2), (20, 4), (3, 3)]:
        args = make(rng, n, K)
        expected = [numerical_grad(fn, args, i) for i in (0, 1)]
        for _ in range(3):  # the first call, then the code made for the signature
            for g, e in zip(grad(*args), expected):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_joins_and_windows_record_no_shapes():
    rng = np.random.default_rng(2)
    args = (rng.normal(size=16), 0.25, 4)
    grad = s2sgrad.grad(heat_joined)
    expected = numerical_grad(heat_joined, args, 0)
    for n in (16, 2, 3, 16):
        args = (rng.normal(size=n), 0.25, 4)
        expected = numerical_grad(heat_joined, args, 0)
        for _ in range(3):
            np.testing.assert_allclose(grad(*args), expected, rtol=1e-6, atol=1e-8)
    made = s2sgrad.source(grad, like=(np.zeros(16), 0.25, 4))
    assert "unbroadcast" not in made and "np.shape(" not in made, made
    conv = s2sgrad.grad(conv_windows, argnums=(0, 1))
    made = s2sgrad.source(conv, like=(np.zeros(4), np.zeros(20)))
    assert "unbroadcast" not in made and "np.shape(" not in made and "template" not in made, made
    assert "x_bar[k : k + m] +=" in made, made


@pytest.mark.parametrize("fn", [tails, tails_named, tails_in_a_branch, stale_tail,
                                tail_after_the_loop])
def test_tails_gradient(fn):
    grad = s2sgrad.grad(fn)
    rng = np.random.default_rng(3)
    for n in (6, 2, 3, 6):
        args = (rng.normal(size=n),)
        expected = numerical_grad(fn, args, 0)
        for _ in range(3):
            np.testing.assert_allclose(grad(*args), expected, rtol=1e-6, atol=1e-8)
    if fn in (tails, tails_named, tails_in_a_branch):  # the tails' lengths change with i: known in each step, nothing recorded
        made = s2sgrad.source(grad, like=(np.zeros(6),))
        assert "unbroadcast" not in made and "np.shape(" not in made and ".shape" not in made, made


# ----- joins split back by their parts -------------------------------------------------------------


def ghost_cells(u, w):
    padded = np.concatenate([u[-1:] * 2.0, u, u[:1]])  # periodic ends around u
    return np.sum(np.tanh(padded[2:] - padded[:-2]) * w)


def two_of_one_length(a, b, w):
    both = np.concatenate([np.sin(a), b * a])  # 2 n long: each half's bound is no literal
    return np.sum(both * np.concatenate([w, w]))


def rows_stacked(x, w):
    return np.sum(np.stack([np.sin(x), x * w, np.cos(w)]) * np.tanh(x))


def blocks(A, B):
    return np.sum(np.concatenate([A, B[:2], A * B]) ** 2)


SPLITS = [
    (ghost_cells, lambda rng, n: (rng.normal(size=n), rng.normal(size=n))),
    (two_of_one_length, lambda rng, n: (rng.normal(size=n), rng.normal(size=n), rng.normal(size=n))),
    (rows_stacked, lambda rng, n: (rng.normal(size=n), rng.normal(size=n))),
    (blocks, lambda rng, n: (rng.normal(size=(n, 3)), rng.normal(size=(n, 3)))),
]


@pytest.mark.parametrize("fn,make", SPLITS, ids=[c[0].__name__ for c in SPLITS])
def test_joins_split_back_by_their_parts(fn, make):
    grad = s2sgrad.grad(fn, argnums=(0, 1))
    rng = np.random.default_rng(4)
    for n in (5, 2, 3, 5):
        args = make(rng, n)
        expected = [numerical_grad(fn, args, i) for i in (0, 1)]
        for _ in range(3):
            for g, e in zip(grad(*args), expected):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_parts_of_known_lengths_are_slices_of_the_adjoint():
    like = (np.zeros(6), np.zeros(6))
    made = s2sgrad.source(s2sgrad.grad(ghost_cells, argnums=(0, 1)), like=like)
    assert "split_concatenate" not in made and "[:1]" in made and "[-1:]" in made, made
    made = s2sgrad.source(s2sgrad.grad(rows_stacked, argnums=(0, 1)), like=like)
    assert "split_stack" not in made and "[0]" in made, made
    made = s2sgrad.source(s2sgrad.grad(two_of_one_length, argnums=(0, 1)), like=like + (np.zeros(6),))
    assert "split_concatenate" in made, made  # n0 | n0 of 2 n0: no literal bound


def test_third_order_through_windows():
    # the generated gradient's adds into a window read again twice, against differences of the
    # second level (the slow tier's third-order seed 173 reads a window's slice from a tape: a
    # slice's bounds carry no derivative, builtins.slice)
    rng = np.random.default_rng(8)
    w, x = rng.normal(size=3), rng.normal(size=9)
    d = rng.normal(size=9)

    def h1(w, x):
        return np.sum(s2sgrad.grad(conv_windows, argnums=1)(w, x) * d)

    def h2(w, x):
        return np.sum(s2sgrad.grad(h1, argnums=1)(w, x) * d)

    third = s2sgrad.grad(h2, argnums=1)(w, x)
    second = s2sgrad.grad(h1, argnums=1)
    eps = 1e-4
    expected = (second(w, x + eps * d) - second(w, x - eps * d)) / (2 * eps)
    np.testing.assert_allclose(third, expected, rtol=1e-4, atol=1e-6)


def triangle_products(W, X):
    s = 0.0
    for i in range(X.shape[0] - 1):
        H = X[i + 1:] @ W  # n - i - 1 rows: the weights' products are summed after the loop
        s = s + np.sum(np.tanh(H) * X[i, 0])
    return s


def triangle_dots(W, X):
    s = 0.0
    for i in range(X.shape[0] - 1):
        H = np.dot(W, X[:i + 1].T)  # i + 1 columns
        s = s + np.sum(np.tanh(H))
    return s


@pytest.mark.parametrize("fn,transposed", [(triangle_products, False), (triangle_dots, True)])
def test_products_of_lengths_that_change_each_step(fn, transposed):
    rng = np.random.default_rng(4)
    grad = s2sgrad.grad(fn, argnums=(0, 1))
    for n in (5, 2, 5):
        W, X = rng.normal(size=(2, 3) if transposed else (3, 2)), rng.normal(size=(n, 3))
        for _ in range(3):
            for k, got in enumerate(grad(W, X)):
                np.testing.assert_allclose(got, numerical_grad(fn, (W, X), k), rtol=1e-6, atol=1e-8)
    assert "unbroadcast" not in s2sgrad.source(grad, like=(W, X))
