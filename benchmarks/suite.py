"""Issue 28's benchmark set: every kernel of benchmarks/kernels.py in every spelling, side by side.

    python benchmarks/suite.py --quick              # 3 paired rounds of ~2 ms, growth at 100/1000/4000
    python benchmarks/suite.py                      # 15 rounds of ~10 ms
    python benchmarks/suite.py --kernel rnn --kernel gru
    python benchmarks/suite.py --no-growth --no-transform --json out.json

Per kernel and spelling, in one process:

1. build: the hand-written value+gradient, s2sgrad's value_and_grad, autograd's (``np`` and
   ``math`` rebound to autograd.numpy), JAX-jit's where jax is importable (optional: skipped
   cleanly when absent; never a test dependency), and s2sgrad's compiled option
   (``value_and_grad(..., compiled=True)``: numba, the extra ``s2sgrad[numba]``) where every
   differentiated argument is a float. A spelling s2sgrad refuses is printed as
   ``REFUSED`` with the first line of its TransformError and the others still run.
2. verify before timing: the hand-written value equals the spelling's (rtol 1e-10), and
   s2sgrad's, autograd's and JAX's values and gradients match the hand-written ones (rtol 1e-8);
   a variant that disagrees is reported ``WRONG GRADIENT`` and not timed. Each kernel's hand
   gradient is thereby checked against autograd (at least one spelling of every kernel runs
   under autograd).
3. time in paired rounds (benchmarks/run.py's way): each round runs every variant once, in an
   order rotated per round; printed: the median time of the hand-written version and the medians
   of the per-round ratios s2sgrad/hand, autograd/hand, jax/hand.
4. peak memory of one call (tracemalloc), s2sgrad / hand.
5. loop kernels (``growth``): s2sgrad and the hand-written version at 100, 1000 and 4000 steps,
   in paired rounds, with the gradients checked at each step count; printed: s2sgrad/hand at each,
   and how each one's time grows from 100 to 4000 steps (40x is linear).
6. transform time (benchmarks/transform_cost.py's way): one new process with an empty disk cache
   loads the transformer (timed apart, once per process), then transforms every spelling once
   (cold; the first spelling of this file also pays parsing kernels.py) and again on a new
   function object (warm); a second new process sharing that cache transforms each again (disk).

Then the median and worst s2sgrad/hand over all spellings, and the same per kernel's best
spelling. Exit status 1 when a gradient disagrees with the hand-written one.
"""

from __future__ import annotations

import argparse
import copy
import gc
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import kernels  # noqa: E402
import run as harness  # noqa: E402  (benchmarks/run.py: timing, memory, formatting)

GROWTH_STEPS = (100, 1000, 4000)
MATH_NAMES = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "atan", "log1p",
              "expm1")


# ----- variants --------------------------------------------------------------------------------


def rebind(fn, numpy_module):
    """``fn``'s code with ``np`` bound to ``numpy_module`` and ``math`` to its functions (so
    autograd and JAX trace ``math.sin`` too); helpers of kernels.py it calls are rebound alike."""
    math_like = types.SimpleNamespace(pi=math.pi, e=math.e,
                                      **{n: getattr(numpy_module, n) for n in MATH_NAMES})
    namespace = {**fn.__globals__, "np": numpy_module, "math": math_like}
    namespace["sigmoid"] = types.FunctionType(kernels.sigmoid.__code__, namespace, "sigmoid")
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def jax_variant(kernel, primal):
    """JAX-jit's value_and_grad of ``primal`` (float64), or None when jax is not importable."""
    if importlib.util.find_spec("jax") is None:
        return None
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    fn = jax.jit(jax.value_and_grad(rebind(primal, jnp), kernel.argnums),
                 static_argnums=kernel.static)

    def call(args):
        return jax.block_until_ready(fn(*args))

    return call


