"""The functional API: a function (and argnums or primals) -> grad, value_and_grad, vjp, jvp;
source(what they returned) -> its generated text (jacobians.py composes these into jacfwd, jacrev,
hvp and hessian). Thin: the generated code comes from derive.py (the disk cache, else the
pipeline), once per call. A function s2sgrad returns carries the generated function that computes
the same (returned.py), so a transformation of it reads generated code (again.py, at a call with
pytree arguments). Below it: calls.py (what a call runs, recorded by kind of call),
parameters.py (argnums -> parameter names) and forward_code.py (the generated forward mode, and
the tangents a user passes)."""

from __future__ import annotations

import inspect
import types
from typing import Any, Callable, Optional, Sequence, Union

from .again import jvp_again, vjp_again
from .arguments import MASKED, argument_check, masked_refusal
from .boundary import api_boundary
from .calls import Calls, TreeBuilds, forward_mode, tree_entries
from .errors import TransformError, UsageError
from .compiled import require_numba
from .forward_code import ForwardGradient, directional, flat_tangents, jvp_or_transpose
from .parameters import (argnum_names, display_name, made_per_call, param_names, positions_of,
                         wrt_names)
from .partials import curried, primal_call
from .read.capture import SOURCE_ATTR
from .read.live import Deferred, readable, tree_entry_of
from .returned import FORWARD_ATTR, NUMBERS_ATTR, again_with_trees, attach, read_again
from .specialize import (NumberBuilds, array_globals, call_signature, lifted_by_numbers,
                         numbers_passed)
from .transformations import TRANSFORMATIONS, Transformation
from .tree_arguments import split_call, star_position
from . import derive


def _made(text: Any, fwd: Optional[Callable], bwd: Optional[Callable]) -> tuple:
    """``(fwd, bwd)``, the sweeps made for arrays; their refusal (``text``) raised where there are none."""
    if fwd is None:
        raise text
    return fwd, bwd


# grad or value_and_grad made again for a function (``s2sgrad.grad(f)(x)`` in a loop) takes
# what was made for it before (by argnums, has_aux, compiled), its records of kinds of call and
# code made for shapes included (each run reads the user's values then: derive.fresh), while
# it still fits (derive.Kept: the binding of its generated module for arrays).
_SWEEPS = derive.Kept()


def _sweep(fun: Callable, argnums: Union[int, Sequence[int]], has_aux: bool,
           compiled: bool = False) -> tuple:
    """_made_sweep's result, the one made before for ``fun`` and these options where it is kept."""
    if inspect.ismethod(fun):  # a new object at each attribute read: made each time
        return _made_sweep(fun, argnums, has_aux, compiled)
    if compiled:
        require_numba(display_name(fun))
    try:
        key = ("sweep", argnums if isinstance(argnums, int) else tuple(argnums), has_aux, compiled)
    except TypeError:  # argnums of another form: refused by _made_sweep, located
        return _made_sweep(fun, argnums, has_aux, compiled)
    found = _SWEEPS.get(fun, key)
    if found is not None:
        return found
    made = _made_sweep(fun, argnums, has_aux, compiled)
    if isinstance(made[0], str) and _generic_text(fun, argnums, has_aux) == made[0]:
        _SWEEPS.keep(fun, key, made, made[5].generic()[0])
    return made


def _generic_text(fun: Callable, argnums: Union[int, Sequence[int]], has_aux: bool) -> Optional[str]:
    """The text of ``fun``'s sweeps for arrays as the code records give it now (the disk cache's
    key: its source and the values its names hold), or None for code made per call."""
    fun = read_again(fun)[0]
    wrt = wrt_names(fun, argnums)
    if made_per_call(fun, wrt) is not None:
        return None
    return derive.code_for(fun, derive.from_function(fun), wrt, has_aux)["text"]


