"""The functional API: a function (and argnums or primals) -> grad, value_and_grad, vjp, jvp;
source(what they returned) -> its generated text (jacobians.py composes these into jacfwd, jacrev,
hvp and hessian). Thin: the generated code comes from derive.py (the disk cache, else the
pipeline), once per call. A function s2sgrad returns carries the generated function that computes
the same (``ENTRY_ATTR``), so a transformation of it reads generated code. ``wrt_names`` and
``build_jvp`` are also what checks.py builds its checks from."""

from __future__ import annotations

import functools
import inspect
import linecache
import types
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import runtime
from .arguments import MASKED, argument_check, masked_refusal, unit_seed
from .boundary import api_boundary
from .errors import GradientError, Location, TransformError, UsageError
from .read.live import ENTRY_ATTR, TREE_ENTRY_ATTR, Deferred, readable, tree_entry_of
from .partials import curried, primal_call
from .read.capture import (MADE_ATTR, SOURCE_ATTR, caller_location, check_function, display_path,
                           from_function)
from .transpose import jvp_by_reverse
from .transformations import TRANSFORMATIONS, Transformation
from .tree_arguments import Split, split_call, star_position
from .trees import LEAF, TreeDef, tree_flatten, tree_unflatten
from . import derive

FORWARD_ATTR = "__s2sgrad_forward__"


def display_name(fun: Callable) -> str:
    """``fun`` as messages name it: its name, or how s2sgrad made it (``s2sgrad.grad(f)``)."""
    return getattr(fun, MADE_ATTR, None) or getattr(fun, "__name__", "the function")


def _param_names(fun: Callable) -> tuple:
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return ()
    return tuple(sig.parameters)


def wrt_names(fun: Callable, argnums: Union[int, Sequence[int]]) -> tuple:
    """The names of the parameters ``argnums`` points at, after refusing (located at the user's
    call) a ``fun`` s2sgrad cannot read."""
    check_function(fun)  # refuses a builtin, a ufunc, a method, what s2sgrad returned... at the call
    return _argnum_names(fun, argnums)


def _argnum_names(fun: Callable, argnums: Union[int, Sequence[int]]) -> tuple:
    names = _param_names(fun)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    at = star_position(fun)
    star = None if at is None else names[at]
    for n in nums:
        if at is not None and isinstance(n, int) and n < 0:
            raise TransformError(f"argnums {argnums!r}: {getattr(fun, '__name__', fun)!r} takes "
                                 f"*{star}, so a position counted from the end is not known until "
                                 "it is called", _def_location(fun), "count argnums from 0")
        if at is not None and isinstance(n, int) and n >= at:
            if star not in out:  # argnums into *args: the arguments passed there, a tuple
                out.append(star)
            continue
        if not isinstance(n, int) or not -len(names) <= n < len(names):
            where = _def_location(fun)
            raise TransformError(
                f"argnums {argnums!r} does not fit {getattr(fun, '__name__', fun)!r} (defined at "
                f"{where.path}:{where.line}), which has {len(names)} parameter(s)"
                + (f": {', '.join(names)}" if names else ""),
                caller_location(), "pass argnums as parameter positions (0 is the first)")
        out.append(names[n])
    return tuple(out)


def made_per_call(fun: Callable, wrt: tuple) -> Optional[TransformError]:
    """Where ``wrt`` names ``fun``'s ``*args``, what stands for its generated code until a call
    (the code is made for the number of arguments each call passes there: Split); else None."""
    at = star_position(fun)
    if at is None or _param_names(fun)[at] not in wrt:
        return None
    star = _param_names(fun)[at]
    return TransformError(
        f"the generated code of {getattr(fun, '__name__', fun)} is made for the number of "
        f"arguments a call passes to *{star}", _def_location(fun),
        "call the function s2sgrad returned; its code for the arrays given is made then")


