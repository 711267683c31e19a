"""Code made for the shapes of a call's arrays (specialize.shape_signature, dims.py, the
shape classes of analyze/shapes.py): the same gradients as the code made for any shape, for each
signature a function is called with in turn, and no shape bookkeeping between equal shapes."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad
from s2sgrad.errors import UsageError
from s2sgrad.analyze.scalars import known_scalars
from s2sgrad.analyze.shapes import shape_classes
from s2sgrad.analyze.shapes import summed_axes as dims_summed
from s2sgrad.pipeline import DEFAULT_TABLE, find_function, from_function, lower
from s2sgrad.returned import NUMBERS_ATTR
from s2sgrad import dims
from s2sgrad.specialize import shape_signature


# ----- the signature and the algebra ------------------------------------------------------------


def test_signature_labels_lengths_by_equality_and_keeps_ones():
    args = (np.zeros((3, 4)), np.zeros(4), 2.0, np.zeros((3, 1)), [1.0], np.zeros(()))
    assert shape_signature(("a", "b", "s", "c", "d", "e"), args) == (
        ("a", ("n0", "n1")), ("b", ("n1",)), ("c", ("n0", 1)), ("e", ()))
    # the lengths themselves are not in it: other lengths of the same pattern (and order), the
    # same signature; labels are numbered by length (n0 < n1), so another order is another one
    assert shape_signature(("a", "b"), (np.zeros((7, 9)), np.zeros(9))) == \
        shape_signature(("a", "b"), (np.zeros((3, 4)), np.zeros(4)))
    assert shape_signature(("a", "b"), (np.zeros((7, 2)), np.zeros(2))) == (("a", ("n1", "n0")), ("b", ("n0",)))
    # a subclass is not a plain array: its arithmetic may be another's
    assert shape_signature(("m",), (np.zeros((2, 2)).view(_Sub),)) == ()


class _Sub(np.ndarray):
    pass


def test_broadcast_of_labels_ones_and_unknown_dims():
    assert dims.broadcast(("n0", 1), ("n1",)) == ("n0", "n1")
    assert dims.broadcast(("n0",), (None,)) == ("n0",)  # an unknown dim is 1 or the same, or it raises
    assert dims.broadcast((1,), (None,)) == (None,)
    assert dims.broadcast((1, 1), ()) == (1, 1)
    assert dims.broadcast(("n0",), ("n1",)) is None  # two lengths: numpy raises
    assert dims.broadcast(("n0",), None) is None


def test_products_transposes_and_stacked_rows():
    assert dims.matmul((("n0", "n1"), ("n1", "n2"))) == ("n0", "n2")
    assert dims.matmul((("n1",), ("n1", "n2"))) == ("n2",)
    assert dims.matmul((("n0", "n1"), ("n1",))) == ("n0",)
    assert dims.matmul((("n1",), ("n1",))) == ()
    assert dims.matmul((("n5", "n0", "n1"), ("n1", "n2"))) is None  # stacks: not known
    assert dims.dot(((), ("n0", "n1"))) == ("n0", "n1")
    assert dims.transpose((("n0", 1, "n2"),)) == ("n2", 1, "n0")
    rows = dims.rows_product(dims.matmul)
    assert rows((("n3", "n0"), None, ("n0", "n1"))) == (None, "n1")
    assert dims.rows_product(dims.matmul, right=True)((("n3", "n1"), None, ("n0", "n1"))) == (None, "n0")


# ----- shape classes ----------------------------------------------------------------------------


def rnn(Wx, Wh, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h ** 2)


def grows(w, h0, n):
    h = h0
    for t in range(n):
        h = np.tanh(w + h)
    return np.sum(h)


def classes_for(fn, args):
    core = lower(find_function(from_function(fn)), DEFAULT_TABLE)
    params = [p.name for p in core.params]
    return shape_classes(core, DEFAULT_TABLE, known_scalars(core, DEFAULT_TABLE),
                         dict(shape_signature(params, args)))


def test_classes_follow_products_indexes_and_loops():
    args = (np.zeros((4, 5)), np.zeros((5, 5)), np.zeros((6, 4)), np.zeros(5))
    found = classes_for(rnn, args)
    assert found["h"] == found["h0"] == found["h_2"] == ("n1",)


def test_a_carried_value_whose_shape_grows_has_no_class():
    # h0 of shape (1,) broadcast against w's (n,): h is (1,) on entry and (n,) after a step
    found = classes_for(grows, (np.zeros(5), np.zeros(1), 3))
    assert "h" not in found and found["w"] == ("n0",)
    assert classes_for(grows, (np.zeros(5), np.zeros(5), 3))["h"] == ("n0",)


# ----- gradients, each signature in turn ----------------------------------------------------------


def bias_layer(W, x, b):
    return np.sum(np.tanh(x @ W + b) ** 2)


def outer_terms(a, b):
    c = np.tanh(a + b) * a
    return np.sum(c * np.mean(c, axis=0, keepdims=True)) + np.sum(b.T * 2.0)


def indexed(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total = total + np.sum(a[t] * b[-1] + a[:, 0][t])
    return total + np.sum(a[0] * b)


def scan(w, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] * w + h)
    return np.sum(h * w)


def reduced(a, b):
    return np.sum(np.sum(a, axis=-1) * b) + np.sum(np.max(a, axis=0) * np.sum(b))


def products(a, b):
    return np.sum(np.tanh(a @ b)) + np.sum(np.dot(a, b) ** 2) + np.sum(np.matmul(a, b) * 0.5)


SIGNATURES = [
    (products, [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((1, 4), (4, 1)),
                ((3, 4), (4, 1)), ((3, 1), (1, 5)), ((3, 4), (4, 5))]),
    (bias_layer, [((3, 4), (5, 3), (4,)), ((3, 4), (5, 3), (1, 4)), ((3, 4), (5, 3), (1,)),
                  ((3, 4), (5, 3), (5, 4)), ((3, 4), (5, 3), (4,))]),
    (outer_terms, [((3, 4), (3, 4)), ((3, 1), (3, 4)), ((3, 4), (4,)), ((1, 4), (3, 1)),
                   ((3, 4), (3, 4))]),
    (indexed, [((3, 4), (2, 4)), ((3, 1), (2, 4)), ((3, 4), (2, 1)), ((3, 4), (1, 4))]),
    (scan, [((4,), (4,), (6, 4)), ((4,), (1,), (6, 4)), ((1,), (4,), (6, 1)), ((4,), (4,), (6, 1)),
            ((4,), (4,), (6, 4))]),
    (reduced, [((3, 4), (3,)), ((3, 4), (1,)), ((3, 1), (3,)), ((3, 3), (3,))]),
]


@pytest.mark.parametrize("fn, signatures", SIGNATURES, ids=lambda v: getattr(v, "__name__", ""))
def test_each_signature_in_turn_gets_its_own_gradient(fn, signatures):
    """One gradient function called with arrays of several shapes in turn, each twice (the
    second call runs the code made for that signature): autograd's gradient each time."""
    grad = s2sgrad.grad(fn, argnums=tuple(range(len(signatures[0]))))
    twin = autograd.grad(_twin(fn), tuple(range(len(signatures[0]))))
    rng = np.random.default_rng(0)
    for shapes in signatures:
        args = tuple(rng.normal(size=shape) for shape in shapes)
        expected = twin(*args)
        for _ in range(3):
            got = grad(*args)
            for g, e, a in zip(got, expected, args):
                assert np.shape(g) == np.shape(a)
                np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _twin(fn):
    """``fn`` with numpy as autograd's."""
    namespace = dict(fn.__globals__, np=anp)
    return type(fn)(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def test_specialized_code_records_and_sums_no_shape_between_equal_shapes():
    grad = s2sgrad.grad(rnn, argnums=(0, 1))
    args = (np.zeros((4, 5)), np.zeros((5, 5)), np.zeros((6, 4)), np.zeros(5))
    generic, specialized = s2sgrad.source(grad), s2sgrad.source(grad, like=args)
    assert "s2s.unbroadcast" in generic and "_shape" in generic
    assert "s2s.unbroadcast" not in specialized and "h_matmul_Wh_shape" not in specialized
    assert "like=args) with arrays of shapes Wx: (n0, n1), Wh: (n1, n1)," in specialized


def test_source_like_is_for_grad_and_reverse_mode():
    grad = s2sgrad.grad(rnn)
    with pytest.raises(UsageError, match="reverse mode"):
        s2sgrad.source(grad, mode="fwd", like=(np.zeros((2, 2)),) * 4)
    with pytest.raises(UsageError, match="like"):
        s2sgrad.source(lambda x: x, like=(1.0,))


def fourier_mixed(x, w):
    z = x * w
    return np.real(np.sum(np.fft.fft(z) * np.sin(x))) + np.sum(z * z)


def test_a_real_values_adjoint_meeting_complex_contributions_adds_out_of_place():
    """Complex numbers in flight (an FFT of a real array): a real value's adjoint gets complex
    contributions, which an in-place ``x_bar += ...`` into its real array cannot take."""
    rng = np.random.default_rng(1)
    args = (rng.normal(size=6), rng.normal(size=6))
    grad = s2sgrad.grad(fourier_mixed, argnums=(0, 1))
    expected = autograd.grad(_twin(fourier_mixed), (0, 1))(*args)
    for _ in range(2):  # the code for any shape, then the code for these shapes
        for g, e in zip(grad(*args), expected):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    assert "+=" not in s2sgrad.source(grad, like=args)


def test_sums_back_to_known_shapes_are_written_with_their_axes():
    """Where both shapes are known, the sum back to an operand's shape is ``s2s.axis_sum`` (numpy's
    sum, runtime/sums.py) over the axes it was broadcast along, written when the code is made (no shape recorded)."""
    grad = s2sgrad.grad(bias_layer, argnums=(0, 1, 2))
    W, x = np.zeros((3, 4)), np.zeros((5, 3))
    row = s2sgrad.source(grad, like=(W, x, np.zeros(4)))
    kept = s2sgrad.source(grad, like=(W, x, np.zeros((1, 4))))
    one = s2sgrad.source(grad, like=(W, x, np.zeros(1)))
    assert "b_bar = s2s.axis_sum(" in row and "axis=0)" in row and "s2s.unbroadcast" not in row
    assert "axis=0, keepdims=True)" in kept and "s2s.unbroadcast" not in kept
    assert one.count("s2s.axis_sum(") == 2 and "axis=1, keepdims=True), axis=0" in one
    assert dims_summed(("n0",), ("n1", "n0")) == ((0,), ())
    assert dims_summed((1, "n0"), ("n1", "n0")) == ((), (0,))
    assert dims_summed((), ("n1", "n0")) == ((0, 1), ())
    assert dims_summed((None,), ("n1",)) is None


def reductions_and_views(a, b):
    rows = np.sum(a, axis=1)
    kept = np.max(a, axis=-1, keepdims=True)
    full = np.mean(a)
    flipped = a.T
    first = a[0]
    column = a[:, 0]
    head = a[:2]
    top = a[:3]
    return np.sum(rows * b) + np.sum(kept * a) + full + np.sum(flipped @ b) + np.sum(first * column[0] * head) \
        + np.sum(top)


def test_classes_of_reductions_transposes_and_indexes():
    found = classes_for(reductions_and_views, (np.zeros((3, 4)), np.zeros(3)))
    assert found["a"] == ("n0", "n1") and found["b"] == ("n0",)
    assert found["rows"] == ("n0",) and found["kept"] == ("n0", 1) and found["full"] == "()"
    assert found["flipped"] == ("n1", "n0") and found["first"] == ("n1",) and found["column"] == ("n0",)
    assert found["head"] == (2, "n1")  # a label stands for a length of 2 or more: a[:2] is 2 long
    assert "top" not in found  # a[:3]: 3 long, or n0 long where n0 is 2


def test_other_lengths_of_a_signature_made_before_run_its_code_at_once():
    grad = s2sgrad.grad(scan, argnums=(0, 1))
    rng = np.random.default_rng(2)
    for steps in (5, 5, 6, 7):  # 5 twice: the signature's code is made; 6 and 7 run it
        args = (rng.normal(size=4), rng.normal(size=4), rng.normal(size=(steps, 4)))
        expected = autograd.grad(_twin(scan), (0, 1))(*args)
        for g, e in zip(grad(*args), expected):
            np.testing.assert_allclose(g, e, rtol=1e-10)
    made = [key for key in getattr(grad, NUMBERS_ATTR).made if key[1]]
    assert len(made) == 1, made


def made_from_shape(c, x):
    y = np.zeros(x.shape)
    for ck in c:
        y = x * y + ck
    return np.sum(np.sin(y))


def test_an_array_made_from_a_shape_has_that_shape():
    found = classes_for(made_from_shape, (np.zeros(5), np.zeros(7)))
    assert found["y"] == found["x"] == ("n1",) and found["ck"] == "()"
    grad = s2sgrad.grad(made_from_shape, argnums=(0, 1))
    assert "s2s.unbroadcast" not in s2sgrad.source(grad, like=(np.zeros(5), np.zeros(7)))


def trims(x, w):
    d = x[1:] - x[:-1]
    u = np.zeros_like(x)
    u[1:-1] = x[2:] - 2.0 * x[1:-1] + x[:-2]
    return np.sum(d ** 2 * w[:-1]) + np.sum(u * x) + np.sum(d[:, None] * x[1:][None, :])


def test_trimmed_slices_share_a_class_and_may_be_one_long():
    found = classes_for(trims, (np.zeros(6), np.zeros(6)))
    assert found["d"] == (("n0", 1),) and found["u"] == ("n0",)
    # x of length 2: x[1:] is 1 long and broadcasts; each signature its own code, each right
    grad = s2sgrad.grad(trims, argnums=(0, 1))
    rng = np.random.default_rng(3)
    for n in (6, 2, 6, 3, 2):
        args = (rng.normal(size=n), rng.normal(size=n))
        expected = [numerical_grad(trims, args, i) for i in (0, 1)]  # (autograd: no index writes)
        for _ in range(2):
            for g, e in zip(grad(*args), expected):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    assert dims.broadcast((("n0", 1),), ("n0",)) == ("n0",)  # 1 long, or n0 long, or it raises
    assert dims.broadcast((("n0", 1),), (1,)) == (("n0", 1),)
    assert dims.broadcast((("n0", 1),), (None,)) == (None,)
    assert dims_summed((("n0", 1),), ("n0",)) is None  # it may be 1 long: summed when the code runs


def counter_reused(x, rows):
    total = 0.0
    for t in range(2):
        total = total + np.sum(x[t])
    for t in rows:  # t: an integer array here
        total = total + np.sum(x[t] * x[0])
    return total


def test_a_counters_name_bound_to_other_values_elsewhere_is_no_integer():
    args = (np.arange(12.0).reshape(3, 4), [np.array([0, 2])])
    found = classes_for(counter_reused, args)
    assert "x_t" not in found or found["x_t"] != ("n1",)
    grad = s2sgrad.grad(counter_reused)
    for _ in range(2):
        np.testing.assert_allclose(grad(*args), numerical_grad(counter_reused, args, 0), rtol=1e-6)


SCALE = np.array([1.0, 2.0, 3.0])


def _helper(v):
    return np.sin(v)


def _cos(v):
    return np.cos(v)


def _tanh(v):
    return np.tanh(v)


def scaled(x):
    return np.sum(_helper(x * SCALE) ** 2)


def test_calls_run_at_once_read_globals_and_helpers_rebound_since():
    """From the third call of a kind on, Calls runs the sweeps made before at once: a global
    array and a helper function rebound between calls are read as Python would read them."""
    global SCALE, _helper
    grad = s2sgrad.grad(scaled)
    x = np.array([0.3, -0.2, 0.5])
    saved = SCALE, _helper
    try:
        for scale, helper in [(SCALE, _helper), (SCALE, _helper), (SCALE, _helper),
                              (np.array([-1.0, 0.5, 4.0]), _helper),
                              (np.array([-1.0, 0.5, 4.0]), _cos),
                              (np.array([-1.0, 0.5, 4.0]), _cos),
                              (np.array([2.0, 0.5, 1.0]), _tanh)]:
            SCALE, _helper = scale, helper
            oracle = {_cos: anp.cos, _tanh: anp.tanh}.get(helper, anp.sin)
            ag = autograd.grad(lambda v: anp.sum(oracle(v * scale) ** 2))(x)
            np.testing.assert_allclose(grad(x), ag, rtol=1e-12)
    finally:
        SCALE, _helper = saved


def made_from_lengths(P, m, c):
    n = P.shape[0]
    k = len(m)
    D = P[:, None, :] - P[None, :, :]
    r2 = np.sum(D ** 2, axis=-1) + np.eye(n)
    w = np.outer(m, m) * (1.0 - np.eye(n, M=k))
    acc = np.zeros((n, 1))
    acc = acc + np.sum(w / np.sqrt(r2), axis=1, keepdims=True)
    head = m[:k]
    rows = np.ones((k, P.shape[1])) * P[0, None] * c[None, :, 0]  # c: (P.shape[1], any)
    return np.sum(acc * head[:, None]) + np.sum(np.ones(n) * m) + np.sum(rows * P)


def _made_from_lengths_oracle(P, m, c):
    n, k = P.shape[0], m.shape[0]
    D = P[:, None, :] - P[None, :, :]
    r2 = anp.sum(D ** 2, axis=-1) + np.eye(n)
    w = anp.outer(m, m) * (1.0 - np.eye(n, M=k))
    acc = np.zeros((n, 1)) + anp.sum(w / anp.sqrt(r2), axis=1, keepdims=True)
    rows = np.ones((k, P.shape[1])) * P[0, None] * c[None, :, 0]
    return anp.sum(acc * m[:, None]) + anp.sum(np.ones(n) * m) + anp.sum(rows * P)


def test_lengths_read_from_shapes_make_known_shapes():
    """``n = x.shape[0]``, ``len(x)``: the dim itself, so arrays made from them (``np.zeros``,
    ``np.ones``, ``np.eye``), ``np.outer`` of vectors, ``[:, None]`` and ``m[:n]`` of its whole
    length have known shapes: no shape recorded, nothing summed back at run time."""
    args = (np.zeros((4, 3)), np.zeros(4), np.zeros((3, 2)))
    found = classes_for(made_from_lengths, args)
    n, d = dict(shape_signature(("P", "m", "c"), args))["P"]
    assert found["D"] == (n, n, d)
    assert found["r2"] == found["w"] == (n, n)
    assert found["acc"] == found["acc_2"] == (n, 1)
    assert found["head"] == (n,)
    assert found["rows"] == (n, d)
    grad = s2sgrad.grad(made_from_lengths, argnums=(0, 1))
    rng = np.random.default_rng(5)
    for shape_p, shape_c in [((4, 3), (3, 2)), ((1, 3), (3, 2)), ((4, 1), (1, 1)),
                             ((1, 1), (1, 2)), ((5, 2), (2, 1)), ((4, 3), (3, 4)), ((4, 3), (1, 2))]:
        args = (rng.normal(size=shape_p), rng.normal(size=shape_p[0]), rng.normal(size=shape_c))
        expected = autograd.grad(_made_from_lengths_oracle, argnum=(0, 1))(*args)
        for _ in range(3):
            for g, e in zip(grad(*args), expected):
                assert g.shape == e.shape
                np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    text = s2sgrad.source(grad, like=args)
    forward = text.split("def made_from_lengths_bwd")[0]
    assert "unbroadcast" not in text and "np.shape(" not in forward  # no shape recorded


def lengths_misread(x, y):
    n = x.shape[1]  # not the first axis
    a = np.zeros(n) + x[:, 0]  # (n1,) + (n0,): broadcasts only where one is 1
    b = y[:n - 1]  # a slice of a computed length: not known
    return np.sum(a * a) + np.sum(b * b)


def test_lengths_of_other_axes_and_computed_bounds_are_not_taken_for_others():
    found = classes_for(lengths_misread, (np.zeros((1, 4)), np.zeros(6)))
    assert found.get("b") in (None,) or found["b"] != ("n1",)
    grad = s2sgrad.grad(lengths_misread, argnums=(0, 1))
    rng = np.random.default_rng(6)
    for shape_x, m in [((1, 4), 6), ((3, 1), 6), ((1, 1), 2), ((2, 2), 5)]:
        args = (rng.normal(size=shape_x), rng.normal(size=m))
        expected = [numerical_grad(lengths_misread, args, i) for i in (0, 1)]
        for _ in range(3):
            for g, e in zip(grad(*args), expected):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def test_lengths_that_are_small_multiples_of_another_are_labelled_as_such():
    args = (np.zeros((16, 128)), np.zeros((32, 128)), np.zeros(32), np.zeros((50, 16)), np.zeros(7))
    signature = dict(shape_signature("abcde", args))
    # (numbered by length: 7 is n0, 16 is n1, 50 is n2)
    assert signature["a"] == ("n1", "8*n1") and signature["b"] == ("2*n1", "8*n1")
    assert signature["c"] == ("2*n1",) and signature["d"] == ("n2", "n1") and signature["e"] == ("n0",)
    assert shape_signature("ab", (np.zeros(9), np.zeros(3))) == (("a", ("3*n0",)), ("b", ("n0",)))
    assert shape_signature("ab", (np.zeros(27), np.zeros(3))) == (("a", ("n1",)), ("b", ("n0",)))  # 9x
    assert dims.times("2*n0", 3) == "6*n0" and dims.times("n0", 9) is None and dims.times(1, 2) == 2
    assert dims.sliced("4*n0", "n0", "2*n0") == "n0" and dims.sliced("4*n0", "3*n0", None) == "n0"
    assert dims.sliced("4*n0", "2*n0", "5*n0") == "2*n0"  # past the end: numpy clips it to the end
    assert dims.sliced("4*n0", "2*n0", "n1") is None  # before the end or past it: not known
    assert dims.sliced("4*n1", "n0", "2*n0") == "n0"  # n0 < n1: the stop is before the end
    assert dims.sliced("4*n0", "n1", "2*n1") is None and dims.sliced("n0", 0, None) == "n0"


def gates(a, c):
    H = c.shape[0]
    i = np.tanh(a[:H])
    f = np.sin(a[H:2 * H])
    o = a[2 * H:3 * H] ** 2
    g = np.cos(a[3 * H:])
    tail = a[2 * H:5 * H]  # past the end: numpy clips it (2 H long)
    return np.sum(f * c + i * g * o) + np.sum(tail ** 3) * np.sum(a[H:4 * H] * a[:3 * H])


def test_slices_by_multiples_of_a_length_have_known_lengths():
    found = classes_for(gates, (np.zeros(12), np.zeros(3)))
    assert found["i"] == found["f"] == found["g"] == found["c"] == ("n0",)
    assert found["tail"] == ("2*n0",)
    grad = s2sgrad.grad(gates, argnums=(0, 1))
    oracle = autograd.grad(lambda a, c: anp.sum(anp.sin(a[len(c):2 * len(c)]) * c + anp.tanh(a[:len(c)]) * anp.cos(
        a[3 * len(c):]) * a[2 * len(c):3 * len(c)] ** 2) + anp.sum(a[2 * len(c):] ** 3) * anp.sum(
        a[len(c):4 * len(c)] * a[:3 * len(c)]), argnum=(0, 1))
    rng = np.random.default_rng(7)
    for hidden in (3, 1, 2, 5, 3):
        args = (rng.normal(size=4 * hidden), rng.normal(size=hidden))
        for _ in range(3):
            for g, e in zip(grad(*args), oracle(*args)):
                np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    text = s2sgrad.source(grad, like=(np.zeros(12), np.zeros(3)))
    assert text.count("unbroadcast") == 0


DATA = np.zeros((6, 3))
OFFSET = np.zeros(6)


def regression(W, b):
    r = np.tanh(DATA @ W + b) @ np.ones(W.shape[1]) - OFFSET
    return np.sum(r * r)


def test_global_arrays_shapes_are_in_the_signature_and_the_records_key():
    """Code made for a call's shapes knows the shapes of the global arrays the function reads;
    a global rebound to an array of another shape (ones, broadcasting) or to a number is a call
    of another kind: every call's gradient is right."""
    global DATA, OFFSET
    grad = s2sgrad.grad(regression, argnums=(0, 1))
    rng = np.random.default_rng(8)
    saved = DATA, OFFSET
    try:
        for rows, offset, b_shape in [(6, (6,), (4,)), (6, (6,), (4,)), (9, (9,), (4,)), (1, (1,), (4,)),
                                      (6, (1,), (4,)), (6, (6,), (1,)), (6, None, (4,)), (6, (6,), (4,))]:
            DATA = rng.normal(size=(rows, 3))
            OFFSET = rng.normal(size=offset) if offset else 0.25
            W, b = rng.normal(size=(3, 4)) * 0.5, rng.normal(size=b_shape)
            data, off = DATA, OFFSET
            oracle = autograd.grad(lambda W, b: anp.sum((anp.tanh(anp.dot(data, W) + b) @ np.ones(4) - off) ** 2),
                                   argnum=(0, 1))
            for _ in range(3):
                for g, e in zip(grad(W, b), oracle(W, b)):
                    assert g.shape == e.shape
                    np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
        DATA, OFFSET = rng.normal(size=(7, 3)), rng.normal(size=7)
        text = s2sgrad.source(grad, like=(np.zeros((3, 4)), np.zeros(4)))
        assert "DATA: (n2, n0)" in text and "unbroadcast" not in text and "DATA.T @" in text
    finally:
        DATA, OFFSET = saved


def test_a_closures_array_and_a_global_named_like_a_parameter():
    scale = np.array([1.0, 2.0, 3.0])

    def inner(W, DATA):  # DATA: the parameter, not the global
        return np.sum(np.sin(W * scale) * DATA)

    grad = s2sgrad.grad(inner, argnums=(0, 1))
    rng = np.random.default_rng(9)
    for shape in [(3,), (3,), (2, 3), (2, 3), (1,), (1,)]:
        args = (rng.normal(size=shape), rng.normal(size=shape))
        oracle = autograd.grad(lambda W, D: anp.sum(anp.sin(W * scale) * D), argnum=(0, 1))
        for _ in range(3):
            for g, e in zip(grad(*args), oracle(*args)):
                np.testing.assert_allclose(g, e, rtol=1e-12)


def literal_lengths(w, b):
    W = w.reshape(3, 4)
    h = np.tanh(W * b + np.zeros((3, 4)))
    head = h[:, :2] * np.ones(2)
    rows = np.reshape(h, (4, 3))[1:] + np.eye(3)[:1]
    return np.sum(head ** 2) + np.sum(rows * rows) + np.sum(h[:2, 1:3] * np.ones((2, 2)))


def test_literal_lengths_make_known_shapes():
    """Lengths the code writes as literals (``reshape(3, 4)``, ``np.zeros((3, 4))``, ``[:, :2]``)
    are lengths: known shapes, which broadcast against a label (the two are equal or numpy raises)."""
    assert dims.broadcast(("n0", 4), (1, "n1")) == ("n0", "n1") and dims.broadcast((3,), (4,)) == (None,)
    assert dims.sliced(4, 0, 3) == 3 and dims.sliced(4, 1, None) == 3 and dims.sliced(4, 3, 9) == 1
    assert dims.sliced("n0", 0, 3) is None and dims.trimmed(5, 2) == 3 and dims.trimmed(2, 2) is None
    found = classes_for(literal_lengths, (np.zeros(12), np.zeros(4)))
    assert found["W"] == (3, 4) and found["reshape_h"] == (4, 3) and found["reshape_h_1"] == (3, 3)
    assert found["h"] == (3, "n0")  # 4 and b's n0 meet: n0 (the same length, or numpy raises)
    assert classes_for(literal_lengths, (np.zeros(12), np.zeros(1)))["head"] == (3, 2)
    grad = s2sgrad.grad(literal_lengths, argnums=(0, 1))
    oracle = autograd.grad(lambda w, b: anp.sum((anp.tanh(anp.reshape(w, (3, 4)) * b)[:, :2]) ** 2) + anp.sum(
        (anp.reshape(anp.tanh(anp.reshape(w, (3, 4)) * b), (4, 3))[1:] + np.eye(3)[:1]) ** 2) + anp.sum(
        anp.tanh(anp.reshape(w, (3, 4)) * b)[:2, 1:3]), argnum=(0, 1))
    rng = np.random.default_rng(10)
    for b_shape in [(4,), (1,), (3, 1), (4,), (1, 4)]:
        args = (rng.normal(size=12), rng.normal(size=b_shape))
        for _ in range(3):
            for g, e in zip(grad(*args), oracle(*args)):
                assert g.shape == e.shape
                np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    text = s2sgrad.source(grad, like=(np.zeros(12), np.zeros(1)))
    # only np.eye(3)[:1]'s sum (a constant expression's shape is not followed) is left to run time
    assert text.count("unbroadcast") == 1 and "s2s.axis_sum(s2s.axis_sum(total_bar * W, axis=1, keepdims=True), axis=0)" in text


SHADOWED = np.ones((2, 3))


def _reads_shadowed(v):
    return v * SHADOWED  # the global (2, 3)


def shadowing(w):
    total = 0.0
    for SHADOWED in (w, w * 2.0):  # a local of the global's name, of w's shape (3,)
        total = total + np.sum(np.sin(SHADOWED))
    return total + np.sum(_reads_shadowed(w) ** 2)


def test_a_global_array_named_like_a_local_is_not_taken_for_it():
    grad = s2sgrad.grad(shadowing)
    w = np.array([0.3, -0.5, 0.9])
    expected = numerical_grad(shadowing, (w,), 0)
    for _ in range(3):
        np.testing.assert_allclose(grad(w), expected, rtol=1e-6, atol=1e-8)


def test_linear_algebra_results_have_known_shapes():
    assert dims.square((("n0", "n0"),)) == ("n0", "n0")
    assert dims.square((("n0",),)) is None
    assert dims.solve((("n0", "n0"), ("n0",))) == ("n0",)
    assert dims.solve((("n0", "n0"), ("n0", "n1"))) == ("n0", "n1")
    assert dims.solve((("n2", "n0", "n0"), ("n0", "n1"))) is None  # stacks: not known here
    assert dims.determinant((("n2", "n0", "n0"),)) == ("n2",)
    assert dims.diagonal_of((("n0",),)) == ("n0", "n0")
    assert dims.diagonal_of((("n0", "n0"),)) == ("n0",)
    assert dims.diagonal_of((("n0", "n1"),)) is None
    assert dims.trace((("n0", "n0"),)) == ()
    assert dims.number((("n0", "n1"),)) == () == dims.number((("n0",), ("n0",)))  # norm, vdot
    assert dims.number((("n0", "n1"), (), ())) is None  # norm(x, ord, axis): not one number


def gaussian(A, mu, X):
    cov = A @ A.T + np.eye(len(mu))
    chol = np.linalg.cholesky(cov)
    diff = X - mu
    alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, diff.T))
    inv = np.linalg.inv(cov)
    return (-0.5 * np.sum(diff.T * alpha) - X.shape[0] * np.sum(np.log(np.diag(chol)))
            + np.trace(inv) * np.linalg.det(cov) + np.sum(np.diag(mu) * inv)
            + np.linalg.norm(diff) ** 2)