def build(kernel, primal, args):
    """({variant: callable(args) -> (value, grads)}, {variant: why skipped}) for one spelling."""
    import s2sgrad

    variants = {"hand": lambda args: kernel.hand(*args), "primal": lambda args: primal(*args)}
    skipped = {}
    try:
        vg = s2sgrad.value_and_grad(primal, argnums=kernel.argnums)
        variants["s2sgrad"] = lambda args: vg(*args)
    except s2sgrad.TransformError as exc:
        skipped["s2sgrad"] = "REFUSED: " + harness.first_line(exc)
    except Exception as exc:  # noqa: BLE001
        skipped["s2sgrad"] = f"transform failed: {type(exc).__name__}: {harness.first_line(exc)}"
    if primal.__name__ in kernels.AUTOGRAD_SKIP:
        skipped["autograd"] = kernels.AUTOGRAD_SKIP[primal.__name__]
    elif importlib.util.find_spec("autograd") is not None:
        import autograd
        import autograd.numpy as anp

        ag = autograd.value_and_grad(rebind(primal, anp), kernel.argnums)
        variants["autograd"] = lambda args: ag(*args)
    else:
        skipped["autograd"] = "not installed"
    jx = jax_variant(kernel, primal)
    if jx is None:
        skipped["jax"] = "not installed (optional)"
    else:
        variants["jax"] = jx
    floats = all(isinstance(args[i], float) for i in kernel.argnums)
    if floats and importlib.util.find_spec("numba") is not None:
        compiled = s2sgrad.value_and_grad(primal, argnums=kernel.argnums, compiled=True)
        variants["compiled"] = lambda args: compiled(*args)
    elif floats:
        skipped["compiled"] = "not installed (optional)"
    return variants, skipped


def as_tuple(grads):
    return tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)


def check(kernel, primal, variants, skipped, args, names=("s2sgrad", "autograd", "jax", "compiled")):
    """Verify values and gradients against the hand-written ones; drop what disagrees or fails.
    Returns {variant: message} of wrong gradients (a refusal or a crash is not one)."""
    import s2sgrad

    snapshot = [copy.deepcopy(a) for a in args]  # (pytrees too)
    hand_value, hand_grads = variants["hand"](args)
    np.testing.assert_allclose(hand_value, primal(*args), rtol=1e-10,
                               err_msg=f"{kernel.name}: hand-written value differs from "
                                       f"{primal.__name__}'s")
    wrong = {}
    for name in names:
        if name not in variants:
            continue
        try:
            value, grads = variants[name](args)
        except Exception as exc:  # noqa: BLE001
            del variants[name]
            reason = f"{type(exc).__name__}: {harness.first_line(exc)}"
            if name == "s2sgrad":
                label = "REFUSED" if isinstance(exc, s2sgrad.TransformError) else "FAILED"
                skipped[name] = f"{label} at its first call: {reason}"
            else:
                skipped[name] = f"cannot run this spelling ({reason[:120]})"
            continue
        try:
            grads = as_tuple(grads)
            np.testing.assert_allclose(value, hand_value, rtol=1e-10, err_msg=f"{name} value")
            assert len(grads) == len(hand_grads), f"{name}: {len(grads)} gradients"
            for i, (got_tree, want_tree) in enumerate(zip(grads, hand_grads)):
                got_leaves, got_def = s2sgrad.tree_flatten(got_tree)
                want_leaves, want_def = s2sgrad.tree_flatten(want_tree)
                assert got_def == want_def, f"{name} grad {i}: structure {got_def.describe()}"
                for got, want in zip(got_leaves, want_leaves):
                    assert np.shape(got) == np.shape(want), f"{name} grad {i}: shape {np.shape(got)}"
                    scale = max(1.0, float(np.max(np.abs(want))))
                    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10 * scale,
                                               err_msg=f"{name} gradient {i}")
        except AssertionError as exc:
            del variants[name]
            wrong[name] = str(exc).strip().replace("\n", " | ")[:300]
            skipped[name] = "WRONG GRADIENT: " + wrong[name]
    for before, after in zip(snapshot, args):
        before_leaves, after_leaves = s2sgrad.tree_flatten(before)[0], s2sgrad.tree_flatten(after)[0]
        if not all(np.array_equal(a, np.asarray(b)) for a, b in zip(before_leaves, after_leaves)):
            raise AssertionError(f"{kernel.name}/{primal.__name__}: a variant modified its inputs")
    return wrong


# ----- one spelling ------------------------------------------------------------------------------