class _Forward:
    """Forward mode of ``fun`` with respect to one parameter, built on first use (``None`` when
    s2sgrad has no forward mode for it: the caller then uses reverse mode)."""

    def __init__(self, fun: Callable, wrt: tuple) -> None:
        self.fun = fun
        self.wrt = wrt
        self.built = False
        self.fn: Any = None
        self.text = ""
        self.tangents: tuple = ()
        self.positional = -1  # primal parameter count when the tangents follow them positionally
        self.refusal: Any = None

    def get(self) -> Any:
        if not self.built:
            self.built = True
            try:
                self.text, self.fn, self.tangents = build_jvp(self.fun, self.wrt)
                params = inspect.signature(self.fn).parameters.values()
                if all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params):
                    self.positional = len(params) - len(self.tangents)
            except Exception as exc:  # noqa: BLE001 - a refusal (or a failure) means reverse mode
                self.refusal = exc
                self.fn = None
        return self.fn

    def run(self, args: tuple) -> Any:
        """``(value, tangent)`` along 1.0, or None after forward mode failed here (it is then
        left for reverse mode, which runs the user's code again and raises what it raises)."""
        try:
            derive.fresh(self.fn)
            if len(args) == self.positional:
                return self.fn(*args, 1.0)
            return self.fn(*args, **{self.tangents[0]: 1.0})
        except Exception as exc:  # noqa: BLE001
            self.refusal, self.fn = exc, None
            return None


def build_jvp(fun: Callable, wrt: tuple, trees: tuple = ()) -> tuple:
    """Forward-mode transform of ``fun`` (or the disk cache): its text, its ``<name>_jvp``
    function and the names of that function's tangent parameters (one per leaf of ``trees``)."""
    text, (fn,) = derive.build(fun, wrt, mode="fwd", trees=trees)
    params = tuple(inspect.signature(fn).parameters)
    count = leaf_count(wrt, trees)
    return text, fn, params[len(params) - count:]


def leaf_wrt(fun: Callable, wrt: tuple, trees: tuple, mode: str) -> tuple:
    """The parameters the code generated for ``trees`` (of ``mode``) differentiates: ``wrt``,
    each tree parameter replaced by its leaves' parameters."""
    if not trees:
        return wrt
    return tuple(derive.entry_for(fun, from_function(fun), wrt, mode=mode, trees=trees)["wrt"])


def leaf_count(wrt: tuple, trees: tuple) -> int:
    """How many parameters the code generated for ``trees`` differentiates for ``wrt``."""
    sizes = {param: treedef.num_leaves for param, treedef in trees}
    return sum(sizes.get(name, 1) for name in wrt)


