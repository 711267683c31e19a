"""check_grads: compare s2sgrad's gradients (reverse mode) and directional derivatives (forward mode)
with central finite differences."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from .api import grad
from .derive import fresh
from .forward_code import build_jvp
from .parameters import wrt_names
from .arguments import argument_check
from .jacobians import hvp_code, run_generated
from .partials import primal_call
from .boundary import api_boundary
from .errors import GradientError
from .tree_arguments import split_call
from .trees import tree_flatten


def numerical_grad(fun: Callable, args: Sequence[Any], argnum: int, eps: float = 1e-6) -> Any:
    """Central differences of scalar ``fun`` with respect to ``args[argnum]``."""
    args = list(args)
    x = args[argnum]
    scalar = np.ndim(x) == 0
    base = np.array(x, dtype=np.float64)
    grad = np.zeros_like(base)
    flat = base.reshape(-1)
    out = grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        args[argnum] = float(flat[0]) if scalar else flat.reshape(base.shape).copy()
        plus = float(fun(*args))
        flat[i] = old - eps
        args[argnum] = float(flat[0]) if scalar else flat.reshape(base.shape).copy()
        minus = float(fun(*args))
        flat[i] = old
        out[i] = (plus - minus) / (2 * eps)
    return float(grad) if scalar else grad


class _Point:
    """Where check_grads checks: the call's arguments, its differentiated leaves (the arguments at
    ``argnums``, or each leaf of the pytrees there) and their names, and the arguments with those
    leaves replaced (``moved``)."""

    def __init__(self, fun: Callable, args: tuple, argnums: tuple) -> None:
        name = getattr(fun, "__name__", "function")
        params = tuple(inspect.signature(fun).parameters)
        self.fun, self.args, self.argnums = fun, args, argnums
        self.wrt = wrt_names(fun, argnums)
        self.split = split_call(fun, name, params, argnums, args, {})
        if self.split is None:
            argument_check(name, params, argnums, self.wrt)(args, {})
            self.leaves = [args[i] for i in argnums]
            self.texts = [f"argument {i}" for i in argnums]
            self.call_args, self.trees = args, ()
        else:
            self.leaves = [self.split.args[p] for p in self.split.leaf_positions]
            self.texts = [text for i, treedef in zip(argnums, self.split.defs)
                          for text in (treedef.path_texts(f"argument {i}") if treedef is not None
                                       else (f"argument {i}",))]
            self.call_args, self.trees = self.split.args, self.split.trees

    def moved(self, leaves: Sequence[Any]) -> tuple:
        """The call's arguments with the differentiated leaves ``leaves``."""
        out = list(self.args)
        plain = self.split is None or self.split.select  # (*args: every position a leaf)
        grouped = leaves if plain else self.split.regroup(list(leaves))
        for i, value in zip(self.argnums, grouped):
            out[i] = value
        return tuple(out)

    def spread(self, tangents: Sequence[Any]) -> tuple:
        """One tangent per differentiated leaf -> one per leaf the generated code takes (a call
        into *args: zeros for the arguments passed there that are not checked)."""
        return tuple(tangents) if self.split is None else self.split.spread(tangents)

    def selected(self, results: Sequence[Any]) -> list:
        """One result per leaf the generated code differentiates -> one per checked leaf."""
        if self.split is None or not self.split.select:
            return list(results)
        return [results[k] for k in self.split.select]

    def leaves_of(self, per_argument: Sequence[Any]) -> list:
        """One value per argnum (a tree of its structure) -> one per differentiated leaf."""
        if self.split is None:
            return list(per_argument)
        return [leaf for value in per_argument for leaf in tree_flatten(value)[0]]

    def directions(self, seed: int) -> tuple:
        """``(directions, tangents)``: a fixed pseudo-random direction per leaf (float64 arrays),
        and the same as tangents (a float for a float leaf)."""
        rng = np.random.default_rng(seed)
        directions = [rng.normal(size=np.shape(leaf)) for leaf in self.leaves]
        tangents = tuple(float(d) if np.ndim(leaf) == 0 else d
                         for d, leaf in zip(directions, self.leaves))
        return directions, tangents

    def stepped(self, directions: list, step: float, only: Sequence[int] = ()) -> tuple:
        """The arguments with each differentiated leaf (those at positions ``only``, if given)
        moved ``step`` along its direction."""
        return self.moved([np.asarray(leaf, dtype=np.float64) + step * d if not only or j in only
                           else leaf for j, (leaf, d) in enumerate(zip(self.leaves, directions))])

    def leaves_at(self, k: int) -> range:
        """The positions among the differentiated leaves of the ``k``-th argnum's leaves."""
        if self.split is None:
            return range(k, k + 1)
        sizes = [1 if d is None else d.num_leaves for d in self.split.defs]
        return range(sum(sizes[:k]), sum(sizes[:k + 1]))


