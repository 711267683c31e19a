"""The functional API: a function (and argnums or primals) -> grad, value_and_grad, vjp, jvp;
source(what they returned) -> its generated text (jacobians.py composes these into jacfwd, jacrev,
hvp and hessian). Thin: the generated code comes from derive.py (the disk cache, else the
pipeline), once per call. A function s2sgrad returns carries the generated function that computes
the same (returned.py), so a transformation of it reads generated code (again.py, at a call with
pytree arguments). Below it: parameters.py (argnums -> parameter names) and forward_code.py (the
generated forward mode, and the tangents a user passes)."""

from __future__ import annotations

import inspect
import types
from collections import OrderedDict
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import runtime
from .again import jvp_again, vjp_again
from .arguments import MASKED, PLAIN, argument_check, masked_refusal, unit_seed
from .boundary import api_boundary
from .errors import GradientError, TransformError, UsageError
from .compiled import require_numba
from .forward_code import ForwardGradient, directional, flat_tangents, jvp_or_transpose
from .parameters import (argnum_names, display_name, made_per_call, param_names, positions_of,
                         wrt_names)
from .partials import curried, primal_call
from .read.capture import SOURCE_ATTR
from .read.live import Deferred, binding_of, readable, tree_entry_of
from .returned import FORWARD_ATTR, NUMBERS_ATTR, again_with_trees, attach, read_again
from .specialize import (NumberBuilds, array_globals, call_signature, lifted_by_numbers, numbers_passed,
                         read_value)
from .transformations import TRANSFORMATIONS, Transformation
from .tree_arguments import Split, split_call, star_position
from .trees import LEAF, TreeDef, from_structure_key, structure_key
from . import derive


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
        seed = unit_seed(value, has_aux)
    else:
        seed = 1.0  # unit_seed of a real scalar
    handover = [residuals]
    del residuals
    return value, bwd(handover.pop(), seed)


_FLOATS = frozenset({float, np.float64})  # one number: forward mode needs no tape
# Forward mode for up to this many float arguments as Python: each more costs a tangent line per
# statement, where reverse mode's sweep costs the same for any count (Kepler's two floats: the
# generated forward_grad 2.0x the hand-written code, the sweeps 1.4x). Compiled (``compiled=True``),
# a tangent line costs nanoseconds: every count runs forward mode, side by side.
FORWARD_MOST = 1
_SCALARS = frozenset({float, np.float64, np.float32})  # real scalar losses at a glance
# Calls passing only these (by position): what a call of these types ran, the next one of the
# same types runs directly (api.Calls).
_PLAIN_TYPES = PLAIN | {int, bool, np.int64, np.int32}
_ndarray = np.ndarray
_RECORDS_MOST = 1024  # Calls keeps what this many kinds of call ran (then starts again)


def _forward_grad(forward, args: tuple, kwargs: dict, needed: int, positions: tuple, single: bool,
                  name: str) -> Optional[tuple]:
    """``(value, gradients)`` by forward mode where every differentiated argument is a float
    (passed by position, with the ``needed`` positional arguments), or None: not such a call, or
    forward mode refuses."""
    if forward is None or kwargs or len(args) < needed or \
            any(type(args[p]) not in _FLOATS for p in positions) or forward.get() is None:
        return None
    result = forward.run(args)
    if result is None:
        return None
    value, tangents = result
    if type(value) not in _SCALARS:
        _scalar_loss(value, False, name)
    grads = tuple(runtime.like(t, args[p]) for t, p in zip(tangents, positions))
    return value, (grads[0] if single else grads)


def forward_mode(fun: Callable, wrt: tuple, has_aux: bool = False,
                 compiled: bool = False) -> Optional[ForwardGradient]:
    """The forward mode grad runs for calls whose differentiated arguments ``wrt`` are floats:
    for up to FORWARD_MOST of them, any number compiled (a tangent line costs nanoseconds
    there); None with ``has_aux``."""
    most = len(wrt) if compiled else FORWARD_MOST
    return ForwardGradient(fun, wrt, compiled=compiled) if 0 < len(wrt) <= most and not has_aux else None


def _call_key(args: tuple) -> tuple:
    """What Calls records a call by: its arguments' types, and the shapes of its arrays."""
    return tuple([(_ndarray, arg.shape) if type(arg) is _ndarray else type(arg) for arg in args])


def _globals_key(reads: tuple) -> tuple:
    """_call_key of the values ``reads`` (specialize.array_globals) names now."""
    return _call_key(tuple([read_value(holder, name) for holder, name in reads]))