def _attach(wrapper: Callable, fun: Callable, text: str, forward: Any = None, made: str = "",
            entry: Optional[Callable] = None, tree_entry: Optional[Callable] = None) -> Callable:
    """``wrapper`` named as ``fun``, with its generated ``text``, how it was ``made``, and the
    generated ``entry`` function computing the same (what a later transformation reads; for
    pytree arguments, what ``tree_entry`` gives: read/live.py's TREE_ENTRY_ATTR)."""
    functools.update_wrapper(wrapper, fun, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    del wrapper.__wrapped__
    setattr(wrapper, SOURCE_ATTR, text)
    inner = getattr(fun, MADE_ATTR, None) or getattr(fun, "__qualname__", fun)
    setattr(wrapper, MADE_ATTR, f"{made}({inner})")
    if forward is not None:
        setattr(wrapper, FORWARD_ATTR, forward)
    if entry is not None:
        setattr(wrapper, ENTRY_ATTR, entry)
    if tree_entry is not None:
        setattr(wrapper, TREE_ENTRY_ATTR, tree_entry)
    return wrapper


def _scalar_loss(value: Any, has_aux: bool, name: str) -> Any:
    if has_aux:
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise GradientError(f"has_aux=True requires {name} to return a pair (value, aux)")
        value = value[0]
    runtime.check_scalar(value, name)
    return value


def run_sweeps(fwd: Callable, bwd: Callable, args: Sequence[Any], kwargs: dict, name: str,
               has_aux: bool = False) -> tuple:
    """``(value, gradients)``: the generated forward sweep ``fwd`` at the arguments, its value
    checked as a real scalar (a pair ``(value, aux)`` with ``has_aux``), then the backward sweep
    ``bwd`` seeded with a 1 of the value's array type (arguments.unit_seed), handed the residuals
    so that it holds the only reference to them and frees each after its last use."""
    value, residuals = fwd(*args, **kwargs)
    if has_aux or type(value) not in _SCALARS:
        _scalar_loss(value, has_aux, name)
    handover = [residuals]
    del residuals
    return value, bwd(handover.pop(), unit_seed(value, has_aux))


_FLOATS = frozenset({float, np.float64})  # one number: forward mode needs no tape
_SCALARS = frozenset({float, np.float64, np.float32})  # real scalar losses at a glance


def _forward_grad(forward, args: tuple, kwargs: dict, needed: int, first: int, single: bool,
                  name: str) -> Optional[tuple]:
    """``(value, gradient)`` by forward mode where the one differentiated argument is a float
    (passed by position, with the ``needed`` positional arguments), or None: not such a call, or
    forward mode refuses."""
    if forward is None or kwargs or len(args) < needed or type(args[first]) not in _FLOATS or \
            forward.get() is None:
        return None
    result = forward.run(args)
    if result is None:
        return None
    value, tangent = result
    if type(value) not in _SCALARS:
        _scalar_loss(value, False, name)
    grad = runtime.like(tangent, args[first])
    return value, (grad if single else (grad,))


def _sweep(fun: Callable, argnums: Union[int, Sequence[int]], has_aux: bool) -> tuple:
    """``(text, run, forward, entry, tree_entry)``: ``run(*args, **kwargs)`` -> the value and the
    gradients (one, or a tuple, as argnums says), by forward mode (``forward``) for one float
    argument; ``entry(value)``: the generated function computing what grad (value False) or
    value_and_grad returns (None for a bound method); ``tree_entry(value)``: the same for pytree
    arguments, per structure (read/live.py's TREE_ENTRY_ATTR)."""
    if inspect.ismethod(fun) and isinstance(fun.__func__, types.FunctionType):
        return _method_sweep(fun, argnums, has_aux)
    name = display_name(fun)
    fun, made_by_s2sgrad = read_again(fun)
    wrt = wrt_names(fun, argnums)
    text, fwd, bwd, entry = made_per_call(fun, wrt), None, None, None
    try:
        if text is None:
            text, (fwd, bwd, entry) = derive.build(fun, wrt, has_aux)
    except TransformError as refusal:  # raised at a call with arrays there: pytrees may be read
        if refusal.member_of is None:
            raise
        text = refusal  # (``model.W`` of a dataclass)
    single = isinstance(argnums, int)
    entry, positions = _entries(fun, wrt, has_aux, single, entry), _positions(argnums)
    forward = _Forward(fun, wrt) if len(wrt) == 1 and not has_aux else None
    first, params = positions[0], _param_names(fun)  # forward mode differentiates ``first``
    check_arguments = argument_check(name, params, positions, wrt)
    needed = max((max(p + 1, -p) for p in positions), default=0)  # positional arguments forward mode reads
    trees = TreeBuilds(fun, wrt, has_aux)

    def run(*args: Any, **kwargs: Any) -> tuple:
        split = split_call(fun, name, params, positions, args, kwargs)
        if split is not None:  # pytrees: code generated for their structures
            if made_by_s2sgrad:
                raise again_with_trees(name)
            return _tree_sweep(trees, split, has_aux, single, name)
        check_arguments(args, kwargs)
        if fwd is None:  # the code for arrays there was refused
            raise text
        derive.fresh(fwd)  # the user's values now: generated code reads them as Python does
        result = _forward_grad(forward, args, kwargs, needed, first, single, name)
        if result is not None:
            return result
        value, grads = run_sweeps(fwd, bwd, args, kwargs, name, has_aux)
        return value, (grads[0] if single else grads)

    tree_entry = tree_entries(fun, name, positions, wrt, (has_aux, single, made_by_s2sgrad), trees)
    return text, run, forward, entry, tree_entry


def tree_entries(fun: Callable, name: str, positions: tuple, wrt: tuple, flags: tuple,
                  trees: "TreeBuilds") -> Callable:
    """``tree_entry(value)`` for _sweep: per call with pytree arguments, ``(split, the generated
    function computing what grad (value False) or value_and_grad returns from the leaves, the
    structure of its flat results)`` (read/live.py's TREE_ENTRY_ATTR); None with has_aux or for
    a function s2sgrad returned (``flags``: has_aux, single, made by s2sgrad)."""
    params, (has_aux, single, again_made) = _param_names(fun), flags
    if again_made:
        return lambda value: None

    def tree_entry(value: bool) -> Callable:
        def again(args: tuple, kwargs: dict) -> Optional[tuple]:
            split = split_call(fun, name, params, positions, args, kwargs)
            if split is None or split.select or has_aux:
                return None
            if not value and (single or len(wrt) > 1):
                fn = trees.get(split)[2]
            else:
                fn = derive.api_function(fun, wrt, has_aux, value, single, trees=split.trees)
            if fn is None:
                return None
            grads = (split.defs[0] or LEAF) if single else \
                TreeDef("tuple", children=tuple(d or LEAF for d in split.defs))
            return split, fn, TreeDef("tuple", children=(LEAF, grads)) if value else grads
        again.fun = fun  # type: ignore[attr-defined]  # whose parameters the calls pass
        return again

    return tree_entry


def _tree_sweep(trees: "TreeBuilds", split: Split, has_aux: bool, single: bool, name: str) -> tuple:
    """``(value, gradients)`` of a call with pytree arguments (``split``), by the sweeps generated
    for their structures, the gradients rebuilt in the arguments' structures."""
    tree_fwd, tree_bwd, _ = trees.get(split)
    value, grads = run_sweeps(tree_fwd, tree_bwd, split.args, dict(split.keywords), name, has_aux)
    grads = split.regroup(grads)
    return value, (grads[0] if single else grads)


def read_again(fun: Callable) -> tuple:
    """``(readable(fun), whether that is generated code s2sgrad returned rather than fun)``."""
    found = readable(fun)
    return found, found is not fun


def again_with_trees(name: str) -> TransformError:
    """The refusal of a transformation of a function s2sgrad returned, called with pytrees."""
    return TransformError(
        f"{name} is a function s2sgrad returned, called here with pytree arguments: of such "
        "functions, s2sgrad transforms again grad and value_and_grad (without has_aux) by jacfwd "
        "and jacrev differentiating the same arguments", caller_location(),
        "transform the original function (s2sgrad.hessian, jacfwd or jacrev of it), or give the "
        "function s2sgrad returned the arrays as separate arguments")


class TreeBuilds:
    """The generated sweeps of ``fun`` for each structure of its pytree arguments, made on first
    use of that structure (pipeline.Options.trees; the disk cache keys on it too)."""

    def __init__(self, fun: Callable, wrt: tuple, has_aux: bool = False) -> None:
        self.fun = fun
        self.wrt = wrt
        self.has_aux = has_aux
        self.made: dict = {}

    def get(self, split: Split, mode: str = "rev") -> tuple:
        """The callables of ``mode`` for ``split``'s structures, current (service.fresh)."""
        key = (split.trees, mode)
        if key not in self.made:
            self.made[key] = derive.build(self.fun, self.wrt, self.has_aux, mode, split.trees)
        callables = self.made[key][1]
        derive.fresh(callables[0])
        return callables

    def text(self, split: Split, mode: str = "rev") -> str:
        self.get(split, mode)
        return self.made[(split.trees, mode)][0]


def _positions(argnums: Union[int, Sequence[int]]) -> tuple:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _entries(fun: Callable, wrt: tuple, has_aux: bool, single: bool,
             grad_entry: Callable) -> Callable:
    """``entry(value)`` for _sweep: the generated ``<f>_grad`` where it returns what grad does,
    else a generated function made on first use (write/entries.py)."""
    def entry(value: bool) -> Any:
        if grad_entry is None:
            return None
        if not value and not has_aux and (single or len(wrt) > 1):
            return grad_entry
        return Deferred(lambda: derive.api_function(fun, wrt, has_aux, value, single))
    return entry


def _method_sweep(method: Any, argnums: Union[int, Sequence[int]], has_aux: bool) -> tuple:
    """_sweep of a bound method: its function, differentiated with respect to the explicit
    arguments ``argnums`` names (the object's attributes are constants), called with the object."""
    _argnum_names(method, argnums)  # checked against the explicit parameters

    def shift(p: Any) -> Any:
        return p + 1 if isinstance(p, int) and p >= 0 else p

    inner = shift(argnums) if isinstance(argnums, int) else tuple(shift(p) for p in argnums)
    text, run, forward, _, _ = _sweep(method.__func__, inner, has_aux)
    owner = method.__self__

    def run_method(*args: Any, **kwargs: Any) -> tuple:
        return run(owner, *args, **kwargs)

    return text, run_method, forward, lambda value: None, lambda value: None


@api_boundary
@curried
def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *,
                   has_aux: bool = False) -> Callable:
    """``fun``'s value and gradient in one call (JAX conventions for argnums and has_aux)."""
    text, run, forward, entry, tree_entry = _sweep(fun, argnums, has_aux)
    return _attach(api_boundary(run), fun, text, forward, "s2sgrad.value_and_grad", entry(True),
                   tree_entry(True))


