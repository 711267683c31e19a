"""s2sgrad's gradients on dask over a LocalCluster (issue 29): run on demand, not a test.

The gradient of a logistic-regression loss and of a tanh-MLP loss over data generated chunk by
chunk on the workers (``da.random``), larger than one worker's memory limit: the time, the rows
per second, each worker's peak memory (process RSS from the workers' system monitors, sampled
every 100 ms) and the task graph's size, on 1 and on 2 worker processes (one thread each). For
scale: numpy on the same computation streamed chunk by chunk in one process, and, on data that
fits, s2sgrad's gradient on numpy arrays against the same gradient on that data persisted on the
cluster.

    python benchmarks/dask_scale.py             # 2.5e6 x 50 float64 (1 GB), workers limited to 400 MiB: 40 s to 3 min on 2 shared cores
    python benchmarks/dask_scale.py --full      # the issue's 2e7 x 50 (8 GB), workers limited to 1 GiB
    python benchmarks/dask_scale.py --rows 1e6 --limit 256MiB --chunk-rows 50000

Needs ``dask[array,distributed]`` (the test extra has it). Exit status 1 when a gradient disagrees
(dask's against numpy's on the data that fits, 1 worker's against 2 workers' on the large data).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import s2sgrad

try:
    import dask
    import dask.array as da
    import distributed
except ImportError:  # pragma: no cover
    sys.exit("dask_scale.py needs dask[array,distributed]: pip install 'dask[array,distributed]'")

FEATURES = 50
HIDDEN = 32


def logreg(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def mlp(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 - y) ** 2)


def targets(X, loss_name):
    """``y`` for ``X`` (a numpy or a dask array): labels for logreg, a smooth target for mlp."""
    if loss_name == "logreg":
        return (X[:, 0] - 0.5 * X[:, 1] > 0) * 1.0
    return np.tanh(X[:, 0]) + 0.1 * X[:, 2]


def parameters(loss_name):
    """The loss's parameters (numpy arrays, fixed seed) and the argnums of their gradient."""
    rng = np.random.default_rng(7)
    if loss_name == "logreg":
        return (0.1 * rng.normal(size=FEATURES),), (0,)
    return (0.1 * rng.normal(size=(FEATURES, HIDDEN)), 0.1 * rng.normal(size=HIDDEN),
            0.1 * rng.normal(size=HIDDEN)), (0, 1, 2)


LOSSES = {"logreg": logreg, "mlp": mlp}


def chunked_data(rows, chunk_rows, seed=0):
    """``X`` (rows x FEATURES) as a dask array whose chunks are generated on the workers."""
    return da.random.default_rng(seed).normal(size=(rows, FEATURES), chunks=(chunk_rows, FEATURES))


def start_cluster(workers, limit):
    """A LocalCluster of ``workers`` processes, one thread each, ``limit`` memory each, and a client."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           memory_limit=limit, dashboard_address=None)
        client = distributed.Client(cluster)
    client.wait_for_workers(workers)
    return cluster, client


def monitor_counts(client):
    return client.run(lambda dask_worker: dask_worker.monitor.count)


def peak_memory_mib(client, since):
    """Each worker's peak process memory (MiB) since the monitor counts ``since``."""

    def peak(dask_worker, since=since):
        start = since.get(dask_worker.address, 0)
        samples = [m for m in dask_worker.monitor.range_query(start)["memory"] if m is not None]
        return max(samples, default=dask_worker.monitor.get_process_memory())

    return {address: value / 2**20 for address, value in client.run(peak).items()}


def gradient_on_cluster(client, loss_name, rows, chunk_rows):
    """The loss's gradient over ``rows`` generated rows: (seconds, peak MiB per worker, graph
    size, the computed gradients)."""
    params, argnums = parameters(loss_name)
    X = chunked_data(rows, chunk_rows)
    y = targets(X, loss_name)
    since = monitor_counts(client)
    time.sleep(0.3)
    start = time.perf_counter()
    grads = s2sgrad.grad(LOSSES[loss_name], argnums)(*params, X, y)
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert all(isinstance(g, da.Array) for g in grads), "the gradient was not lazy"
    graph = len(da.concatenate([g.ravel() for g in grads]).__dask_graph__()) if len(grads) > 1 \
        else len(grads[0].__dask_graph__())  # the graphs' union (they share the forward)
    computed = dask.compute(*grads)
    seconds = time.perf_counter() - start
    time.sleep(0.3)  # a last monitor sample
    return seconds, peak_memory_mib(client, since), graph, computed


def numpy_streamed(loss_name, rows, chunk_rows):
    """numpy in one process: the same gradient over the same number of rows, each chunk generated
    then differentiated (s2sgrad's gradient on numpy arrays), weighted by its share of the rows."""
    params, argnums = parameters(loss_name)
    gradient = s2sgrad.grad(LOSSES[loss_name], argnums)
    rng = np.random.default_rng(0)
    start, total = time.perf_counter(), None
    for first in range(0, rows, chunk_rows):
        n = min(chunk_rows, rows - first)
        X = rng.normal(size=(n, FEATURES))
        part = gradient(*params, X, targets(X, loss_name))
        part = part if isinstance(part, tuple) else (part,)
        part = [p * (n / rows) for p in part]
        total = part if total is None else [t + p for t, p in zip(total, part)]
    return time.perf_counter() - start