class Calls:
    """What grad's calls run: forward mode where the differentiated arguments are floats (the
    ForwardGradient made for the parameters a call passes numbers to; ``forward``: the one made
    for none), else the sweeps made for those parameters (``specialized``). A call passing only
    arrays and numbers, by position, records its numbers and its arrays' shape signature by its
    arguments' types and arrays' shapes: the next call of those runs directly, by the sweeps made
    for that signature (no pytree can be there and argument_check passes: both are decided by
    the types, as the numbers are)."""

    def __init__(self, forward: Optional[ForwardGradient], specialized: NumberBuilds,
                 positions: tuple, flags: tuple, name: str) -> None:
        self.forward, self.specialized, self.positions, self.name = forward, specialized, positions, name
        self.single, self.has_aux, self.recorded = flags  # recorded: no ``*args`` parameter
        self.needed = max((max(p + 1, -p) for p in positions), default=0)  # positional arguments read
        self.params = param_names(specialized.fun)  # the positional arguments' parameters
        self.by_types: dict = {}
        # the global arrays the sweeps read (specialize.array_globals), found at the first call
        # that runs the sweeps: their shapes join the records' keys and the shape signatures
        self.globals: Optional[tuple] = None

    def key(self, args: tuple) -> tuple:
        """What a call is recorded by: its arguments' types and arrays' shapes, and those of the
        global arrays the sweeps read."""
        return (_call_key(args), _globals_key(self.globals)) if self.globals else _call_key(args)

    def known(self, args: tuple) -> Optional[tuple]:
        """The value and gradients where a call of these argument types (and arrays' shapes) ran
        before, or None: by the sweeps made for the arrays' shape signature (specialize.py)."""
        key = self.key(args)
        plan = self.by_types.get(key)
        if plan is None:
            return None
        if type(plan) is _Ready:  # the sweeps, made: run at once (the common call)
            if plan[2] is not None:
                plan[2].ensure()  # the binding: the user's values now
            value, grads = run_sweeps(plan[0], plan[1], args, {}, self.name, self.has_aux)
            return value, (grads[0] if self.single else grads)
        numbers, forward, shapes = plan
        if forward is not None:
            result = _forward_grad(forward, args, {}, self.needed, self.positions, self.single, self.name)
            if result is not None:
                return result
        made = self.specialized.sweeps(numbers, shapes)
        if forward is None:  # every later call of this key runs these sweeps
            self.by_types[key] = _Ready(made[0], made[1], binding_of(made[0]))
        return self.finish(made, args, {})

    def run(self, numbers: tuple, args: tuple, kwargs: dict) -> tuple:
        """The value and gradients of a call passing numbers to the parameters ``numbers``."""
        chosen = self.specialized.forward(numbers) if self.forward is not None and numbers else self.forward
        result = _forward_grad(chosen, args, kwargs, self.needed, self.positions, self.single, self.name)
        ran = chosen if result is not None else None
        recorded = self.recorded and not kwargs and all(type(arg) in _PLAIN_TYPES for arg in args)
        if recorded and result is None and self.globals is None:
            self.globals = array_globals(self.specialized.sweeps(numbers)[0], self.params)
        signature = call_signature(self.params, args, self.globals or ()) if recorded else ()
        if result is None:
            # the code made for these shapes where it was made before (arrays of other lengths,
            # the same signature), else the code for any shape
            made = self.specialized.made_for(numbers, signature)
            result = self.sweeps(numbers, args, kwargs, signature if made else ())
        if recorded:
            # The next call of these types and shapes runs the code made for their shapes: made
            # then (a function called once pays for one transform).
            if len(self.by_types) >= _RECORDS_MOST:
                self.by_types.clear()
            self.by_types[self.key(args)] = (numbers, ran, signature)
        return result

    def sweeps(self, numbers: tuple, args: tuple, kwargs: dict, shapes: tuple = ()) -> tuple:
        return self.finish(self.specialized.sweeps(numbers, shapes), args, kwargs)

    def finish(self, made: tuple, args: tuple, kwargs: dict) -> tuple:
        """The value and gradients by the sweeps ``made``."""
        value, grads = run_sweeps(*made, args, kwargs, self.name, self.has_aux)
        return value, (grads[0] if self.single else grads)


class _Ready(tuple):
    """``(fwd, bwd, binding)``: sweeps Calls runs at once for a recorded kind of call (binding:
    their generated module's, kept current before each run; None for other functions)."""

    __slots__ = ()

    def __new__(cls, fwd: Callable, bwd: Callable, binding: Any) -> "_Ready":
        return tuple.__new__(cls, (fwd, bwd, binding))


def _made(text: Any, fwd: Optional[Callable], bwd: Optional[Callable]) -> tuple:
    """``(fwd, bwd)``, the sweeps made for arrays; their refusal (``text``) raised where there are none."""
    if fwd is None:
        raise text
    return fwd, bwd


