"""Benchmark s2sgrad's value_and_grad against a careful hand-written numpy value+gradient.

    python benchmarks/run.py                    # full run (a few minutes at most on 2 cores)
    python benchmarks/run.py --quick            # smoke run: few rounds, short measurements
    python benchmarks/run.py --case mlp --case rosenbrock
    python benchmarks/run.py --json out.json    # also write the figures as JSON

For each case (benchmarks/cases.py), in one process:

1. build every variant: the primal, the hand-written value+gradient, s2sgrad's value_and_grad,
   autograd's value_and_grad (and JAX / PyTorch when installed: they are detected, and reported as
   skipped when absent); a case s2sgrad refuses (TransformError) prints why and goes on;
2. verify: the hand-written value equals the primal's, and every gradient (s2sgrad, autograd)
   matches the hand-written one (np.testing.assert_allclose) before anything is timed;
3. time round-robin in paired rounds: each round runs every variant once, in an order rotated
   from round to round; one measurement is the mean over an inner repeat count calibrated so that
   it takes ~10 ms (a single call when one call is longer). Reported: the median per variant and the
   median of the per-round (paired) ratios s2sgrad/hand, autograd/hand, hand/primal, s2sgrad/primal;
4. peak memory of one call (tracemalloc, which sees numpy's buffers) per variant;
5. transform time in fresh subprocesses: load = importing the transformer (libcst, black, the rule
   table) in a new process with an empty s2sgrad disk cache, once per process; cold = then the
   first value_and_grad(...) of the function (parsing its module included); warm = a second
   value_and_grad(...) on a fresh function object in that process; disk = the first
   value_and_grad(...) in another new process sharing that cache (it loads no transformer).
   Where value_and_grad runs forward mode for the case's arguments (one float argument: the
   scalar loop), each figure includes the forward-mode transform its first call makes.

Nothing here changes the machine's configuration: OPENBLAS_* variables are left as they are and
reported in the header.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import types

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import cases  # noqa: E402

TARGET_MEDIAN = 1.10
TARGET_WORST = 1.30
TARGET_MEMORY = 1.20
TARGET_COLD_MS = 150.0
TARGET_WARM_MS = 5.0


# ----- machine ---------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed (pip install threadpoolctl to see the BLAS kernel)"
    parts = []
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            parts.append(f"{pool.get('internal_api')} {pool.get('version')} "
                         f"kernel={pool.get('architecture')} threads={pool.get('num_threads')}")
    return "; ".join(parts) or "no BLAS pool found"


def s2sgrad_origin() -> str:
    """The commit s2sgrad was imported from, and whether its files differ from that commit."""
    import s2sgrad

    pkg = os.path.dirname(os.path.abspath(s2sgrad.__file__))
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=pkg, capture_output=True,
                             text=True, timeout=10)
        if out.returncode != 0:
            return f"{pkg} (not a git checkout)"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=pkg,
                               capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + (" + uncommitted changes in s2sgrad/" if dirty.stdout.strip()
                                     else "")
    except (OSError, subprocess.SubprocessError):
        return pkg


def machine() -> dict:
    import s2sgrad

    info = {
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "s2sgrad": getattr(s2sgrad, "__version__", "?"),
        "commit": s2sgrad_origin(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE", "(unset)"),
        "blas": blas_info(),
    }
    try:
        import autograd  # noqa: F401
        from importlib.metadata import version

        info["autograd"] = version("autograd")
    except Exception:  # noqa: BLE001
        info["autograd"] = "not installed"
    return info


# ----- variants ----------------------------------------------------------------------------------


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def rebind_numpy(fn, numpy_module):
    """The same code object as ``fn`` with its global ``np`` bound to another numpy."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": numpy_module}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def fresh_function(fn):
    """A new function object over the same code (so nothing keyed on the object can be reused)."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def as_tuple(grads, n):
    return tuple(grads) if n > 1 or isinstance(grads, tuple) else (grads,)


def build_variants(case):
    """{name: (callable(args) -> (value, grads tuple)) or None}, and {name: reason skipped}."""
    variants, skipped = {}, {}
    n = len(case.argnums)
    variants["primal"] = lambda args: (case.primal(*args), None)
    variants["hand"] = lambda args: (lambda v, g: (v, as_tuple(g, n)))(*case.hand(*args))

    import s2sgrad

    try:
        vg = s2sgrad.value_and_grad(case.primal, argnums=case.argnums)
        variants["s2sgrad"] = lambda args: vg(*args)
        variants["_s2sgrad_fn"] = vg
    except s2sgrad.TransformError as exc:
        skipped["s2sgrad"] = f"not supported yet ({first_line(exc)})"
    except Exception as exc:  # noqa: BLE001 - report and keep going
        skipped["s2sgrad"] = f"transform failed: {type(exc).__name__}: {first_line(exc)}"

    if importlib.util.find_spec("autograd") is not None:
        import autograd
        import autograd.numpy as anp

        ag = autograd.value_and_grad(rebind_numpy(case.primal, anp), case.argnums)
        variants["autograd"] = lambda args: ag(*args)
    else:
        skipped["autograd"] = "not installed"

    for name, module in (("jax", "jax"), ("torch", "torch")):
        if importlib.util.find_spec(module) is None:
            skipped[name] = "not installed, skipped"
        else:
            skipped[name] = "installed, but this harness has no port of the case yet"
    return variants, skipped


def verify(case, variants, args, skipped):
    """Check values and gradients against the hand-written ones; drop variants that disagree."""
    snapshot = [np.array(a, copy=True) for a in args]
    want_value = case.primal(*args)
    hand_value, hand_grads = variants["hand"](args)
    np.testing.assert_allclose(hand_value, want_value, rtol=1e-12,
                               err_msg=f"{case.name}: hand-written value differs from the primal")
    failures = {}
    for name in ("s2sgrad", "autograd"):
        if name not in variants:
            continue
        try:
            value, grads = variants[name](args)
            grads = as_tuple(grads, len(case.argnums))
            np.testing.assert_allclose(value, hand_value, rtol=1e-12, err_msg=f"{name} value")
            assert len(grads) == len(hand_grads), f"{name}: {len(grads)} gradients"
            for i, (got, want) in enumerate(zip(grads, hand_grads)):
                assert np.shape(got) == np.shape(want), f"{name} grad {i}: shape {np.shape(got)}"
                scale = max(1.0, float(np.max(np.abs(want))))
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * scale,
                                           err_msg=f"{name} gradient {i} (argnum "
                                                   f"{case.argnums[i]})")
        except Exception as exc:  # noqa: BLE001
            failures[name] = first_line(exc) if not isinstance(exc, AssertionError) else str(exc)
    for name, msg in failures.items():
        del variants[name]
        skipped[name] = "WRONG GRADIENT: " + msg.strip().replace("\n", " | ")[:300]
    for before, after in zip(snapshot, args):
        if not np.array_equal(before, np.asarray(after)):
            raise AssertionError(f"{case.name}: a variant modified its inputs")
    return failures


# ----- timing ------------------------------------------------------------------------------------


def calibrate(fn, args, target_s, max_repeat=100_000):
    """Inner repeat count so that one measurement takes about ``target_s``."""
    fn(args)  # warm-up
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(args)
        elapsed = time.perf_counter() - t0
        if elapsed >= target_s / 4 or n >= max_repeat:
            per_call = elapsed / n
            return max(1, min(max_repeat, round(target_s / per_call))) if per_call > 0 else max_repeat
        n *= 4


def measure(fn, args, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn(args)
    return (time.perf_counter() - t0) / n


def time_rounds(variants, args, rounds, target_s):
    names = list(variants)
    repeats = {name: calibrate(variants[name], args, target_s) for name in names}
    samples = {name: [] for name in names}
    for r in range(rounds):
        gc.collect()
        k = r % len(names)
        for name in names[k:] + names[:k]:
            samples[name].append(measure(variants[name], args, repeats[name]))
    return samples, repeats


def paired_ratio(samples, a, b):
    if a not in samples or b not in samples:
        return None
    return statistics.median(x / y for x, y in zip(samples[a], samples[b]))


def ratio_spread(samples, a, b):
    """Quartiles (25%, 75%) of the per-round ratios a/b: how noisy the median is."""
    if a not in samples or b not in samples or len(samples[a]) < 4:
        return None
    q = statistics.quantiles([x / y for x, y in zip(samples[a], samples[b])], n=4)
    return q[0], q[2]


def page_faults(fn, args, calls=5):
    """Minor page faults per call (fresh pages touched: a sign of many large temporaries)."""
    fn(args)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn(args)
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def peak_memory(fn, args):
    """Peak bytes allocated during one call, above what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        result = fn(args)
        peak = tracemalloc.get_traced_memory()[1] - base
        del result
    finally:
        tracemalloc.stop()
    return peak


