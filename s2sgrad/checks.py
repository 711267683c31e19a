"""check_grads: compare s2sgrad's gradients (reverse mode) and directional derivatives (forward mode)
with central finite differences."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from .api import build_jvp, grad, wrt_names
from .arguments import argument_check
from .jacobians import second_order
from .boundary import api_boundary
from .errors import GradientError
from .tree_arguments import split_call
from .trees import tree_flatten, tree_unflatten


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


@api_boundary
def check_grads(fun: Callable, args: Sequence[Any], order: int = 1, modes: Sequence[str] = ("rev",),
                *, argnums: Sequence[int] | None = None, rtol: float = 1e-5, atol: float = 1e-6,
                eps: float = 1e-6) -> None:
    """Raise GradientError with a per-argument report when the gradient (``"rev"``) or the
    derivative along a random direction (``"fwd"``, forward mode) disagrees with central
    differences (float64 arguments recommended). ``order=2`` also checks the Hessian times a
    random direction (``s2sgrad.hvp``) against central differences of the gradient."""
    if order not in (1, 2):
        raise GradientError(f"check_grads: order={order!r}; use 1 or 2")
    unknown = [m for m in modes if m not in ("rev", "fwd")]
    if unknown:
        raise GradientError(f"check_grads: unknown mode(s) {unknown}; use 'rev' and/or 'fwd'")
    argnums = tuple(range(len(args))) if argnums is None else tuple(argnums)
    params = tuple(inspect.signature(fun).parameters)
    name = getattr(fun, "__name__", "function")
    if split_call(fun, name, params, argnums, tuple(args), {}) is not None:
        if set(modes) != {"rev"} or order != 1:
            raise GradientError(f"check_grads: with pytree arguments it checks modes=('rev',) "
                                f"at order 1 so far (asked: modes={tuple(modes)!r}, order={order})")
        report = _tree_report(fun, tuple(args), argnums, rtol, atol, eps)
        if report:
            raise GradientError(f"gradient check failed for {name}:\n" + "\n".join(report))
        return
    argument_check(name, params, argnums, wrt_names(fun, argnums))(tuple(args), {})
    report = []
    if "rev" in modes:
        got = grad(fun, argnums=argnums)(*args)
        for k, i in enumerate(argnums):
            expected = numerical_grad(fun, args, i, eps)
            report.extend(_mismatch(f"argument {i}", got[k], expected, rtol, atol))
    if "fwd" in modes:
        report.extend(_forward_report(fun, args, argnums, rtol, atol, eps))
    if order == 2:
        report.extend(_second_order_report(fun, args, argnums, rtol, atol, eps))
    if report:
        name = getattr(fun, "__name__", "function")
        raise GradientError(f"gradient check failed for {name}:\n" + "\n".join(report))


def _tree_report(fun: Callable, args: tuple, argnums: tuple, rtol: float, atol: float,
                 eps: float) -> list:
    """The gradient of each leaf of the pytree arguments at ``argnums`` against central
    differences of ``fun`` with that leaf moved (the tree rebuilt around it)."""
    got = grad(fun, argnums=argnums)(*args)
    report = []
    for k, i in enumerate(argnums):
        leaves, treedef = tree_flatten(args[i])
        got_leaves = tree_flatten(got[k])[0]
        texts = treedef.path_texts(f"argument {i}")
        for j, text in enumerate(texts):
            def moved(*leaf: Any, j: int = j) -> Any:
                out = list(args)
                out[i] = tree_unflatten(treedef, [*leaves[:j], leaf[0], *leaves[j + 1:]])
                return fun(*out)
            expected = numerical_grad(moved, (leaves[j],), 0, eps)
            report.extend(_mismatch(text, got_leaves[j], expected, rtol, atol))
    return report


def _forward_report(fun: Callable, args: Sequence[Any], argnums: tuple, rtol: float, atol: float,
                    eps: float) -> list:
    """Forward mode along a fixed pseudo-random direction per argument, against central
    differences along it."""
    rng = np.random.default_rng(0)
    report = []
    for i, name in zip(argnums, wrt_names(fun, argnums)):
        x = args[i]
        direction = rng.normal(size=np.shape(x))
        tangent = float(direction) if np.ndim(x) == 0 else direction
        _, fn, tangent_names = build_jvp(fun, (name,))
        got = fn(*args, **{tangent_names[0]: tangent})[1]
        moved = list(args)
        moved[i] = np.asarray(x, dtype=np.float64) + eps * direction
        plus = np.asarray(fun(*moved), dtype=np.float64)
        moved[i] = np.asarray(x, dtype=np.float64) - eps * direction
        expected = (plus - np.asarray(fun(*moved), dtype=np.float64)) / (2 * eps)
        report.extend(_mismatch(f"argument {i} (forward mode, along a random direction)", got,
                                expected, rtol, atol))
    return report


def _second_order_report(fun: Callable, args: Sequence[Any], argnums: tuple, rtol: float,
                         atol: float, eps: float) -> list:
    """The Hessian times a fixed pseudo-random direction (all of ``argnums`` at once), against
    central differences of the gradient along it."""
    rng = np.random.default_rng(1)
    directions = [rng.normal(size=np.shape(args[i])) for i in argnums]
    tangents = tuple(float(d) if np.ndim(args[i]) == 0 else d for d, i in zip(directions, argnums))
    _, run = second_order(fun, wrt_names(fun, argnums))
    got = run(tuple(args), tangents)
    gradient = grad(fun, argnums=argnums)

    def moved(sign: float) -> tuple:
        out = list(args)
        for d, i in zip(directions, argnums):
            out[i] = np.asarray(args[i], dtype=np.float64) + sign * eps * d
        return gradient(*out)

    plus, minus = moved(1.0), moved(-1.0)
    report = []
    for k, i in enumerate(argnums):
        expected = (np.asarray(plus[k]) - np.asarray(minus[k])) / (2 * eps)
        report.extend(_mismatch(f"argument {i} (Hessian times a random direction)", got[k],
                                expected, rtol, atol))
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