def _made_sweep(fun: Callable, argnums: Union[int, Sequence[int]], has_aux: bool,
                compiled: bool = False) -> tuple:
    """``(text, run, forward, entry, tree_entry, specialized)``: ``run(*args, **kwargs)`` -> the value and the
    gradients (one, or a tuple, as argnums says), by forward mode (``forward``) for one float
    argument; ``entry(value)``: the generated function computing what grad (value False) or
    value_and_grad returns (None for a bound method); ``tree_entry(value)``: the same for pytree
    arguments, per structure (read/live.py's TREE_ENTRY_ATTR); ``specialized``: the code made for
    calls passing numbers (specialize.NumberBuilds), which ``run`` uses for them. ``compiled``:
    forward mode for floats (any count of them) compiled by numba (compiled.py)."""
    if inspect.ismethod(fun) and isinstance(fun.__func__, types.FunctionType):
        return _method_sweep(fun, argnums, has_aux, compiled)
    name = display_name(fun)
    if compiled:
        require_numba(name)
    fun, made_by_s2sgrad = read_again(fun)
    wrt = wrt_names(fun, argnums)
    text, fwd, bwd, entry = made_per_call(fun, wrt), None, None, None
    try:
        if text is None:
            text, (fwd, bwd, entry) = derive.build(fun, wrt, has_aux)
    except TransformError as refusal:  # raised at a call with arrays there: pytrees may be read
        if refusal.member_of is None and not (refusal.arrays_only and lifted_by_numbers(fun, wrt, has_aux)):
            raise
        text = refusal  # (``model.W`` of a dataclass; an array's update where numbers may run)
    single = isinstance(argnums, int)
    entry, positions = _entries(fun, wrt, has_aux, single, entry), positions_of(argnums)
    forward = forward_mode(fun, wrt, has_aux, compiled)
    params = param_names(fun)
    check_arguments = argument_check(name, params, positions, wrt)
    trees, specialized = TreeBuilds(fun, wrt, has_aux), NumberBuilds(fun, wrt, has_aux, lambda: _made(text, fwd, bwd), compiled)
    calls = Calls(forward, specialized, positions, (single, has_aux, star_position(fun) is None), name)
    specialized.trees = (trees, positions)

    def run(*args: Any, **kwargs: Any) -> tuple:
        result = None if kwargs else calls.known(args) or trees.known(args, positions, single, name)
        if result is not None:
            return result
        split = split_call(fun, name, params, positions, args, kwargs)
        if split is not None:  # pytrees: code generated for their structures
            if made_by_s2sgrad:
                raise again_with_trees(name)
            return trees.call(split, args, positions, single, name)
        check_arguments(args, kwargs)
        numbers = numbers_passed(params, args, kwargs)  # code made knowing they are 0-d
        if fwd is None and not numbers:  # the code for arrays there was refused
            raise text
        return calls.run(numbers, args, kwargs)

    # the calls known at a glance, which the API's boundary runs in its own frame (boundary.py)
    run.known, run.known_gradients = calls.known, calls.known_gradients  # type: ignore[attr-defined]
    tree_entry = tree_entries(fun, name, positions, wrt, (has_aux, single, made_by_s2sgrad), trees)
    return text, run, forward, entry, tree_entry, specialized


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


def _method_sweep(method: Any, argnums: Union[int, Sequence[int]], has_aux: bool,
                  compiled: bool = False) -> tuple:
    """_sweep of a bound method: its function, differentiated with respect to the explicit
    arguments ``argnums`` names (the object's attributes are constants), called with the object."""
    argnum_names(method, argnums)  # checked against the explicit parameters

    def shift(p: Any) -> Any:
        return p + 1 if isinstance(p, int) and p >= 0 else p

    inner = shift(argnums) if isinstance(argnums, int) else tuple(shift(p) for p in argnums)
    text, run, forward, _, _, specialized = _sweep(method.__func__, inner, has_aux, compiled)
    owner = method.__self__

    def run_method(*args: Any, **kwargs: Any) -> tuple:
        return run(owner, *args, **kwargs)

    run_method.known = run_method.known_gradients = None  # type: ignore[attr-defined]
    return text, run_method, forward, lambda value: None, lambda value: None, specialized


@api_boundary
@curried
def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *,
                   has_aux: bool = False, compiled: bool = False) -> Callable:
    """``fun``'s value and gradient in one call (JAX conventions for argnums and has_aux);
    ``compiled``: where the differentiated arguments are floats, the forward-mode code compiled
    by numba (the extra ``s2sgrad[numba]``: compiled.py)."""
    text, run, forward, entry, tree_entry, specialized = _sweep(fun, argnums, has_aux, compiled)
    return attach(api_boundary(run, run.known), fun, text, forward, "s2sgrad.value_and_grad", entry(True),
                   tree_entry(True), specialized)