def run_spelling(kernel, spelling_name, primal, opts):
    args = kernels.make_args(kernel)
    variants, skipped = build(kernel, primal, args)
    wrong = check(kernel, primal, variants, skipped, args)
    samples, _ = harness.time_rounds(variants, args, opts.rounds, opts.target_ms / 1e3)
    hand_s = statistics.median(samples["hand"])
    ratios = {f"{n}/hand": harness.paired_ratio(samples, n, "hand")
              for n in ("s2sgrad", "autograd", "jax", "compiled")}
    ratios["s2sgrad/primal"] = harness.paired_ratio(samples, "s2sgrad", "primal")
    ratios["hand/primal"] = harness.paired_ratio(samples, "hand", "primal")
    best = (min(samples["s2sgrad"]) / min(samples["hand"])) if "s2sgrad" in samples else None
    memory = None
    if "s2sgrad" in variants:
        memory = (harness.peak_memory(variants["s2sgrad"], args)
                  / max(1, harness.peak_memory(variants["hand"], args)))
    growth = run_growth(kernel, primal, variants, opts) if (kernel.growth and opts.growth) else {}
    return {"kernel": kernel.name, "spelling": spelling_name, "hand_s": hand_s, "ratios": ratios,
            "best_ratio": best,
            "quartiles": harness.ratio_spread(samples, "s2sgrad", "hand"), "memory": memory,
            "growth": growth, "skipped": skipped, "wrong": wrong}


def run_growth(kernel, primal, variants, opts):
    """{steps: {"hand_s", "s2sgrad_s", "ratio"}} at GROWTH_STEPS (s2sgrad and hand only)."""
    if "s2sgrad" not in variants:
        return {}
    pair = {"hand": variants["hand"], "s2sgrad": variants["s2sgrad"]}
    out = {}
    for steps in GROWTH_STEPS:
        args = kernels.make_args(kernel, steps=steps)
        here = dict(pair)
        skipped = {}
        wrong = check(kernel, primal, here, skipped, args, names=("s2sgrad",))
        if "s2sgrad" not in here:
            out[steps] = {"error": skipped.get("s2sgrad", next(iter(wrong.values()), "?"))}
            continue
        samples, _ = harness.time_rounds(here, args, opts.growth_rounds, opts.target_ms / 1e3)
        out[steps] = {"hand_s": statistics.median(samples["hand"]),
                      "s2sgrad_s": statistics.median(samples["s2sgrad"]),
                      "ratio": harness.paired_ratio(samples, "s2sgrad", "hand")}
    return out


# ----- transform time (two new processes) ----------------------------------------------------------


def transform_child(pairs):
    """In a new process: {kernel/spelling: [cold ms, warm ms]} (and load_ms when the disk cache is
    empty), printed as one JSON line."""
    import s2sgrad

    out = {}
    cache = os.environ.get("S2SGRAD_CACHE_DIR", "")
    if not (cache and os.listdir(cache)):
        t0 = time.perf_counter()
        import s2sgrad.pipeline  # noqa: F401

        out["load_ms"] = (time.perf_counter() - t0) * 1e3

    def build_ms(kernel, fn):
        t0 = time.perf_counter()
        vg = s2sgrad.value_and_grad(harness.fresh_function(fn), argnums=kernel.argnums)
        if kernel.mode == "fwd":
            s2sgrad.source(vg, mode="fwd")  # what its first call with a float builds
        return (time.perf_counter() - t0) * 1e3

    for key in pairs:
        kernel_name, spelling_name = key.split("/")
        kernel = kernels.BY_NAME[kernel_name]
        fn = kernels.spelling(kernel_name, spelling_name)
        try:
            out[key] = [build_ms(kernel, fn), build_ms(kernel, fn)]
        except Exception as exc:  # noqa: BLE001
            out[key] = harness.first_line(exc)
    print(json.dumps(out))


def transform_times(pairs):
    """{key: {"cold_ms", "warm_ms", "disk_ms"}} and the load time, from two new processes."""
    with tempfile.TemporaryDirectory(prefix="s2sgrad-suite-cache-") as cache_dir:
        env = dict(os.environ, S2SGRAD_CACHE_DIR=cache_dir)
        runs = []
        for _ in range(2):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--transform-child",
                                   ",".join(pairs)], env=env, capture_output=True, text=True,
                                  timeout=600)
            if proc.returncode != 0:
                return {}, None, (proc.stderr.strip().splitlines() or ["child failed"])[-1]
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out = {}
    for key in pairs:
        first, second = runs[0].get(key), runs[1].get(key)
        if isinstance(first, list) and isinstance(second, list):
            out[key] = {"cold_ms": first[0], "warm_ms": first[1], "disk_ms": second[0]}
    return out, runs[0].get("load_ms"), None


# ----- printing ---------------------------------------------------------------------------------


