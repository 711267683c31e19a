"""s2sgrad's own transformations called inside differentiated code: no rules (s2sgrad reads the
functions they return instead, and lower/inner.py rewrites the plain forms of vjp and jvp
calls), and what to write instead (the hints of the refusals)."""

_MADE_OUTSIDE = ("s2sgrad reads the function a transformation returned, not the call that makes "
                 "it: make it once outside this function (`f_grad = s2sgrad.grad(f)` at module "
                 "level) and call `f_grad(x)` here")
INSTEAD = {
    **{f"s2sgrad.{name}": _MADE_OUTSIDE for name in (
        "grad", "value_and_grad", "hessian", "hvp", "jacfwd", "jacrev")},
    "s2sgrad.vjp": "s2sgrad differentiates `out, pullback = s2sgrad.vjp(f, x)` written as a "
                   "statement of the function's body (not inside a block), `f` a function s2sgrad "
                   "reads and `pullback` only called (`pullback(v)`); write it so, or use "
                   "`f_dot_grad(x, v)` with `def f_dot(x, v): return np.sum(f(x) * v)` and "
                   "`f_dot_grad = s2sgrad.grad(f_dot)` made at module level",
    "s2sgrad.jvp": "s2sgrad differentiates `s2sgrad.jvp(f, (x, ...), (t, ...))` with the primals "
                   "and tangents written as tuple displays and `f` a function s2sgrad reads; "
                   "write it so, or for a scalar `f` use `np.sum(f_grad(x) * t)` with "
                   "`f_grad = s2sgrad.grad(f)` made at module level",
}
