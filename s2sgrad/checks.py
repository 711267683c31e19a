"""check_grads: compare s2sgrad's reverse-mode gradient with central finite differences."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .errors import GradientError


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


def check_grads(fun: Callable, args: Sequence[Any], order: int = 1, modes: Sequence[str] = ("rev",),
                *, argnums: Sequence[int] | None = None, rtol: float = 1e-5, atol: float = 1e-6,
                eps: float = 1e-6) -> None:
    """Raise GradientError with a per-argument report when the gradient disagrees with
    central differences (float64 arguments recommended)."""
    from .api import grad

    if order != 1:
        raise GradientError("check_grads supports order=1 in this release")
    unknown = [m for m in modes if m != "rev"]
    if unknown:
        raise GradientError(f"check_grads: mode(s) {unknown} are not available in this release; "
                            "use modes=('rev',)")
    argnums = tuple(range(len(args))) if argnums is None else tuple(argnums)
    got = grad(fun, argnums=argnums)(*args)
    report = []
    for k, i in enumerate(argnums):
        expected = numerical_grad(fun, args, i, eps)
        if not np.allclose(got[k], expected, rtol=rtol, atol=atol):
            err = np.max(np.abs(np.asarray(got[k]) - np.asarray(expected)))
            report.append(f"  argument {i}: max abs error {err:.3g}\n"
                          f"    s2sgrad:             {np.asarray(got[k])!r}\n"
                          f"    finite differences:  {np.asarray(expected)!r}")
    if report:
        name = getattr(fun, "__name__", "function")
        raise GradientError(f"gradient check failed for {name}:\n" + "\n".join(report))