def fits_in_memory(client, loss_name, rows, chunk_rows, repeat=3):
    """On data that fits: (numpy seconds, dask seconds, max relative difference), each the best
    of ``repeat``; dask's data persisted on the cluster, numpy's its computed copy."""
    params, argnums = parameters(loss_name)
    gradient = s2sgrad.grad(LOSSES[loss_name], argnums)
    X = chunked_data(rows, chunk_rows, seed=1)
    y = targets(X, loss_name)
    X, y = client.persist([X, y])
    distributed.wait([X, y])
    Xn, yn = client.compute([X, y], sync=True)
    best_np = best_da = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        want = gradient(*params, Xn, yn)
        best_np = min(best_np, time.perf_counter() - start)
        start = time.perf_counter()
        got = dask.compute(gradient(*params, X, y))[0]
        best_da = min(best_da, time.perf_counter() - start)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    error = max(float(np.max(np.abs(g - w)) / np.max(np.abs(w))) for g, w in zip(got, want))
    del X, y
    return best_np, best_da, error


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true",
                        help="the issue's size: 2e7 x 50 float64 (8 GB), workers limited to 1 GiB")
    parser.add_argument("--rows", type=float, help="rows of the large data (default 2.5e6; 2e7 with --full)")
    parser.add_argument("--chunk-rows", type=float, help="rows per chunk (default 1e5; 2.5e5 with --full)")
    parser.add_argument("--limit", help="each worker's memory limit (default 400MiB; 1GiB with --full)")
    parser.add_argument("--fit-rows", type=float, default=2e5, help="rows of the data that fits (default 2e5)")
    parser.add_argument("--loss", action="append", choices=sorted(LOSSES), help="some losses only")
    args = parser.parse_args(argv)
    rows = int(args.rows or (2e7 if args.full else 2.5e6))
    chunk_rows = int(args.chunk_rows or (2.5e5 if args.full else 1e5))
    limit = args.limit or ("1GiB" if args.full else "400MiB")
    fit_rows = int(args.fit_rows)
    losses = args.loss or ["logreg", "mlp"]
    dask.config.set({"distributed.admin.system-monitor.interval": "100ms"})
    for loss_name in losses:  # the transforms (per argument type), outside the timings
        params, argnums = parameters(loss_name)
        X = np.ones((8, FEATURES))
        s2sgrad.grad(LOSSES[loss_name], argnums)(*params, X, targets(X, loss_name))
        X = da.ones((8, FEATURES), chunks=4)
        dask.compute(s2sgrad.grad(LOSSES[loss_name], argnums)(*params, X, targets(X, loss_name)),
                     scheduler="sync")

    print(f"large data: {rows:.3g} x {FEATURES} float64 = {rows * FEATURES * 8 / 2**30:.2f} GiB in "
          f"chunks of {chunk_rows:.3g} rows ({chunk_rows * FEATURES * 8 / 2**20:.0f} MiB), generated "
          f"on the workers; each worker limited to {limit}; MLP hidden width {HIDDEN}")
    table, failures, large = [], 0, {}
    for workers in (1, 2):
        cluster, client = start_cluster(workers, limit)
        try:
            for loss_name in losses:
                if workers == 1:
                    seconds = numpy_streamed(loss_name, rows, chunk_rows)
                    table.append((loss_name, "large", "numpy, streamed", "1 process", seconds,
                                  rows / seconds, "", ""))
                    np_s, da_s, error = fits_in_memory(client, loss_name, fit_rows, fit_rows // 4)
                    table.append((loss_name, f"fits ({fit_rows:.3g})", "numpy", "1 process", np_s,
                                  fit_rows / np_s, "", ""))
                    table.append((loss_name, f"fits ({fit_rows:.3g})", f"dask (rel. diff {error:.1e})",
                                  "1 worker", da_s, fit_rows / da_s, "", ""))
                    failures += error > 1e-10
                seconds, peaks, graph, grads = gradient_on_cluster(client, loss_name, rows, chunk_rows)
                large.setdefault(loss_name, []).append(grads)
                peak = " / ".join(f"{p:.0f}" for p in peaks.values())
                table.append((loss_name, "large", "dask", f"{workers} worker" + "s" * (workers > 1),
                              seconds, rows / seconds, peak, graph))
        finally:
            client.close()
            cluster.close()
    for loss_name, (one, two) in large.items():
        difference = max(float(np.max(np.abs(a - b)) / np.max(np.abs(a))) for a, b in zip(one, two))
        print(f"{loss_name}: 1 worker's gradient against 2 workers': max relative difference {difference:.1e}")
        failures += difference > 1e-10

    header = ("loss", "data", "computed by", "on", "seconds", "rows/s", "peak worker MiB", "tasks")
    rows_out = [header] + [(a, b, c, d, f"{e:.2f}", f"{f:.3g}", g, str(h)) for a, b, c, d, e, f, g, h in table]
    widths = [max(len(str(r[i])) for r in rows_out) for i in range(len(header))]
    for k, row in enumerate(rows_out):
        print("| " + " | ".join(str(v).ljust(w) for v, w in zip(row, widths)) + " |")
        if k == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
