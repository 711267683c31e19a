"""Where the time of a generated gradient goes, statement by statement.

    python benchmarks/profile_lines.py logsumexp            # per-statement cost of the generated code
    python benchmarks/profile_lines.py rosenbrock --cprofile  # plus cProfile of whole calls
    python benchmarks/profile_lines.py heat/heat_slices       # a kernel/spelling of kernels.py

The generated module that value_and_grad of the case's primal runs from the second call with its
arguments on (made for their shapes; ``--generic``: for any shape) is parsed; the forward sweep's and the
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


def run(case_name: str, with_cprofile: bool, generic: bool = False) -> None:
    import s2sgrad
    from s2sgrad.parameters import param_names
    from s2sgrad.returned import NUMBERS_ATTR
    from s2sgrad.specialize import array_globals, call_signature, numbers_passed

    case = lookup(case_name)
    args = case.make(np.random.default_rng(0))
    params = param_names(case.primal)
    builds = getattr(s2sgrad.value_and_grad(case.primal, argnums=case.argnums), NUMBERS_ATTR)
    numbers = numbers_passed(params, args, {})
    shapes = () if generic else call_signature(params, args, array_globals(builds.sweeps(numbers)[0], params))
    made_fwd, made_bwd = builds.sweeps(numbers, shapes)  # what a call's second run runs
    text = builds.text(numbers, shapes)
    module = ast.parse(text)
    namespace = dict(made_fwd.__globals__)
    fwd = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == made_fwd.__name__)
    bwd = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == made_bwd.__name__)
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
    parser.add_argument("--generic", action="store_true",
                        help="the code made for arrays of any shape (by default: the code made for "
                        "the case's arguments' shapes, which value_and_grad runs from their second call)")
    opts = parser.parse_args(argv)
    run(opts.case, opts.cprofile, opts.generic)


if __name__ == "__main__":
    main()