def fmt_growth(growth):
    if not growth:
        return ""
    parts = []
    for steps, g in growth.items():
        text = (g["error"][:60] if "error" in g else
                f"{harness.fmt_ratio(g['ratio'])} (hand {harness.fmt_time(g['hand_s'])})")
        parts.append(f"{steps}: {text}")
    lo, hi = min(growth), max(growth)
    if "ratio" in growth[lo] and "ratio" in growth[hi]:
        parts.append(f"time x{growth[hi]['s2sgrad_s'] / growth[lo]['s2sgrad_s']:.0f} s2sgrad, "
                     f"x{growth[hi]['hand_s'] / growth[lo]['hand_s']:.0f} hand for {hi // lo}x steps")
    return "; ".join(parts)


def print_row(res, transform):
    r, tr = res["ratios"], transform.get(f"{res['kernel']}/{res['spelling']}", {})
    print(f"{res['kernel']:<14}{res['spelling']:<22}{harness.fmt_time(res['hand_s']):>10}"
          f"{harness.fmt_ratio(r['s2sgrad/hand']):>9}{harness.fmt_ratio(res['best_ratio']):>9}"
          f"{harness.fmt_ratio(r['autograd/hand']):>9}"
          f"{harness.fmt_ratio(r['jax/hand']):>8}{harness.fmt_ratio(r.get('compiled/hand')):>8}"
          f"{harness.fmt_ratio(r['hand/primal']):>8}"
          f"{harness.fmt_ratio(r['s2sgrad/primal']):>8}{harness.fmt_ratio(res['memory']):>8}"
          f"{harness.fmt_ms(tr.get('cold_ms')):>8}{harness.fmt_ms(tr.get('warm_ms')):>8}"
          f"{harness.fmt_ms(tr.get('disk_ms')):>8}", flush=True)
    for name, why in res["skipped"].items():
        if not (name in ("jax", "compiled") and why.startswith("not installed")):
            print(f"{'':<14}  {name}: {why}")
    if res["growth"]:
        print(f"{'':<14}  steps {fmt_growth(res['growth'])}")


HEADER = (f"{'kernel':<14}{'spelling':<22}{'hand':>10}{'s2s/h':>9}{'min':>9}{'ag/h':>9}{'jax/h':>8}{'cmp/h':>8}"
          f"{'h/pri':>8}{'s2s/pri':>8}{'mem':>8}{'cold':>8}{'warm':>8}{'disk':>8}")