# (id of fun, argnums, has_aux, compiled) -> (fun, its code object, _sweep's result): grad or
# value_and_grad made again for a function (``s2sgrad.grad(f)(x)`` in a loop) takes what was
# made for it before, its records of kinds of call and code made for shapes included (each run
# reads the user's values then: derive.fresh). An entry holds ``fun``, so its id is not reused
# while the entry lives; at most SWEEPS_MOST are kept.
_SWEEPS: OrderedDict = OrderedDict()
SWEEPS_MOST = 256


def _sweep(fun: Callable, argnums: Union[int, Sequence[int]], has_aux: bool,
           compiled: bool = False) -> tuple:
    """_made_sweep's result, the one made before for ``fun`` (and its code object) and these
    options where it is kept."""
    if inspect.ismethod(fun):  # a new object at each attribute read: made each time
        return _made_sweep(fun, argnums, has_aux, compiled)
    try:
        key = (id(fun), argnums if isinstance(argnums, int) else tuple(argnums), has_aux, compiled)
        hash(key)
    except TypeError:
        return _made_sweep(fun, argnums, has_aux, compiled)
    if compiled:
        require_numba(display_name(fun))
    code = getattr(fun, "__code__", None)
    found = _SWEEPS.get(key)
    if found is not None and found[0] is fun and found[1] is code and \
            found[2][0] == _generic_text(fun, argnums, has_aux):  # (a refusal raised as before)
        _SWEEPS.move_to_end(key)
        return found[2]
    made = _made_sweep(fun, argnums, has_aux, compiled)
    if isinstance(made[0], str) and _generic_text(fun, argnums, has_aux) == made[0]:
        _SWEEPS[key] = (fun, code, made)
        if len(_SWEEPS) > SWEEPS_MOST:
            _SWEEPS.popitem(last=False)
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

    tree_entry = tree_entries(fun, name, positions, wrt, (has_aux, single, made_by_s2sgrad), trees)
    return text, run, forward, entry, tree_entry, specialized


def tree_entries(fun: Callable, name: str, positions: tuple, wrt: tuple, flags: tuple,
                  trees: "TreeBuilds") -> Callable:
    """``tree_entry(value)`` for _sweep: per call with pytree arguments, ``(split, the generated
    function computing what grad (value False) or value_and_grad returns from the leaves, the
    structure of its flat results)`` (read/live.py's TREE_ENTRY_ATTR); None with has_aux or for
    a function s2sgrad returned (``flags``: has_aux, single, made by s2sgrad)."""
    params, (has_aux, single, again_made) = param_names(fun), flags
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


