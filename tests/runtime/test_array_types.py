"""Other array types through numpy's dispatch protocols (issue 29): a protocol-only array standing
in for CuPy (``__array_ufunc__`` and ``__array_function__`` over a wrapped ndarray, its
``__array__`` raising, and in its strict form refusing numpy arrays as operands, as CuPy does),
an ndarray subclass, and dask.array where it is installed. The gradient comes back as the
input's own type, never converted to an ndarray, and equals numpy's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.lib.mixins import NDArrayOperatorsMixin

import s2sgrad
from s2sgrad import GradientError
from s2sgrad import runtime as s2s
from s2sgrad.checks import numerical_grad


def _unwrap(value, strict):
    if isinstance(value, Protocol):
        return value.data
    if strict and isinstance(value, np.ndarray):
        raise TypeError(f"a Strict array does not take a numpy.ndarray operand (shape {value.shape})")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, strict) for v in value)
    return value


def _wrap(value, kind):
    if isinstance(value, (np.ndarray, np.generic)):
        return kind(np.asarray(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v, kind) for v in value)
    return value


class Protocol(NDArrayOperatorsMixin):
    """An array numpy's functions and ufuncs dispatch to; never converted to an ndarray. Takes
    numpy arrays as operands (as dask's arrays do); its results are Protocol arrays, reductions'
    0-d ones too (as CuPy's are)."""

    strict = False

    def __init__(self, data):
        assert type(data) is np.ndarray
        self.data = data

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"{type(self).__name__} arrays are never converted to numpy arrays implicitly")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            if not all(isinstance(o, Protocol) for o in kwargs["out"]):
                raise TypeError("out= must be an array of the same type")
            kwargs["out"] = tuple(o.data for o in kwargs["out"])
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs, self.strict), **kwargs), type(self))

    def __array_function__(self, func, types, args, kwargs):
        args = _unwrap(args, self.strict)
        kwargs = {k: _unwrap(v, self.strict) for k, v in kwargs.items()}
        return _wrap(func(*args, **kwargs), type(self))

    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    dtype = property(lambda self: self.data.dtype)
    T = property(lambda self: type(self)(self.data.T))
    real = property(lambda self: type(self)(np.real(self.data)))

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        return _wrap(self.data[_unwrap(index, self.strict)], type(self))

    def __setitem__(self, index, value):
        self.data[_unwrap(index, self.strict)] = _unwrap(value, self.strict)

    def __float__(self):  # CuPy's float() of a 0-d array (a device sync)
        return float(self.data)

    def __repr__(self):
        return f"{type(self).__name__}({self.data!r})"

    def reshape(self, *shape):
        return type(self)(self.data.reshape(*shape))

    def astype(self, dtype):
        return type(self)(self.data.astype(dtype))

    def sum(self, axis=None, keepdims=False):
        return _wrap(self.data.sum(axis=axis, keepdims=keepdims), type(self))


class Strict(Protocol):
    """CuPy's behaviour: a numpy array is not an operand."""

    strict = True


class Tagged(np.ndarray):
    """An ndarray subclass carrying an attribute (numpy's functions keep both)."""

    def __new__(cls, values, tag):
        made = np.asarray(values).view(cls)
        made.tag = tag
        return made

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", None)


def logreg(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 - y) ** 2)