def summary(results, load_ms, transform):
    ratios = [(r["ratios"]["s2sgrad/hand"], f"{r['kernel']}/{r['spelling']}") for r in results
              if r["ratios"]["s2sgrad/hand"] is not None]
    print("\n" + "=" * len(HEADER))
    bests = [r["best_ratio"] for r in results if r["best_ratio"] is not None]
    if bests:
        print(f"s2sgrad/hand as the ratio of each one's fastest round (less sensitive to a loaded "
              f"machine): median {statistics.median(bests):.2f}x, worst {max(bests):.2f}x")
    if ratios:
        values = [x for x, _ in ratios]
        worst = max(ratios)
        print(f"s2sgrad/hand over {len(ratios)} spellings: median {statistics.median(values):.2f}x, "
              f"worst {worst[0]:.2f}x in {worst[1]} (targets: median <= 1.05x, worst <= 1.25x)")
        best = {}
        for x, key in ratios:
            k = key.split("/")[0]
            best[k] = min(best.get(k, x), x)
        print(f"per kernel, its best spelling ({len(best)} kernels): median "
              f"{statistics.median(best.values()):.2f}x, worst {max(best.values()):.2f}x in "
              f"{max(best, key=best.get)}")
        kernels_worst = {}
        for x, key in ratios:
            k = key.split("/")[0]
            kernels_worst[k] = max(kernels_worst.get(k, x), x)
        spread = sorted(((max(v) / min(v), k) for k in best for v in
                         [[x for x, key in ratios if key.split("/")[0] == k]] if len(v) > 1),
                        reverse=True)
        if spread:
            print("largest spread between a kernel's spellings (worst/best s2sgrad/hand): "
                  + ", ".join(f"{k} {s:.2f}x" for s, k in spread[:5]))
    compiled = [(r["ratios"]["compiled/hand"], r["ratios"]["jax/hand"], f"{r['kernel']}/{r['spelling']}")
                for r in results if r["ratios"].get("compiled/hand") is not None]
    if compiled:
        print("compiled option (numba) / hand: " + ", ".join(
            f"{key} {c:.3f}x" + (f" (JAX-jit {j:.2f}x)" if j is not None else "")
            for c, j, key in compiled))
    mems = [(r["memory"], f"{r['kernel']}/{r['spelling']}") for r in results if r["memory"]]
    if mems:
        print(f"peak memory s2sgrad/hand: median {statistics.median(m for m, _ in mems):.2f}x, worst "
              f"{max(mems)[0]:.2f}x in {max(mems)[1]} (target <= 1.2x)")
    refused = [(f"{r['kernel']}/{r['spelling']}", r["skipped"]["s2sgrad"]) for r in results
               if "s2sgrad" in r["skipped"]]
    print(f"s2sgrad refused or failed {len(refused)} of {len(results)} spellings"
          + (":" if refused else ""))
    for key, why in refused:
        print(f"  {key}: {why}")
    colds = [(v["cold_ms"], k) for k, v in transform.items()]
    if colds:
        print(f"transform: cold median {statistics.median(c for c, _ in colds):.0f} ms, worst "
              f"{max(colds)[0]:.0f} ms in {max(colds)[1]} (target <= 150 ms median); warm median "
              f"{statistics.median(v['warm_ms'] for v in transform.values()):.2f} ms; disk cache "
              f"in a new process median "
              f"{statistics.median(v['disk_ms'] for v in transform.values()):.1f}"
              f" ms, worst {max(v['disk_ms'] for v in transform.values()):.1f} ms"
              + (f"; loading the transformer once per process {load_ms:.0f} ms" if load_ms else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of ~2 ms measurements")
    parser.add_argument("--kernel", action="append", metavar="NAME",
                        help=f"only this kernel (repeatable): {', '.join(kernels.BY_NAME)}")
    parser.add_argument("--rounds", type=int, help="paired rounds (default 15; quick 3)")
    parser.add_argument("--target-ms", type=float, help="one measurement (default 10; quick 2)")
    parser.add_argument("--no-growth", dest="growth", action="store_false",
                        help="skip the 100/1000/4000-step timings")
    parser.add_argument("--no-transform", action="store_true", help="skip the transform timings")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--transform-child", metavar="KEYS", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.transform_child:
        transform_child(opts.transform_child.split(","))
        return 0
    opts.rounds = opts.rounds or (3 if opts.quick else 15)
    opts.target_ms = opts.target_ms or (2.0 if opts.quick else 10.0)
    opts.growth_rounds = 3 if opts.quick else 7
    selected = kernels.KERNELS
    if opts.kernel:
        unknown = [n for n in opts.kernel if n not in kernels.BY_NAME]
        if unknown:
            parser.error(f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(kernels.BY_NAME)}")
        selected = tuple(kernels.BY_NAME[n] for n in opts.kernel)

    info = harness.machine()
    start, load_before = time.perf_counter(), os.getloadavg()
    print(f"s2sgrad benchmark set: {len(selected)} kernels, "
          f"{sum(len(k.spellings) for k in selected)} spellings; {opts.rounds} paired rounds of "
          f"~{opts.target_ms:g} ms; {info['nproc']} cores, {info['cpu']}, numpy {info['numpy']}, "
          f"autograd {info['autograd']}, s2sgrad @ {info['commit']}; BLAS {info['blas']}")
    pairs = [f"{k.name}/{name}" for k in selected for name, _ in k.spellings]
    transform, load_ms, error = ({}, None, None) if opts.no_transform else transform_times(pairs)
    if error:
        print(f"transform timing failed: {error}")
    print("times: hand = median of one hand-written value+gradient call; ratios = medians of "
          "per-round ratios; min = s2sgrad's fastest round / hand's fastest round; pri = the "
          "spelling's own value (no gradient); mem = peak "
          "memory s2sgrad/hand; cold/warm/disk = transform ms")
    print(HEADER)
    print("-" * len(HEADER))
    results = []
    for kernel in selected:
        for name, primal in kernel.spellings:
            gc.collect()
            res = run_spelling(kernel, name, primal, opts)
            print_row(res, transform)
            results.append(res)
    summary(results, load_ms, transform)
    print(f"total {time.perf_counter() - start:.0f} s; load average before "
          f"{' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} on {info['nproc']} cores")
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as handle:
            json.dump({"machine": info, "rounds": opts.rounds, "target_ms": opts.target_ms,
                       "results": results, "transform": transform, "load_ms": load_ms},
                      handle, indent=1, default=str)
    return 1 if any(r["wrong"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