@api_boundary
def check_grads(fun: Callable, args: Sequence[Any], order: int = 1, modes: Sequence[str] = ("rev",),
                *, argnums: Sequence[int] | None = None, rtol: float = 1e-5, atol: float = 1e-6,
                eps: float = 1e-6) -> None:
    """Raise GradientError with a report per argument (per leaf of a pytree argument) when the
    gradient (``"rev"``) or the derivative along a random direction (``"fwd"``, forward mode)
    disagrees with central differences (float64 arguments recommended). ``order=2`` also checks
    the Hessian times a random direction (as ``s2sgrad.hvp``) against central differences of
    the gradient. A ``functools.partial`` takes its fixed and bound arguments as constants."""
    if order not in (1, 2):
        raise GradientError(f"check_grads: order={order!r}; use 1 or 2")
    unknown = [m for m in modes if m not in ("rev", "fwd")]
    if unknown:
        raise GradientError(f"check_grads: unknown mode(s) {unknown}; use 'rev' and/or 'fwd'")
    fun, args, positions = primal_call(fun, args)  # a partial's own arguments are constants
    argnums = positions if argnums is None else tuple(positions[n] for n in argnums)
    point = _Point(fun, args, argnums)
    report = []
    if "rev" in modes:
        report.extend(_reverse_report(point, rtol, atol, eps))
    if "fwd" in modes:
        report.extend(_forward_report(point, rtol, atol, eps))
    if order == 2:
        report.extend(_second_order_report(point, rtol, atol, eps))
    if report:
        name = getattr(fun, "__name__", "function")
        raise GradientError(f"gradient check failed for {name}:\n" + "\n".join(report))


def _reverse_report(point: _Point, rtol: float, atol: float, eps: float) -> list:
    """The gradient of each differentiated leaf against central differences of ``fun`` with
    that leaf moved."""
    got = point.leaves_of(grad(point.fun, argnums=point.argnums)(*point.args))
    report = []
    for j, text in enumerate(point.texts):
        def moved(leaf: Any, j: int = j) -> Any:
            return point.fun(*point.moved([*point.leaves[:j], leaf, *point.leaves[j + 1:]]))
        expected = numerical_grad(moved, (point.leaves[j],), 0, eps)
        report.extend(_mismatch(text, got[j], expected, rtol, atol))
    return report


def _forward_report(point: _Point, rtol: float, atol: float, eps: float) -> list:
    """Forward mode along a fixed pseudo-random direction per argument (one at a time), against
    central differences along it; a pytree output leaf by leaf."""
    directions, tangents = point.directions(0)
    _, fn, tangent_names = build_jvp(point.fun, point.wrt, point.trees)  # forward mode itself
    fresh(fn)  # (the module may be one made before: the user's values now)
    report = []
    for k, i in enumerate(point.argnums):
        only = point.leaves_at(k)
        along = [t if j in only else (0.0 if isinstance(t, float) else np.zeros_like(t))
                 for j, t in enumerate(tangents)]
        got = fn(*point.call_args, **dict(zip(tangent_names, point.spread(along))))[1]
        plus, minus = (point.fun(*point.stepped(directions, s, only)) for s in (eps, -eps))
        for g, p, m in zip(*(tree_flatten(v)[0] for v in (got, plus, minus))):
            expected = (np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64)) / (2 * eps)
            report.extend(_mismatch(f"argument {i} (forward mode, along a random direction)", g,
                                    expected, rtol, atol))
    return report


def _second_order_report(point: _Point, rtol: float, atol: float, eps: float) -> list:
    """The Hessian times a fixed pseudo-random direction (every differentiated leaf at once),
    against central differences of the gradient along it."""
    directions, tangents = point.directions(1)
    made = hvp_code(point.fun, point.wrt, False, point.trees)[1]
    got = point.selected(run_generated(made, point.call_args, tangents=point.spread(tangents)))
    gradient = grad(point.fun, argnums=point.argnums)
    plus, minus = (point.leaves_of(gradient(*point.stepped(directions, s))) for s in (eps, -eps))
    report = []
    for j, text in enumerate(point.texts):
        expected = (np.asarray(plus[j]) - np.asarray(minus[j])) / (2 * eps)
        report.extend(_mismatch(f"{text} (Hessian times a random direction)", got[j], expected,
                                rtol, atol))
    return report


def _mismatch(what: str, got: Any, expected: Any, rtol: float, atol: float) -> list:
    """One report entry when ``got`` and the finite-difference ``expected`` disagree, else none."""
    got, expected = np.asarray(got), np.asarray(expected)
    if np.allclose(got, expected, rtol=rtol, atol=atol):
        return []
    err = np.max(np.abs(got - expected))
    return [f"  {what}: max abs error {err:.3g}\n"
            f"    s2sgrad:             {got!r}\n"
            f"    finite differences:  {expected!r}"]