def mlp_tree(params, X, y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"] - y) ** 2) / y.shape[0]


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return dict(w=rng.normal(size=4), X=rng.normal(size=(12, 4)), y=(rng.random(12) > 0.5) * 1.0,
                W1=rng.normal(size=(4, 5)), b1=rng.normal(size=5), W2=rng.normal(size=5))


def _data_of(value):
    return value.data if isinstance(value, Protocol) else value


def test_protocol_data_with_a_numpy_parameter(data):
    w, X, y = data["w"], data["X"], data["y"]
    g = s2sgrad.grad(logreg)(w, Protocol(X), Protocol(y))
    assert type(g) is Protocol  # computed on the data's type, not pulled into an ndarray
    np.testing.assert_allclose(g.data, s2sgrad.grad(logreg)(w, X, y), rtol=1e-13)
    np.testing.assert_allclose(g.data, numerical_grad(logreg, (w, X, y), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", [Protocol, Strict])
def test_logreg_and_mlp_on_protocol_arrays_keep_their_type(kind, data):
    w, X, y = data["w"], data["X"], data["y"]
    g = s2sgrad.grad(logreg)(kind(w), kind(X), kind(y))
    assert type(g) is kind and g.shape == w.shape and g.dtype == np.float64
    np.testing.assert_allclose(g.data, s2sgrad.grad(logreg)(w, X, y), rtol=1e-13)

    args = (data["W1"], data["b1"], data["W2"], X, y)
    grads = s2sgrad.grad(mlp, (0, 1, 2))(*(kind(a) for a in args))
    want = s2sgrad.grad(mlp, (0, 1, 2))(*args)
    for k, (got, ref) in enumerate(zip(grads, want)):
        assert type(got) is kind and got.shape == args[k].shape
        np.testing.assert_allclose(got.data, ref, rtol=1e-12)
        np.testing.assert_allclose(got.data, numerical_grad(mlp, args, k), rtol=1e-6, atol=1e-8)

    value, g = s2sgrad.value_and_grad(logreg)(kind(w), kind(X), kind(y))
    assert type(value) is kind and value.shape == () and type(g) is kind
    np.testing.assert_allclose(float(value), logreg(w, X, y), rtol=1e-13)


def softmax_ce(W, X, Y):
    z = X @ W
    m = np.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1))
    return np.mean(lse - np.sum(Y * z, axis=1))


def relu_net(W, X, Y):
    h = np.maximum(X @ W, 0.0)
    return np.sum(np.mean(h, axis=0) ** 2) + np.sum(np.where(h > 1, h, 0.0))


def norms(W, X, Y):
    return np.linalg.norm(W) + np.sum(np.sqrt(np.abs(W) + 1.0)) + np.dot(W[:, 0], W[:, 1])


def rows_and_variance(W, X, Y):
    return np.sum(W[1:, :] ** 2) + np.sum(W.T @ W) + np.sum(np.var(X @ W, axis=0))


def clipped_scan(W, X, Y):
    return np.sum(np.clip(W, -0.5, 0.5) ** 2) + np.sum(np.cumsum(X @ W, axis=0) ** 2)


@pytest.mark.parametrize("loss", [softmax_ce, relu_net, norms, rows_and_variance, clipped_scan])
def test_reductions_extrema_indexing_and_norms_on_a_strict_type(loss):
    rng = np.random.default_rng(1)
    W, X = rng.normal(size=(4, 3)), rng.normal(size=(8, 4))
    Y = np.eye(3)[rng.integers(0, 3, 8)]
    got = s2sgrad.grad(loss)(Strict(W), Strict(X), Strict(Y))
    assert type(got) is Strict and got.shape == W.shape
    np.testing.assert_allclose(got.data, s2sgrad.grad(loss)(W, X, Y), rtol=1e-12)
    np.testing.assert_allclose(got.data, numerical_grad(loss, (W, X, Y), 0), rtol=1e-6, atol=1e-7)


def test_pytree_leaves_of_a_protocol_type(data):
    params = {"W1": data["W1"], "b1": data["b1"], "W2": data["W2"]}
    got = s2sgrad.grad(mlp_tree)({k: Strict(v) for k, v in params.items()}, Strict(data["X"]),
                                 Strict(data["y"]))
    want = s2sgrad.grad(mlp_tree)(params, data["X"], data["y"])
    assert sorted(got) == sorted(want)
    for key in want:
        assert type(got[key]) is Strict
        np.testing.assert_allclose(got[key].data, want[key], rtol=1e-12)


def test_an_ndarray_subclass_comes_back_as_itself(data):
    w, X, y = data["w"], data["X"], data["y"]
    g = s2sgrad.grad(logreg)(Tagged(w, "weights"), X, y)
    assert type(g) is Tagged and g.tag == "weights"
    np.testing.assert_allclose(g, s2sgrad.grad(logreg)(w, X, y), rtol=1e-13)
    grads = s2sgrad.grad(mlp, (0, 1))(Tagged(data["W1"], "W1"), Tagged(data["b1"], "b1"), data["W2"], X, y)
    assert [(type(g).__name__, g.tag) for g in grads] == [("Tagged", "W1"), ("Tagged", "b1")]


def test_helpers_keep_the_array_type_and_never_convert():
    g = Strict(np.arange(6.0).reshape(2, 3))
    summed = s2s.unbroadcast(g, (1, 3))
    assert type(summed) is Strict and summed.shape == (1, 3)
    np.testing.assert_array_equal(summed.data, [[3.0, 5.0, 7.0]])
    assert type(s2s.unbroadcast(g, (3,))) is Strict
    x = Strict(np.ones((2, 3), np.float32))
    like = s2s.like(Strict(np.array(2.0)), x)  # one number spread over x, in x's dtype
    assert type(like) is Strict and like.shape == (2, 3) and like.dtype == np.float32
    a, b = Strict(np.ones((2, 4))), Strict(np.ones((4, 3)))
    assert type(s2s.matmul_vjp_a(g, a, b)) is Strict and type(s2s.matmul_vjp_b(g, a, b)) is Strict
    v = Strict(np.ones(4))
    assert s2s.matmul_vjp_b(Strict(np.ones(2)), a, v).shape == (4,)


def test_a_numpy_only_helper_refuses_rather_than_converting():
    def scan_product(w):
        return np.sum(np.cumprod(w, axis=0))

    with pytest.raises(GradientError, match="adjoint of np.cumprod works on numpy arrays only.*Strict"):
        s2sgrad.grad(scan_product)(Strict(np.array([1.0, 2.0, 3.0])))
    np.testing.assert_allclose(s2sgrad.grad(scan_product)(np.array([1.0, 2.0, 3.0])), [9.0, 4.0, 2.0])


def test_arguments_of_other_types_are_still_refused():
    with pytest.raises(GradientError, match="`w` is a str"):
        s2sgrad.grad(logreg)("w", np.ones((2, 2)), np.ones(2))


# dask.array: an optional extra (s2sgrad[dask]); these tests skip where it is not installed.


class _CountingScheduler:
    """A dask scheduler that counts the computes it is asked for."""

    def __init__(self):
        self.computes = 0

    def __call__(self, *args, **kwargs):
        from dask.local import get_sync

        self.computes += 1
        return get_sync(*args, **kwargs)


def _chunked(rows, chunks, seed=0):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(rows, 4)), (rng.random(rows) > 0.5) * 1.0
    return X, y, da.from_array(X, chunks=(rows // chunks, 4)), da.from_array(y, chunks=rows // chunks)


def _lazily(fun, *args):
    """``fun(*args)`` under a scheduler that counts computes (warnings raised as errors)."""
    dask = pytest.importorskip("dask")
    scheduler = _CountingScheduler()
    with warnings.catch_warnings(), dask.config.set(scheduler=scheduler):
        warnings.simplefilter("error")  # dask's FutureWarning for a numpy function it lacks
        out = fun(*args)
    return out, scheduler.computes


def test_dask_gradient_of_chunked_data_is_lazy_and_equals_numpys(data):
    da = pytest.importorskip("dask.array")
    X, y, Xd, yd = _chunked(400, 8)
    w = data["w"]
    assert _lazily(lambda a: a.sum().compute(), Xd)[1] == 1  # the counter sees a compute
    g, computes = _lazily(s2sgrad.grad(logreg), w, Xd, yd)
    assert computes == 0 and isinstance(g, da.Array) and g.shape == w.shape
    np.testing.assert_allclose(g.compute(), s2sgrad.grad(logreg)(w, X, y), rtol=1e-12)

    args = (data["W1"], data["b1"], data["W2"])
    grads, computes = _lazily(s2sgrad.grad(mlp, (0, 1, 2)), *args, Xd, yd)
    assert computes == 0 and all(isinstance(g, da.Array) for g in grads)
    for got, want in zip(grads, s2sgrad.grad(mlp, (0, 1, 2))(*args, X, y)):
        np.testing.assert_allclose(got.compute(), want, rtol=1e-12)

    # np.clip's mask was written in place into an ndarray (dask refuses out=)
    W = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    g, computes = _lazily(s2sgrad.grad(clipped_scan), da.from_array(W, chunks=2), Xd, None)
    assert computes == 0 and isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), s2sgrad.grad(clipped_scan)(W, X, None), rtol=1e-12)