@api_boundary
@curried
def grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *, has_aux: bool = False,
         compiled: bool = False) -> Callable:
    """The gradient of scalar-valued ``fun``: one array for an int argnums, a tuple for a tuple
    (``compiled``: as value_and_grad has it)."""
    text, run, forward, entry, tree_entry, specialized = _sweep(fun, argnums, has_aux, compiled)

    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, result = run(*args, **kwargs)
        return (result, value[1]) if has_aux else result

    return attach(api_boundary(grad_fun, run.known_gradients), fun, text, forward, "s2sgrad.grad", entry(False),
                   tree_entry(False), specialized)


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
        split = split_call(again.fun, display_name(original), param_names(again.fun), positions,
                           args, {})
        if split is not None:
            return vjp_again(original, split, args)
    wrt_names(fun, ())  # refuses what s2sgrad cannot read, at the user's call
    params = param_names(fun)
    wrt = argnum_names(fun, positions)
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

    attach(pullback, fun, text, made="the pullback of s2sgrad.vjp")
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
        split = split_call(again.fun, display_name(original), param_names(again.fun), positions,
                           args, {})
        if split is not None:
            return jvp_again(original, split, args, tangents)
    split = split_call(fun, getattr(fun, "__name__", "the function"), param_names(fun),
                       positions, args, {}, complex_numbers=True)
    if split is not None:
        wrt = wrt_names(fun, positions)
        tangents = flat_tangents(split, tangents, "jvp")
        _, fn, names_dot = jvp_or_transpose(fun, wrt, split.trees)
        derive.fresh(fn)
        return fn(*split.args, **dict(zip(names_dot, tangents)))
    tangents, wrt = directional(fun, args, positions, tangents, "jvp")
    _, fn, names_dot = jvp_or_transpose(fun, wrt)
    derive.fresh(fn)  # (the module may be one made before: the user's values now)
    return fn(*args, **dict(zip(names_dot, tangents)))


TRANSFORMATIONS.add(Transformation("vjp", vjp, curried=False))
TRANSFORMATIONS.add(Transformation("jvp", jvp, curried=False))


@api_boundary
def source(fn: Callable, mode: str = "rev", numbers: Sequence[str] = (),
           like: Optional[Sequence[Any]] = None) -> str:
    """The generated source behind a function s2sgrad returned. ``mode="fwd"`` gives, for a
    function of grad or value_and_grad with one differentiated argument (with ``compiled=True``:
    any number), the forward-mode code it runs when they are floats. ``numbers``: for grad or value_and_grad, the code a
    call runs that passes numbers (Python's or numpy's scalars) to these parameters, and arrays
    or other values to the rest (specialize.py). ``like``: for grad or value_and_grad, the sweeps
    that calls with positional arguments of these types and shapes run from their second call
    on (made for the numbers and the arrays' shapes there: specialize.shape_signature)."""
    if like is not None:
        return _specialized_source(fn, mode, (), tuple(like))
    if numbers:
        return _specialized_source(fn, mode, tuple(numbers))
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
                         "value_and_grad returned for one differentiated argument (compiled=True: any number)")
    return _forward_text(forward, fn)


def _forward_text(forward: ForwardGradient, fn: Any = None) -> str:
    """The text of the forward mode ``forward``, or its refusal (or failure) raised."""
    if forward.get() is None:
        if isinstance(forward.refusal, TransformError):
            raise forward.refusal
        raise UsageError(f"forward mode is not used for {getattr(fn or forward.fun, '__name__', fn)!r}: "
                         f"{type(forward.refusal).__name__}: {forward.refusal}")
    return forward.text


def _specialized_source(fn: Callable, mode: str, numbers: tuple, like: Optional[tuple] = None) -> str:
    """source(fn, mode, numbers) for numbers given, or source(fn, like=args)."""
    builds = getattr(fn, NUMBERS_ATTR, None)
    if builds is None:
        raise UsageError(f"source(fn, {'like' if like is not None else 'numbers'}=...): "
                         f"{getattr(fn, '__name__', fn)!r} is not what "
                         "s2sgrad.grad or value_and_grad returned, which make code per set of "
                         "parameters given numbers and per signature of arrays' shapes")
    params = param_names(builds.fun)
    if like is not None:
        if mode != "rev":
            raise UsageError(f"source(fn, mode={mode!r}, like=...): the code specialized for "
                             "arguments' shapes is reverse mode's (mode='rev')")
        if builds.trees is not None:  # pytrees there: the code made for their structures
            trees, positions = builds.trees
            split = split_call(builds.fun, display_name(fn), params, positions, like, {})
            if split is not None:
                return trees.specialized_text(split)
        numbers = numbers_passed(params, like, {})
        reads = array_globals(builds.sweeps(numbers)[0], params)
        return builds.text(numbers, call_signature(params, like, reads))
    unknown = [name for name in numbers if name not in params]
    if unknown or mode not in ("rev", "fwd"):
        raise UsageError(f"source(fn, mode={mode!r}, numbers={numbers!r}): mode is 'rev' or 'fwd', "
                         f"and numbers names parameters of {builds.fun.__name__} "
                         f"({', '.join(params)})")
    ordered = tuple(p for p in params if p in numbers)
    return builds.text(ordered) if mode == "rev" else _forward_text(builds.forward(ordered))
