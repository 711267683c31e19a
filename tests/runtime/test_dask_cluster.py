"""Gradients over chunked dask arrays on a ``dask.distributed.LocalCluster`` with worker processes
that this module starts and stops itself (issue 29): the data is generated chunk by chunk on the
workers, ``grad`` returns a lazy dask array (no task runs until ``.compute()``), the computed
gradient equals numpy's on the same data, and the task graph grows with the number of chunks,
not with the data. Skips where dask's distributed scheduler is not installed (``s2sgrad[dask]``
plus ``distributed``; the test extra has both)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2sgrad

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")


def logreg(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 - y) ** 2) + 1e-3 * np.sum(W1 ** 2)


@pytest.fixture(scope="module")
def client():
    """A client of a local cluster of two worker processes, one thread each, 300 MiB each."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cluster's own start-up notices
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           memory_limit="300MiB", dashboard_address=None)
        made = distributed.Client(cluster, set_as_default=False)
    try:
        yield made
    finally:
        made.close()
        cluster.close()


class _Counting:
    """A dask scheduler that sends each compute to the cluster and counts them."""

    def __init__(self, client):
        self.client, self.computes = client, 0

    def __call__(self, *args, **kwargs):
        self.computes += 1
        return self.client.get(*args, **kwargs)


def _tasks_run(client) -> int:
    """How many tasks the cluster's workers have run so far."""
    return sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())


def _chunked(rows, chunks, seed=0):
    """``X`` (rows x 4) and ``y`` (rows,) as dask arrays made chunk by chunk on the workers."""
    X = da.random.default_rng(seed).normal(size=(rows, 4), chunks=(rows // chunks, 4))
    y = (X[:, 0] - 0.5 * X[:, 1] > 0) * 1.0
    return X, y


def _lazily(client, fun, *args):
    """``fun(*args)`` with the cluster as the scheduler: its result, the computes it asked for
    and the tasks the workers ran (dask's warnings, e.g. for a numpy function it lacks, raised)."""
    scheduler, before = _Counting(client), _tasks_run(client)
    with warnings.catch_warnings(), dask.config.set(scheduler=scheduler):
        warnings.simplefilter("error")
        out = fun(*args)
    return out, scheduler.computes, _tasks_run(client) - before


def test_gradients_on_a_local_cluster_are_lazy_and_equal_numpys(client):
    Xd, yd = _chunked(4000, 8)
    rng = np.random.default_rng(1)
    w = rng.normal(size=4)
    params = (rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=6))

    g, computes, tasks = _lazily(client, s2sgrad.grad(logreg), w, Xd, yd)
    assert isinstance(g, da.Array) and g.shape == w.shape and (computes, tasks) == (0, 0)
    grads, computes, tasks = _lazily(client, s2sgrad.grad(mlp, (0, 1, 2)), *params, Xd, yd)
    assert (computes, tasks) == (0, 0) and all(isinstance(g, da.Array) for g in grads)
    (value, g_too), computes, tasks = _lazily(client, s2sgrad.value_and_grad(logreg), w, Xd, yd)
    assert (computes, tasks) == (0, 0) and isinstance(value, da.Array) and value.shape == ()

    # one compute on the cluster: the data and every result
    X, y, g, value, g_too, *grads = client.compute([Xd, yd, g, value, g_too, *grads], sync=True)
    assert _tasks_run(client) > 0  # the counter sees the workers' tasks
    want = s2sgrad.grad(logreg)(w, X, y)
    np.testing.assert_allclose(g, want, rtol=1e-12)
    np.testing.assert_allclose(g_too, want, rtol=1e-12)
    np.testing.assert_allclose(value, logreg(w, X, y), rtol=1e-12)
    np.testing.assert_allclose(g, s2sgrad.checks.numerical_grad(logreg, (w, X, y), 0),
                               rtol=1e-6, atol=1e-9)
    for k, (mine, want) in enumerate(zip(grads, s2sgrad.grad(mlp, (0, 1, 2))(*params, X, y))):
        assert mine.shape == params[k].shape
        np.testing.assert_allclose(mine, want, rtol=1e-12)


def test_the_task_graph_grows_with_the_chunks_not_the_data(client):
    w = np.array([0.5, -1.0, 0.25, 2.0])
    sizes = {}
    for rows, chunks in ((2000, 4), (4000, 4), (4000, 8)):
        g, computes, tasks = _lazily(client, s2sgrad.grad(logreg), w, *_chunked(rows, chunks))
        assert (computes, tasks) == (0, 0)
        sizes[rows, chunks] = len(g.__dask_graph__())
    assert sizes[2000, 4] == sizes[4000, 4] < sizes[4000, 8] <= 2 * sizes[4000, 4]