# ----- transform time (subprocess) ------------------------------------------------------------


def transform_child(name: str) -> None:
    """Run in a fresh process: time value_and_grad(...) builds; print one JSON line. With an
    empty disk cache the transformer (libcst, black, the rule table) is loaded first and timed on
    its own: a process pays that once, not per function. Where the arguments are such that
    value_and_grad runs forward mode (one float argument), its forward-mode transform, made on
    the first call, is timed with the build."""
    import s2sgrad

    case = cases.BY_NAME[name]
    args = case.make(np.random.default_rng(0))
    forward = len(case.argnums) == 1 and type(args[case.argnums[0]]) in (float, np.float64)
    out = {"forward": forward}

    def build_ms() -> float:
        t0 = time.perf_counter()
        vg = s2sgrad.value_and_grad(fresh_function(case.primal), argnums=case.argnums)
        if forward:
            s2sgrad.source(vg, mode="fwd")  # what the first call with these arguments builds
        return (time.perf_counter() - t0) * 1e3

    try:
        cache = os.environ.get("S2SGRAD_CACHE_DIR", "")
        if not (cache and os.listdir(cache)):
            t0 = time.perf_counter()
            import s2sgrad.pipeline  # noqa: F401
            out["load_ms"] = (time.perf_counter() - t0) * 1e3
        out["first_ms"] = build_ms()
        out["second_ms"] = build_ms()
    except s2sgrad.TransformError as exc:
        out["error"] = first_line(exc)
    print(json.dumps(out))