def test_linear_algebra_in_code_made_for_shapes_records_no_shapes():
    rng = np.random.default_rng(2)
    args = (rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(5, 3)))
    grad = s2sgrad.grad(gaussian, argnums=(0, 1, 2))
    expected = autograd.grad(_twin(gaussian), (0, 1, 2))(*args)
    for _ in range(3):
        for g, e in zip(grad(*args), expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
    made = s2sgrad.source(grad, like=args)
    assert "unbroadcast" not in made and "np.shape(" not in made, made


def huber(pred, target, delta):
    r = pred - target
    a = np.abs(r)
    inside = a <= delta
    far = 2.0 < a
    return np.sum(np.where(inside, 0.5 * r ** 2, delta * (a - 0.5 * delta)) * np.where(far, 2.0, 1.0))


def test_a_comparison_of_known_shapes_has_their_broadcast_shape():
    rng = np.random.default_rng(4)
    args = (rng.normal(size=(4, 3)) * 2, rng.normal(size=3), 1.0)
    grad = s2sgrad.grad(huber)
    expected = autograd.grad(_twin(huber))(*args)
    for _ in range(3):
        np.testing.assert_allclose(grad(*args), expected, rtol=1e-10, atol=1e-12)
    made = s2sgrad.source(grad, like=args)
    assert "unbroadcast" not in made and "np.shape(" not in made, made
    core = lower(find_function(from_function(huber)), DEFAULT_TABLE)
    classes = shape_classes(core, DEFAULT_TABLE, known_scalars(core, DEFAULT_TABLE, frozenset({"delta"})),
                            {"pred": ("n0", "n1"), "target": ("n1",)})
    assert classes["inside"] == classes["far"] == ("n0", "n1")
    generic = shape_classes(core, DEFAULT_TABLE, frozenset(), {})
    assert "inside" not in generic or not isinstance(generic["inside"], tuple)


def affine(w, b, X):
    return np.mean(np.tanh(X @ w + b) * (X @ w))


def test_a_number_added_to_an_array_sums_its_adjoint_over_every_axis():
    rng = np.random.default_rng(6)
    args = (rng.normal(size=3), 0.3, rng.normal(size=(5, 3)))
    grad = s2sgrad.grad(affine, argnums=(0, 1))
    expected = autograd.grad(_twin(affine), (0, 1))(*args)
    for _ in range(3):
        got = grad(*args)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
        assert isinstance(got[1], float)
    made = s2sgrad.source(grad, like=args)
    assert "unbroadcast" not in made and "np.shape(b)" not in made, made


def gauss_logdet(A, mu, X):
    S = A @ A.T + np.eye(A.shape[0])
    sign, logdet = np.linalg.slogdet(S)
    R = X - mu
    n, d = X.shape
    return -0.5 * np.sum(R * np.linalg.solve(S, R.T).T) - 0.5 * n * logdet - 0.5 * n * d * np.log(2.0 * np.pi)


def test_items_of_a_shape_constants_and_slogdets_outputs_are_numbers():
    core = lower(find_function(from_function(gauss_logdet)), DEFAULT_TABLE)
    scalars = known_scalars(core, DEFAULT_TABLE)
    assert {"n", "d"} <= scalars  # n, d = X.shape
    classes = shape_classes(core, DEFAULT_TABLE, scalars, {"A": ("n0", "n0"), "mu": ("n0",), "X": ("n1", "n0")})
    assert classes["sign"] == classes["logdet"] == "()"
    rng = np.random.default_rng(7)
    args = (rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(6, 3)))
    grad = s2sgrad.grad(gauss_logdet, argnums=(0, 1))
    expected = autograd.grad(_twin(gauss_logdet), (0, 1))(*args)
    for _ in range(3):
        for g, e in zip(grad(*args), expected):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
    made = s2sgrad.source(grad, like=args)
    assert "unbroadcast" not in made and "np.shape(" not in made, made