class TreeBuilds:
    """The generated sweeps of ``fun`` for each structure of its pytree arguments, made on first
    use of that structure (pipeline.Options.trees; the disk cache keys on it too). In reverse
    mode, a structure's second call whose leaves' shape signature (and numbers) a call had before
    runs the sweeps made for them too (specialize.py, as Calls does for arrays): each layer of a
    list of layers then runs code made for its shapes. Such a call of lists, tuples and dicts of
    arrays and numbers is recorded by its structure and its leaves' shapes (trees.structure_key):
    the next call of those runs the sweeps at once (``known``)."""

    def __init__(self, fun: Callable, wrt: tuple, has_aux: bool = False) -> None:
        self.fun = fun
        self.wrt = wrt
        self.has_aux = has_aux
        self.made: dict = {}
        self.seen: set = set()  # (structures, numbers, shapes) of calls run before
        self.flat: dict = {}  # structures -> (their sweeps' parameters, the global arrays read)
        self.records: dict = {}  # call_key -> (fwd, bwd, binding, global reads, their key)
        self.last_specialized: Optional[tuple] = None  # the sweeps _specialized gave last

    def call_key(self, args: tuple, positions: tuple) -> Optional[tuple]:
        """``(key, flat arguments)`` of a call differentiated at ``positions``: per argument,
        its structure_key where differentiated, else its shape or type; None where a
        differentiated argument holds what structure_key does not take."""
        flat: list = []
        keys: list = []
        count = len(args)
        at = [p % count if -count <= p < count else None for p in positions]
        if None in at:
            return None
        for index, value in enumerate(args):
            if index in at:
                key = structure_key(value, flat)
                if key is None:
                    return None
            else:
                flat.append(value)
                key = value.shape if type(value) is _ndarray else type(value)
            keys.append(key)
        return (tuple(keys), tuple(at)), flat

    def known(self, args: tuple, positions: tuple, single: bool, name: str) -> Optional[tuple]:
        """The value and gradients where a call of this key ran the specialized sweeps before,
        or None."""
        if not self.records:
            return None
        found = self.call_key(args, positions)
        record = self.records.get(found[0]) if found is not None else None
        if record is None or (record[3] and _globals_key(record[3]) != record[4]):
            return None
        if record[2] is not None:
            record[2].ensure()  # the binding: the user's values now
        value, grads = run_sweeps(record[0], record[1], found[1], {}, name, self.has_aux)
        keys, at = found[0]
        items = iter(grads)
        grads = tuple(from_structure_key(keys[p], items) for p in at)
        return value, (grads[0] if single else grads)

    def call(self, split: Split, args: tuple, positions: tuple, single: bool, name: str) -> tuple:
        """``(value, gradients)`` of a call with pytree arguments (``split``), by the sweeps
        generated for their structures, the gradients rebuilt in the arguments' structures."""
        fwd, bwd, _ = made = self.get(split)
        value, grads = run_sweeps(fwd, bwd, split.args, dict(split.keywords), name, self.has_aux)
        if made is self.last_specialized and not split.keywords and \
                not any(treedef.kind == "object" for _, treedef in split.trees):
            found = self.call_key(args, positions)
            if found is not None:
                if len(self.records) >= _RECORDS_MOST:
                    self.records.clear()
                reads = self.flat[split.trees][1]
                self.records[found[0]] = (fwd, bwd, binding_of(fwd), reads, _globals_key(reads))
        grads = split.regroup(grads)
        return value, (grads[0] if single else grads)

    def get(self, split: Split, mode: str = "rev") -> tuple:
        """The callables of ``mode`` for ``split``'s structures, current (service.fresh)."""
        key = (split.trees, mode)
        if key not in self.made:
            self.made[key] = derive.build(self.fun, self.wrt, self.has_aux, mode, split.trees)
        callables = self.made[key][1]
        if mode == "rev" and not split.select:
            callables = self._specialized(split, callables)
        derive.fresh(callables[0])
        return callables

    def _signature(self, split: Split, generic: tuple) -> tuple:
        """``(structures, numbers, shapes)``: what the sweeps for ``split``'s flat arguments are
        made for (``generic``: the sweeps made for its structures alone)."""
        found = self.flat.get(split.trees)
        if found is None:  # the leaves' parameters and the others; the global arrays read
            names = param_names(generic[0])
            found = self.flat[split.trees] = (names, array_globals(generic[0], names))
        names, reads = found
        return split.trees, numbers_passed(names, split.args, {}), call_signature(names, split.args, reads)

    def _specialized(self, split: Split, generic: tuple) -> tuple:
        """The sweeps made for the numbers and the shape signature of ``split``'s flat arguments
        where a call had them before, else ``generic``."""
        key = self._signature(split, generic)
        if key not in self.seen:
            if len(self.seen) >= _RECORDS_MOST:
                self.seen.clear()
            self.seen.add(key)
            return generic
        made = self.made.get(key)
        if made is None:
            try:
                made = derive.build(self.fun, self.wrt, self.has_aux, "rev", split.trees,
                                    numbers=key[1], shapes=key[2])
            except TransformError:
                made = (None, generic)
            self.made[key] = made
        self.last_specialized = made[1]
        return made[1]

    def specialized_text(self, split: Split) -> str:
        """The text of the sweeps calls like ``split`` run from their second call on."""
        key = (split.trees, "rev")
        if key not in self.made:
            self.made[key] = derive.build(self.fun, self.wrt, self.has_aux, "rev", split.trees)
        trees, numbers, shapes = self._signature(split, self.made[key][1])
        try:
            return derive.build(self.fun, self.wrt, self.has_aux, "rev", trees, numbers=numbers,
                                shapes=shapes)[0]
        except TransformError:
            return self.made[key][0]

    def text(self, split: Split, mode: str = "rev") -> str:
        self.get(split, mode)
        return self.made[(split.trees, mode)][0]


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

    return text, run_method, forward, lambda value: None, lambda value: None, specialized


@api_boundary
@curried
def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *,
                   has_aux: bool = False, compiled: bool = False) -> Callable:
    """``fun``'s value and gradient in one call (JAX conventions for argnums and has_aux);
    ``compiled``: where the differentiated arguments are floats, the forward-mode code compiled
    by numba (the extra ``s2sgrad[numba]``: compiled.py)."""
    text, run, forward, entry, tree_entry, specialized = _sweep(fun, argnums, has_aux, compiled)
    return attach(api_boundary(run), fun, text, forward, "s2sgrad.value_and_grad", entry(True),
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

    return attach(api_boundary(grad_fun), fun, text, forward, "s2sgrad.grad", entry(False),
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