def test_dask_task_graph_grows_with_the_chunks_not_the_data(data):
    w = data["w"]
    sizes = {}
    for rows, chunks in ((400, 4), (4000, 4), (4000, 8)):
        g, _ = _lazily(s2sgrad.grad(logreg), w, *_chunked(rows, chunks)[2:])
        sizes[rows, chunks] = len(g.__dask_graph__())
    assert sizes[400, 4] == sizes[4000, 4] < sizes[4000, 8]


def sliced_parameter(w, X, y):
    return np.sum((X[:, :2] @ w[:2]) ** 2) + np.sum(X[:, 1:] @ w[1:])


def rows_in_a_loop(w, X, y):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.sin(X[:, i] * w[i]))
    return total


def stacked_and_concatenated(w, X, y):
    z = np.stack([X @ w, X @ (w * 2.0)], axis=1)
    both = np.concatenate([z, z ** 2], axis=1)
    return np.sum(both @ np.arange(1.0, 5.0)) + np.sum(np.concatenate([w, X[0]], axis=None) ** 2)


def solved(w, X, y):
    A = X.T @ X / X.shape[0] + np.eye(4)
    return np.sum(np.linalg.solve(A, w) ** 2) + np.sum(np.linalg.solve(A, np.ones((4, 2))))


def products(w, X, y):
    return np.sum(np.prod(X[:, :2] * w[:2], axis=1)) + np.prod(np.tanh(X[:3, 2:] * w[2:]))


