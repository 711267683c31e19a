"""What transforming a function costs: cold, warm, and from the disk cache in a new process.

    python benchmarks/transform_cost.py [--rounds N]

For the primals of benchmarks/cases.py (reverse mode, all parameters) and one forward-mode
refusal (a float argument, a Cholesky factor inside: forward mode refuses it, reverse mode is
used), prints per function, in milliseconds (wall clock, and the process's CPU time):

- cold: the function's first transform in this process (disk cache off), after one transform
  of another function that pays the one-time imports (libcst, black, the rule table); the first
  function of cases.py also pays that file's parse, which the others share;
- warm: the same transform again in this process (its entry kept in this process, and in the
  disk cache, a temporary directory);
- new process: the same transform in a fresh Python process reading that cache, then the public
  API on one case (value_and_grad, grad, jacfwd, jacrev, hessian, hvp: the functions they append
  to generated code are cached too), and whether libcst or black were imported there (they should
  not be: a warm start never parses).

Then each functional form people call in a loop (``grad(f)(x)``, ``jvp``, ``vjp``, ``hvp``,
``hessian(f)(x)``, ``jacfwd``), made anew at every call, beside the same built once.

Run on demand (not a test). Warm: the median of ``--rounds`` (default 3).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import numpy as np  # noqa: E402

import cases  # noqa: E402

CASES = ("elementwise_chain", "mlp_loss", "scalar_loop", "rnn_loss", "logsumexp", "rosenbrock",
         "mlp_loss_dot", "rnn_loss_dot", "rnn_loss_method", "rnn_loss_for_x", "rnn_loss_w_left")


def cholesky_of_float(s):
    """A float argument and a Cholesky factor: forward mode refuses it (a cached refusal)."""
    a = np.eye(3) * s + 1.0
    return np.sum(np.linalg.cholesky(a))


def warm_up(x):
    """Transformed first, for the one-time imports (not in the table)."""
    return np.sum(np.exp(x) * x)


def _function(name: str):
    if name in ("cholesky_of_float", "warm_up"):
        return globals()[name]
    return getattr(cases, name)


def _transform(name: str) -> None:
    """One transform of ``name`` as the API makes it (reverse mode; forward mode for the
    refusal case, whose TransformError is what is timed)."""
    import inspect

    from s2sgrad import TransformError, derive
    from s2sgrad.read.capture import from_function

    fn = _function(name)
    wrt = tuple(inspect.signature(fn).parameters)
    if name == "cholesky_of_float":
        try:
            derive.code_for(fn, from_function(fn), wrt, mode="fwd")
        except TransformError:
            return
        raise AssertionError("forward mode of cholesky_of_float was expected to refuse")
    derive.code_for(fn, from_function(fn), wrt)


def api_calls() -> None:
    """The public API on one case, every function it appends to generated code (value_and_grad,
    jacfwd, jacrev, hessian, hvp): a new process reading them from the disk cache should import
    neither libcst nor black."""
    import s2sgrad

    x = np.linspace(0.1, 1.0, 5)
    fn = cases.rosenbrock
    s2sgrad.value_and_grad(fn)(x)
    s2sgrad.grad(fn, argnums=(0,))(x)
    s2sgrad.jacfwd(s2sgrad.grad(fn))(x)
    s2sgrad.jacrev(s2sgrad.grad(fn))(x)
    s2sgrad.hessian(fn)(x)
    s2sgrad.hvp(fn, (x,), (x,))


def per_call_forms(rounds: int = 5) -> list:
    """``(form, us made at each call, us built once)``: the functional forms people call in a
    loop (``grad(f)(x)``, ``jvp(f, ...)``, ``vjp``, ``hvp(f, ...)``, ``hessian(f)(x)``,
    ``jacfwd(f)(x)``) on a small case, each made anew at every call (a transformation made again
    reuses the module loaded before: derive._bound) against the same built once where it can be,
    and the primal."""
    import timeit

    import s2sgrad

    x = np.linspace(0.1, 1.0, 10)
    fn = cases.rosenbrock
    grad, hessian, jacfwd = s2sgrad.grad(fn), s2sgrad.hessian(fn), s2sgrad.jacfwd(s2sgrad.grad(fn))
    forms = [("grad(f)(x)", lambda: s2sgrad.grad(fn)(x), lambda: grad(x)),
             ("jvp(f, (x,), (t,))", lambda: s2sgrad.jvp(fn, (x,), (x,)), None),
             ("vjp(f, x)[1](1.0)", lambda: s2sgrad.vjp(fn, x)[1](1.0), None),
             ("hvp(f, (x,), (t,))", lambda: s2sgrad.hvp(fn, (x,), (x,)), None),
             ("hessian(f)(x)", lambda: s2sgrad.hessian(fn)(x), lambda: hessian(x)),
             ("jacfwd(grad(f))(x)", lambda: s2sgrad.jacfwd(s2sgrad.grad(fn))(x), lambda: jacfwd(x)),
             ("f(x) (the primal)", lambda: fn(x), None)]
    out = []
    for name, each, once in forms:
        times = []
        for call in (each, once):
            if call is None:
                times.append(None)
                continue
            call()
            times.append(min(timeit.repeat(call, number=50, repeat=rounds)) / 50 * 1e6)
        out.append((name, *times))
    return out


def _timed(name: str) -> tuple:
    wall, cpu = time.perf_counter(), time.process_time()
    _transform(name)
    return (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


def _new_process(names: tuple, directory: str) -> dict:
    """Per name, (wall ms, cpu ms) of the transform in a fresh process reading ``directory``;
    plus which of libcst and black that process imported."""
    code = ("import json, sys, time\n"
            f"sys.path[:0] = {[str(HERE.parent), str(HERE)]!r}\n"
            "start = time.perf_counter()\n"
            "import transform_cost as t\n"
            "from s2sgrad import derive\n"
            "derive.installation_fingerprint()\n"
            "first = (time.perf_counter() - start) * 1e3\n"
            f"out = {{n: t._timed(n) for n in {list(names)!r}}}\n"
            "out['first'] = first\n"
            "start = time.perf_counter()\n"
            "t.api_calls()\n"
            "out['api'] = (time.perf_counter() - start) * 1e3\n"
            "out['imported'] = sorted(m for m in ('libcst', 'black') if m in sys.modules)\n"
            "print(json.dumps(out))\n")
    env = dict(os.environ, S2SGRAD_CACHE_DIR=directory)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3
    names = (*CASES, "cholesky_of_float")
    os.environ["S2SGRAD_CACHE_DIR"] = ""
    load = _timed("warm_up")  # the one-time imports and tables
    cold = {n: [_timed(n)] for n in names}  # each function's first transform: one sample
    with tempfile.TemporaryDirectory() as directory:
        os.environ["S2SGRAD_CACHE_DIR"] = directory
        for n in names:
            _transform(n)  # stored
        api_calls()  # stored too
        warm = {n: [_timed(n) for _ in range(rounds)] for n in names}
        fresh = _new_process(names, directory)
    print(f"first transform in this process (imports libcst, black, tables): {load[0]:.0f} ms")
    print(f"{'function':<20} {'cold ms':>16} {'warm ms':>14} {'new process ms':>16}")
    print(f"{'':<20} {'wall / cpu':>16} {'wall / cpu':>14} {'wall / cpu':>16}")
    rows = {n: (_median(cold[n]), _median(warm[n]), tuple(fresh[n])) for n in names}
    for n, (c, w, f) in rows.items():
        print(f"{n:<20} {c[0]:8.1f} /{c[1]:6.1f} {w[0]:6.1f} /{w[1]:6.1f} {f[0]:8.1f} /{f[1]:6.1f}")
    medians = [_median([rows[n][k] for n in CASES]) for k in range(3)]
    print(f"{'median (reverse)':<20} " + " ".join(
        f"{m[0]:{w}.1f} /{m[1]:6.1f}" for m, w in zip(medians, (8, 6, 8))))
    print(f"new process: importing s2sgrad and hashing its files (the cache key) took "
          f"{fresh['first']:.0f} ms before the first transform")
    print(f"new process: the public API on rosenbrock (value_and_grad, grad with argnums (0,), "
          f"jacfwd and jacrev of its gradient, hessian, hvp) from the disk cache took "
          f"{fresh['api']:.0f} ms")
    print(f"new process imported: {', '.join(fresh['imported']) or 'neither libcst nor black'}")
    print(f"\n{'a call of (rosenbrock, n=10)':<30} {'made each call us':>18} {'built once us':>14}")
    for name, each, once in per_call_forms():
        print(f"{name:<30} {each:18.1f} {'-' if once is None else f'{once:.1f}':>14}")


def _median(pairs: list) -> tuple:
    return tuple(statistics.median(p[k] for p in pairs) for k in range(2))


if __name__ == "__main__":
    import transform_cost  # the functions as the new process names them (module transform_cost)

    transform_cost.main()
