"""numpy's sum over axes against ``s2s.axis_sum`` (runtime/sums.py: the same sum as a product with
ones where numpy's is slow), side by side in paired rounds, for the shapes gradients sum back over
(a bias of a batch, the coordinates of pairwise differences, a cloud of points, a large matrix), with
the relative difference of the two results from a float64 sum.

usage: python benchmarks/sums.py [--rounds N]
"""
import argparse
import statistics
import timeit

import numpy as np

from s2sgrad import runtime as s2s

CASES = [((1000, 20), 0), ((64, 128), 0), ((64, 128), 1), ((63, 63, 3), 1), ((63, 63, 3), 2),
         ((63, 63, 3), 0), ((100000, 3), 0), ((1000, 10, 4), 1), ((100, 100, 100), 1), ((1000, 1000), 0),
         ((1000, 1000), 1), ((8, 50, 32), (0, 1)), ((2, 3), 0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    opts = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'shape':>16s} {'axis':>7s} {'dtype':>8s} {'np.sum':>10s} {'axis_sum':>10s} {'ratio':>7s}  "
          f"{'err np':>8s} {'err prod':>8s}")
    for shape, axis in CASES:
        for dtype in (np.float64, np.float32):
            x = rng.uniform(0.0, 1.0, size=shape).astype(dtype)
            number = max(10, int(1e6 // x.size))
            ratios, times = [], []
            for _ in range(opts.rounds):  # paired: each round times both
                a = timeit.timeit(lambda: np.sum(x, axis=axis), number=number) / number
                b = timeit.timeit(lambda: s2s.axis_sum(x, axis), number=number) / number
                ratios.append(a / b)
                times.append((a, b))
            exact = np.sum(x.astype(np.float64), axis=axis)
            err = [float(np.max(np.abs(y - exact) / np.abs(exact))) for y in
                   (np.sum(x, axis=axis), s2s.axis_sum(x, axis))]
            a, b = (statistics.median(t[i] for t in times) * 1e6 for i in (0, 1))
            print(f"{str(shape):>16s} {str(axis):>7s} {np.dtype(dtype).name:>8s} {a:8.1f}us {b:8.1f}us "
                  f"{statistics.median(ratios):6.2f}x  {err[0]:8.1e} {err[1]:8.1e}")


if __name__ == "__main__":
    main()