def transform_times(name: str, disk: bool = True) -> dict:
    """cold / warm (same process) / disk (new process, cache filled by the first)."""
    with tempfile.TemporaryDirectory(prefix="s2sgrad-bench-cache-") as cache_dir:
        env = dict(os.environ, S2SGRAD_CACHE_DIR=cache_dir)
        results = []
        for _ in range(2 if disk else 1):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--transform-child",
                                   name], env=env, capture_output=True, text=True, timeout=300)
            if proc.returncode != 0:
                return {"error": (proc.stderr.strip().splitlines() or ["child failed"])[-1]}
            results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    if "error" in results[0]:
        return {"error": results[0]["error"]}
    out = {"cold_ms": results[0]["first_ms"], "warm_ms": results[0]["second_ms"],
           "load_ms": results[0].get("load_ms")}
    if disk:
        out["disk_ms"] = results[1]["first_ms"]
    return out


# ----- printing ----------------------------------------------------------------------------------


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} us"
    return f"{seconds * 1e9:.3g} ns"


def fmt_bytes(n):
    if n is None:
        return "-"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def fmt_ms(x):
    return "-" if x is None else f"{x:.1f}"


def run_case(case, opts):
    print(f"\n== {case.name}: {case.description}", flush=True)
    rng = np.random.default_rng(0)
    args = case.make(rng)
    variants, skipped = build_variants(case)
    variants.pop("_s2sgrad_fn", None)
    failures = verify(case, variants, args, skipped)
    checked = [n for n in ("s2sgrad", "autograd") if n in variants]
    print("   verified against hand-written: " + (", ".join(checked) or "(nothing)"))
    for name, reason in skipped.items():
        print(f"   {name}: {reason}")

    samples, repeats = time_rounds(variants, args, opts.rounds, opts.target_ms / 1e3)
    med = {name: statistics.median(s) for name, s in samples.items()}
    ratios = {
        "s2sgrad/hand": paired_ratio(samples, "s2sgrad", "hand"),
        "autograd/hand": paired_ratio(samples, "autograd", "hand"),
        "hand/primal": paired_ratio(samples, "hand", "primal"),
        "s2sgrad/primal": paired_ratio(samples, "s2sgrad", "primal"),
    }
    spread = ratio_spread(samples, "s2sgrad", "hand")
    memory = {name: peak_memory(fn, args) for name, fn in variants.items()}
    faults = {name: page_faults(fn, args) for name, fn in variants.items()}
    transform = transform_times(case.name, disk=not opts.quick) if not opts.no_transform else {}
    if "error" in transform and "s2sgrad" in variants:
        print(f"   transform timing failed: {transform['error']}")

    line = "   " + "  ".join(f"{name} {fmt_time(med[name])} (x{repeats[name]})" for name in variants)
    print(line)
    print("   " + "  ".join(f"{k} {fmt_ratio(v)}" for k, v in ratios.items() if v is not None)
          + (f"  (s2sgrad/hand quartiles {spread[0]:.2f}-{spread[1]:.2f})" if spread else ""))
    print("   peak memory: " + "  ".join(f"{name} {fmt_bytes(memory[name])}" for name in variants))
    print("   minor page faults per call: "
          + "  ".join(f"{name} {faults[name]:.0f}" for name in variants))
    if "cold_ms" in transform:
        disk = (f", new process with disk cache {transform['disk_ms']:.2f} ms"
                if "disk_ms" in transform else "")
        load = transform.get("load_ms")
        print((f"   transform: load {load:.0f} ms once per process, " if load else "   transform: ")
              + f"cold {transform['cold_ms']:.1f} ms, warm {transform['warm_ms']:.2f} ms"
              + disk)
    return {
        "name": case.name,
        "description": case.description,
        "median_s": med,
        "repeats": repeats,
        "ratios": ratios,
        "peak_bytes": memory,
        "page_faults": faults,
        "s2sgrad_hand_quartiles": spread,
        "transform": transform,
        "skipped": skipped,
        "failures": failures,
    }


