"""The sweeps made for the arrays' shape signature against the sweeps made for any shape, side by
side, per kernel spelling of kernels.py (reverse mode; fwd then bwd, best of rounds).

usage: python benchmarks/specialized.py [KERNEL ...]   (all reverse-mode kernels when none given)
"""
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernels  # noqa: E402
from s2sgrad import derive, parameters, specialize  # noqa: E402


def best_us(fwd, bwd, args, number=200, repeat=7):
    return min(timeit.repeat(lambda: bwd(fwd(*args)[1]), number=number, repeat=repeat)) / number * 1e6


def main(names):
    chosen = [kernels.BY_NAME[n] for n in names] if names else [k for k in kernels.KERNELS if k.mode == "rev"]
    print(f"{'kernel / spelling':36s} {'any shape':>11s} {'its shapes':>11s}  ratio")
    for kernel in chosen:
        args = kernel.make(np.random.default_rng(0), None)
        for name, fn in kernel.spellings:
            params = parameters.param_names(fn)
            wrt = tuple(params[i] for i in kernel.argnums)
            numbers = specialize.numbers_passed(params, args, {})
            signature = specialize.shape_signature(params, args)
            generic = derive.build(fn, wrt, numbers=numbers)[1][:2]
            made = derive.build(fn, wrt, numbers=numbers, shapes=signature)[1][:2]
            times = [best_us(*sweeps, args) for sweeps in (generic, made, generic, made)]
            any_shape, its_shapes = min(times[0], times[2]), min(times[1], times[3])
            print(f"{kernel.name + ' / ' + name:36s} {any_shape:9.1f}us {its_shapes:9.1f}us  {its_shapes / any_shape:5.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