@api_boundary
@curried
def grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *, has_aux: bool = False) -> Callable:
    """The gradient of scalar-valued ``fun``: one array for an int argnums, a tuple for a tuple."""
    text, run, forward, entry, tree_entry = _sweep(fun, argnums, has_aux)

    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, result = run(*args, **kwargs)
        return (result, value[1]) if has_aux else result

    return _attach(api_boundary(grad_fun), fun, text, forward, "s2sgrad.grad", entry(False),
                   tree_entry(False))


TRANSFORMATIONS.add(Transformation("value_and_grad", value_and_grad))
TRANSFORMATIONS.add(Transformation("grad", grad))


@api_boundary
def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(out, pullback)``: ``pullback(cotangent)`` returns one adjoint per primal, as a tuple.

    With ``has_aux=True``, ``fun`` returns ``(out, aux)`` and vjp returns ``(out, pullback, aux)``.
    A ``functools.partial`` takes its fixed and bound arguments as constants.
    """
    fun, args, positions = primal_call(fun, primals)
    original, fun = fun, readable(fun)
    again = tree_entry_of(original)
    if again is not None and not has_aux:
        split = split_call(again.fun, display_name(original), _param_names(again.fun), positions,
                           args, {})
        if split is not None:
            return _vjp_again(original, split, args)
    wrt_names(fun, ())  # refuses what s2sgrad cannot read, at the user's call
    params = _param_names(fun)
    wrt = _argnum_names(fun, positions)
    name = getattr(fun, "__name__", "the function")
    split = split_call(fun, name, params, positions, args, {}, complex_numbers=True)
    if split is None:
        argument_check(name, params, positions, wrt, complex_numbers=True)(args, {})
    text, (fwd, bwd, _) = derive.build(fun, wrt, has_aux, trees=() if split is None else split.trees)
    derive.fresh(fwd)
    value, residuals = fwd(*(args if split is None else split.args))

    def pullback(cotangent: Any) -> tuple:
        if isinstance(cotangent, MASKED):
            raise masked_refusal(name, "the cotangent")
        adjoints = bwd(residuals, cotangent)
        return adjoints if split is None else split.regroup(adjoints)

    _attach(pullback, fun, text, made="the pullback of s2sgrad.vjp")
    if has_aux:
        out, aux = value
        return out, pullback, aux
    return value, pullback


@api_boundary
def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """Forward mode: ``(out, tangent_out)``, the value of ``fun(*primals)`` and its derivative
    along ``tangents`` (one per primal, each shaped like it), in one sweep with nothing recorded.
    A ``functools.partial`` takes its fixed and bound arguments as constants."""
    fun, args, positions = primal_call(fun, primals)
    original, fun = fun, readable(fun)
    if tree_entry_of(original) is not None:
        again = tree_entry_of(original)
        split = split_call(again.fun, display_name(original), _param_names(again.fun), positions,
                           args, {})
        if split is not None:
            return _jvp_again(original, split, args, tangents)
    split = split_call(fun, getattr(fun, "__name__", "the function"), _param_names(fun),
                       positions, args, {}, complex_numbers=True)
    if split is not None:
        wrt = wrt_names(fun, positions)
        tangents = flat_tangents(split, tangents, "jvp")
        _, fn, names_dot = jvp_or_transpose(fun, wrt, split.trees)
        derive.fresh(fn)
        return fn(*split.args, **dict(zip(names_dot, tangents)))
    tangents, wrt = _directional(fun, args, positions, tangents, "jvp")
    _, fn, names_dot = jvp_or_transpose(fun, wrt)
    return fn(*args, **dict(zip(names_dot, tangents)))


def _vjp_again(original: Callable, split: Split, args: tuple) -> tuple:
    """vjp of ``original``, a function s2sgrad returned, at a call with pytree arguments
    (``split``): reverse mode over the generated function it stands for at these structures
    (read/live.py's TREE_ENTRY_ATTR); its value, and a pullback taking a cotangent of that
    value's structure (``vjp(grad(loss), params, x)``: the gradient as a dict, and the Hessian
    times a cotangent dict)."""
    inner, out_def = _inner_at(original, split, args)
    params = _param_names(inner)
    text, (fwd, bwd, _) = derive.build(inner, tuple(params[i] for i in split.leaf_positions))
    derive.fresh(fwd)
    value, residuals = fwd(*split.args, **dict(split.keywords))
    value_leaves, inner_def = tree_flatten(value)

    def pullback(cotangent: Any) -> tuple:
        leaves, got = tree_flatten(cotangent)
        if got != out_def:
            raise UsageError(f"the cotangent's structure ({got.describe()}) is not the value's "
                             f"({out_def.describe()})")
        return split.regroup(bwd(residuals, tree_unflatten(inner_def, leaves)))

    _attach(pullback, inner, text, made="the pullback of s2sgrad.vjp")
    return tree_unflatten(out_def, value_leaves), pullback


def _inner_at(original: Callable, split: Split, args: tuple) -> tuple:
    """``(the generated function original stands for at split's structures, the structure of
    its value)``; refused where it has none or flattens other arguments than ``split``."""
    found = tree_entry_of(original)(args, {})
    if found is None or found[0].trees != split.trees:
        raise again_with_trees(display_name(original))
    return found[1], found[2]


def _jvp_again(original: Callable, split: Split, args: tuple, tangents: Sequence[Any]) -> tuple:
    """jvp of ``original``, a function s2sgrad returned, at a call with pytree arguments
    (``split``): forward mode over the generated function it stands for at these structures
    (read/live.py's TREE_ENTRY_ATTR, taking the leaves), its value and tangent regrouped into the
    structure ``original`` returns (``jvp(grad(loss), (params,), (v,))``: the gradient and the
    Hessian times ``v``, as dicts)."""
    inner, out_def = _inner_at(original, split, args)
    params = _param_names(inner)
    flat = flat_tangents(split, tangents, "jvp")
    _, fn, names_dot = jvp_or_transpose(inner, tuple(params[i] for i in split.leaf_positions))
    derive.fresh(fn)
    value, tangent = fn(*split.args, **dict(split.keywords), **dict(zip(names_dot, flat)))
    return (tree_unflatten(out_def, tree_flatten(value)[0]),
            tree_unflatten(out_def, tree_flatten(tangent)[0]))


def flat_tangents(split: Split, tangents: Sequence[Any], what: str) -> tuple:
    """The leaves of ``tangents`` (one tree per differentiated argument of ``split``, each of
    its argument's structure), in ``split``'s leaf order."""
    tangents = tuple(tangents)
    if len(tangents) != len(split.defs):
        raise UsageError(f"{what} needs one tangent per primal: got {len(split.defs)} primal(s) "
                         f"and {len(tangents)} tangent(s)")
    out = []
    for treedef, tangent in zip(split.defs, tangents):
        leaves, got = tree_flatten(tangent)
        if (treedef or LEAF) != got:
            raise UsageError(f"{what}: a tangent's structure ({got.describe()}) is not its "
                             f"primal's ({(treedef or LEAF).describe()})")
        out.extend(leaves)
    return tuple(out)


TRANSFORMATIONS.add(Transformation("vjp", vjp, curried=False))
TRANSFORMATIONS.add(Transformation("jvp", jvp, curried=False))


def jvp_or_transpose(fun: Callable, wrt: tuple, trees: tuple = ()) -> tuple:
    """build_jvp, or where forward mode cannot read ``fun``, the tangent by reverse mode over
    its generated gradient (transpose.py); forward mode's refusal when neither applies."""
    try:
        return build_jvp(fun, wrt, trees)
    except TransformError:
        found = jvp_by_reverse(fun, wrt, trees, leaf_count(wrt, trees))
        if found is None:
            raise
        return found


def _def_location(fun: Callable) -> Location:
    """Where ``fun`` is defined, its ``def`` line quoted."""
    code = getattr(inspect.unwrap(fun), "__code__", None)
    if code is None:
        return Location("<unknown>", 0, 0, "")
    lines = linecache.getlines(code.co_filename)
    text = lines[code.co_firstlineno - 1] if len(lines) >= code.co_firstlineno else ""
    return Location(display_path(code.co_filename), code.co_firstlineno, 1, text)


def _directional(fun: Callable, args: tuple, positions: tuple, tangents: Sequence[Any],
                 what: str) -> tuple:
    """``(tangents, wrt)`` for jvp/hvp at ``args`` (the primals at ``positions``): one tangent
    per primal, each primal an array or a float; ``wrt`` the names of their parameters."""
    tangents = tuple(tangents)
    if len(positions) != len(tangents):
        raise UsageError(f"{what} needs one tangent per primal: got {len(positions)} primal(s) and "
                         f"{len(tangents)} tangent(s)")
    wrt = wrt_names(fun, positions)
    name = getattr(fun, "__name__", "the function")
    argument_check(name, _param_names(fun), positions, wrt,
                   complex_numbers=what == "jvp")(args, {})  # a complex tangent comes back as one
    for param, tangent in zip(wrt, tangents):
        if isinstance(tangent, MASKED):
            raise masked_refusal(name, f"the tangent for `{param}`")
    return tangents, wrt


@api_boundary
def source(fn: Callable, mode: str = "rev") -> str:
    """The generated source behind a function s2sgrad returned. ``mode="fwd"`` gives, for a
    function of grad or value_and_grad with one differentiated argument, the forward-mode code
    it runs when that argument is a float."""
    text = getattr(fn, SOURCE_ATTR, None)
    if isinstance(text, TransformError):  # refused for arrays; pytrees there may be read
        raise text
    if text is None:
        raise UsageError(f"{fn!r} was not made by s2sgrad; pass what grad/value_and_grad/vjp returned")
    if mode == "rev":
        return text
    forward = getattr(fn, FORWARD_ATTR, None)
    if mode != "fwd" or forward is None:
        raise UsageError(f"source(fn, mode={mode!r}): mode is 'rev', or 'fwd' for what grad or "
                         "value_and_grad returned for one differentiated argument")
    if forward.get() is None:
        if isinstance(forward.refusal, TransformError):
            raise forward.refusal
        raise UsageError(f"forward mode is not used for {getattr(fn, '__name__', fn)!r}: "
                         f"{type(forward.refusal).__name__}: {forward.refusal}")
    return forward.text