def summary(results, info, opts):
    print("\n" + "=" * 100)
    print(f"machine: {info['nproc']} cores, {info['cpu']}; Python {info['python']}, numpy "
          f"{info['numpy']}, autograd {info['autograd']}, s2sgrad {info['s2sgrad']} @ {info['commit']}")
    print(f"BLAS: {info['blas']}; OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']} "
          f"OPENBLAS_L2_SIZE={info['OPENBLAS_L2_SIZE']}")
    print(f"{opts.rounds} paired rounds, ~{opts.target_ms:g} ms per measurement; times are medians of "
          "one value+gradient call (primal: value only); ratios are medians of per-round ratios")
    head = (f"{'case':<16}{'primal':>10}{'hand':>10}{'s2sgrad':>10}{'autograd':>10}"
            f"{'s2s/hand':>10}{'ag/hand':>9}{'hand/pri':>10}{'s2s/pri':>9}"
            f"{'cold ms':>9}{'warm ms':>9}{'disk ms':>9}{'mem s2s/hand':>14}")
    print(head)
    print("-" * len(head))
    for res in results:
        med, rat, tr, mem = res["median_s"], res["ratios"], res["transform"], res["peak_bytes"]
        mem_ratio = (mem["s2sgrad"] / mem["hand"]) if "s2sgrad" in mem and mem.get("hand") else None
        print(f"{res['name']:<16}{fmt_time(med.get('primal')):>10}{fmt_time(med.get('hand')):>10}"
              f"{fmt_time(med.get('s2sgrad')):>10}{fmt_time(med.get('autograd')):>10}"
              f"{fmt_ratio(rat['s2sgrad/hand']):>10}{fmt_ratio(rat['autograd/hand']):>9}"
              f"{fmt_ratio(rat['hand/primal']):>10}{fmt_ratio(rat['s2sgrad/primal']):>9}"
              f"{fmt_ms(tr.get('cold_ms')):>9}{fmt_ms(tr.get('warm_ms')):>9}"
              f"{fmt_ms(tr.get('disk_ms')):>9}{fmt_ratio(mem_ratio):>14}")
    for res in results:
        s = res["skipped"].get("s2sgrad")
        if s:
            print(f"{res['name']}: s2sgrad: {s}")
    others = sorted({f"{k}: {v}" for r in results for k, v in r["skipped"].items() if k != "s2sgrad"})
    for line in others:
        print(line)

    ratios = [r["ratios"]["s2sgrad/hand"] for r in results if r["ratios"]["s2sgrad/hand"] is not None]
    if ratios:
        worst = max(results, key=lambda r: r["ratios"]["s2sgrad/hand"] or 0)
        med = statistics.median(ratios)
        print(f"\ns2sgrad/hand over {len(ratios)} supported case(s): median {med:.2f}x "
              f"(target <= {TARGET_MEDIAN:.2f}x: {'met' if med <= TARGET_MEDIAN else 'NOT met'}), "
              f"worst {worst['ratios']['s2sgrad/hand']:.2f}x in {worst['name']} "
              f"(target <= {TARGET_WORST:.2f}x: "
              f"{'met' if worst['ratios']['s2sgrad/hand'] <= TARGET_WORST else 'NOT met'})")
    mems = [(r["peak_bytes"]["s2sgrad"] / r["peak_bytes"]["hand"], r["name"]) for r in results
            if "s2sgrad" in r["peak_bytes"] and r["peak_bytes"].get("hand")]
    if mems:
        worst_mem = max(mems)
        print(f"peak memory s2sgrad/hand: worst {worst_mem[0]:.2f}x in {worst_mem[1]} "
              f"(target <= {TARGET_MEMORY:.2f}x: {'met' if worst_mem[0] <= TARGET_MEMORY else 'NOT met'})")
    colds = [(r["transform"]["cold_ms"], r["name"]) for r in results if "cold_ms" in r["transform"]]
    if colds:
        c = max(colds)
        disks = [(r["transform"]["disk_ms"], r["name"]) for r in results if "disk_ms" in r["transform"]]
        loads = [r["transform"]["load_ms"] for r in results if r["transform"].get("load_ms")]
        text = (f"transform: worst cold {c[0]:.1f} ms in {c[1]} (target <= {TARGET_COLD_MS:.0f} ms: "
                f"{'met' if c[0] <= TARGET_COLD_MS else 'NOT met'})")
        if loads:
            text += (f"; loading the transformer once per process (libcst, black, rules): "
                     f"{statistics.median(loads):.0f} ms (not per function; not needed on a disk-cache hit)")
        if disks:
            d = max(disks)
            text += (f"; worst new-process-with-disk-cache {d[0]:.2f} ms in {d[1]} (target <= "
                     f"{TARGET_WARM_MS:.0f} ms: {'met' if d[0] <= TARGET_WARM_MS else 'NOT met'})")
        print(text)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 5 rounds of ~2 ms measurements")
    parser.add_argument("--case", action="append", metavar="NAME",
                        help=f"run only this case (repeatable): {', '.join(cases.BY_NAME)}")
    parser.add_argument("--rounds", type=int, help="paired rounds per case (default 41; quick 5)")
    parser.add_argument("--target-ms", type=float,
                        help="length of one measurement (default 10 ms; quick 2 ms)")
    parser.add_argument("--no-transform", action="store_true",
                        help="skip the transform-time subprocesses")
    parser.add_argument("--json", metavar="PATH", help="also write all figures to PATH as JSON")
    parser.add_argument("--transform-child", metavar="NAME", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.transform_child:
        transform_child(opts.transform_child)
        return 0
    opts.rounds = opts.rounds or (5 if opts.quick else 41)
    opts.target_ms = opts.target_ms or (2.0 if opts.quick else 10.0)

    selected = cases.CASES
    if opts.case:
        unknown = [n for n in opts.case if n not in cases.BY_NAME]
        if unknown:
            parser.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(cases.BY_NAME)}")
        selected = tuple(cases.BY_NAME[n] for n in opts.case)

    info = machine()
    print(f"s2sgrad benchmarks: {len(selected)} case(s), {opts.rounds} rounds, "
          f"~{opts.target_ms:g} ms per measurement")
    print(f"machine: {info['nproc']} cores, {info['cpu']}, numpy {info['numpy']}, BLAS {info['blas']}, "
          f"OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']} OPENBLAS_L2_SIZE={info['OPENBLAS_L2_SIZE']}")
    start = time.perf_counter()
    load_before = os.getloadavg()
    results = [run_case(case, opts) for case in selected]
    info["loadavg_before"] = load_before
    info["loadavg_after"] = os.getloadavg()
    summary(results, info, opts)
    print(f"\ntotal {time.perf_counter() - start:.0f} s; load average (1/5/15 min) before "
          f"{' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in info['loadavg_after'])} on {info['nproc']} cores "
          "(above ~0.5 means other processes shared the machine: trust the paired ratios more "
          "than the medians)")
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as handle:
            json.dump({"machine": info, "rounds": opts.rounds, "target_ms": opts.target_ms,
                       "results": results}, handle, indent=1)
    return 1 if any(r["failures"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