@pytest.mark.parametrize("loss", [sliced_parameter, rows_in_a_loop, stacked_and_concatenated, solved,
                                  products])
def test_adjoints_of_a_numpy_parameter_from_lazy_data_stay_lazy(loss, data):
    """A numpy parameter whose adjoint is another library's array (dask's, lazy): the adjoints of
    its slices, of a loop's rows, of np.stack/np.concatenate, of np.linalg.solve and of np.prod
    (no branch on the values) are made in that library (no compute), not written into an ndarray
    or converted."""
    da = pytest.importorskip("dask.array")
    X, y, Xd, yd = _chunked(400, 8)
    w = data["w"]
    g, computes = _lazily(s2sgrad.grad(loss), w, Xd, yd)
    assert computes == 0 and isinstance(g, da.Array) and g.shape == w.shape
    want = s2sgrad.grad(loss)(w, X, y)
    np.testing.assert_allclose(g.compute(), want, rtol=1e-12)
    np.testing.assert_allclose(want, numerical_grad(loss, (w, X, y), 0), rtol=1e-6, atol=1e-7)
    got = s2sgrad.grad(loss)(w, Protocol(X), Protocol(y))  # the same paths, an eager type
    assert type(got) is Protocol
    np.testing.assert_allclose(got.data, want, rtol=1e-12)


def fancy_index(w, X, y):
    return np.sum((X @ w)[np.array([0, 3, 3])] ** 2)


def test_an_integer_array_index_on_dask_is_refused_not_computed(data):
    """dask has no np.add.at: the adjoint of an integer-array index refuses (a GradientError
    naming the helper) rather than converting; an eager protocol type still scatters."""
    _, _, Xd, yd = _chunked(400, 8)
    w, X = data["w"], data["X"]
    with pytest.raises(GradientError, match="np.add.at, which dask.array.core.Array"):
        _lazily(s2sgrad.grad(fancy_index), w, Xd, yd)
    got = s2sgrad.grad(fancy_index)(w, Protocol(X), None)
    assert type(got) is Protocol
    np.testing.assert_allclose(got.data, s2sgrad.grad(fancy_index)(w, X, None), rtol=1e-12)


def test_jacobians_of_lazy_data_compute_with_a_warning(data):
    """jacfwd, jacrev and hessian carry batched tangents and Jacobian blocks as numpy arrays: over
    dask data they compute, and say so (a ComputeWarning naming the helper), not silently."""
    from s2sgrad.errors import ComputeWarning

    X, y, Xd, yd = _chunked(400, 8)
    w = data["w"]
    for transform in (s2sgrad.jacfwd, s2sgrad.jacrev, s2sgrad.hessian):
        with pytest.warns(ComputeWarning, match="(batched tangents|Jacobian) .*dask.array.core.Array"):
            got = transform(logreg)(w, Xd, yd)
        np.testing.assert_allclose(np.asarray(got), transform(logreg)(w, X, y), rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy arrays: no warning
        s2sgrad.hessian(logreg)(w, X, y)
