"""Where the time of a generated gradient goes, statement by statement.

    python benchmarks/profile_lines.py logsumexp            # per-statement cost of the generated code
    python benchmarks/profile_lines.py rosenbrock --cprofile  # plus cProfile of whole calls
    python benchmarks/profile_lines.py heat/heat_slices       # a kernel/spelling of kernels.py

The generated module for the case's primal (s2sgrad.source) is parsed; the forward sweep's and the
pullback's statements are run one after the other in one namespace (the case's inputs bound to the
parameters, the pullback's seed to 1.0), and each statement's right-hand side is timed on its own
(best of 5 repeats, timeit). The sum is close to one value_and_grad call, less call overhead, which
is printed too. Reads the generated code only; changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import os
import pstats
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import cases  # noqa: E402
import kernels  # noqa: E402


def lookup(name: str):
    """A case of cases.py, or ``kernel/spelling`` of kernels.py as a case (its hand-written
    version returns the value and a tuple of gradients)."""
    if "/" not in name:
        return cases.BY_NAME[name]
    kernel_name, spelling_name = name.split("/")
    kernel = kernels.BY_NAME[kernel_name]
    return cases.Case(name, kernel.description, kernels.spelling(kernel_name, spelling_name),
                      kernel.hand, kernel.argnums, lambda rng: kernel.make(rng, None))


def best_time(code, namespace, budget_s=0.02):
    timer = timeit.Timer(code, globals=namespace)
    number, elapsed = timer.autorange()
    number = max(1, int(number * budget_s / max(elapsed, 1e-9)))
    return min(timer.repeat(repeat=5, number=number)) / number


def statements(func: ast.FunctionDef):
    """(label, statement) pairs for a function body: docstrings and nested defs left out."""
    for node in func.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.FunctionDef):
            continue
        yield node


def run(case_name: str, with_cprofile: bool) -> None:
    import s2sgrad
    from s2sgrad.pipeline import Options, generate_for_function

    case = lookup(case_name)
    params = case.primal.__code__.co_varnames[: case.primal.__code__.co_argcount]
    wrt = tuple(params[i] for i in case.argnums)
    generated = generate_for_function(case.primal, Options(wrt=wrt))
    module = ast.parse(generated.text)
    namespace = dict(generated.live_names)
    exec(compile(generated.text, "<generated>", "exec"), namespace)  # helpers, imports
    fwd = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == generated.names.fwd)
    bwd = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == generated.names.bwd)

    args = case.make(np.random.default_rng(0))
    namespace.update(zip(params, args))
    residuals_name, seed_name = (a.arg for a in bwd.args.args[:2])
    namespace[seed_name] = 1.0

    rows = []
    for part, func in (("forward", fwd), ("backward", bwd)):
        for node in statements(func):
            text = ast.unparse(node)
            if isinstance(node, ast.Return):
                expr = node.value
                seconds = best_time(ast.unparse(expr), namespace)
                if part == "forward":  # hand the residuals to the backward sweep
                    namespace[residuals_name] = eval(compile(ast.Expression(expr), "<ret>", "eval"),
                                                     namespace)[1]
                    continue
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and \
                    not isinstance(node, ast.AugAssign):
                expr = node.value
                seconds = best_time(ast.unparse(expr), namespace)
            else:
                seconds = None  # loops, branches, `+=`: timed once, as they run (they change state)
            if not isinstance(node, ast.Return):
                code = compile(ast.Module([node], []), "<stmt>", "exec")
                start = time.perf_counter()
                exec(code, namespace)
                if seconds is None:
                    seconds = time.perf_counter() - start
            rows.append((part, seconds, text))

    vg = s2sgrad.value_and_grad(case.primal, argnums=case.argnums)
    whole = best_time(lambda: vg(*args), {})
    hand = best_time(lambda: case.hand(*args), {})
    primal = best_time(lambda: case.primal(*args), {})
    total = sum(s for _, s, _ in rows if s == s)
    print(f"{case.name}: {case.description}")
    print(f"value_and_grad {whole * 1e6:.2f} us, hand-written {hand * 1e6:.2f} us, primal "
          f"{primal * 1e6:.2f} us; the statements below add up to {total * 1e6:.2f} us\n")
    for part, seconds, text in rows:
        first = text.splitlines()[0]
        share = 100.0 * seconds / whole if seconds == seconds else float("nan")
        print(f"{part:<9}{seconds * 1e6:10.2f} us {share:5.1f}%  {first}")

    if with_cprofile:
        print("\ncProfile of 2000 value_and_grad calls (own time; profiler overhead inflates Python):")
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(2000):
            vg(*args)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", help=f"one of {', '.join(cases.BY_NAME)}, or KERNEL/SPELLING of "
                        "kernels.py")
    parser.add_argument("--cprofile", action="store_true", help="also print a cProfile summary")
    opts = parser.parse_args(argv)
    run(opts.case, opts.cprofile)


if __name__ == "__main__":
    main()
