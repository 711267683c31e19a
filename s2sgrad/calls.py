"""What a differentiated function's calls run, recorded by kind of call: the generated sweeps
run on arguments (``run_sweeps``), forward mode for float arguments (``forward_mode``), the code
made for calls passing arrays and numbers by their types and shapes (``Calls``) and for calls
passing pytrees by their structures and leaves' shapes (``TreeBuilds``). api.py and decorator.py
build their callables from these; the code itself comes from derive.py and specialize.py."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import derive, runtime
from .arguments import PLAIN, unit_seed
from .errors import GradientError, TransformError
from .forward_code import ForwardGradient
from .parameters import param_names
from .read.live import binding_of
from .specialize import NumberBuilds, array_globals, call_signature, numbers_passed, read_value
from .tree_arguments import Split, split_call
from .trees import LEAF, TreeDef, from_structure_key, structure_key


def scalar_loss(value: Any, has_aux: bool, name: str) -> Any:
    """``value`` as the scalar loss (the first of ``(value, aux)`` with has_aux), checked real."""
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
        scalar_loss(value, has_aux, name)
        seed = unit_seed(value, has_aux)
    else:
        seed = 1.0  # unit_seed of a real scalar
    handover = [residuals]
    del residuals
    return value, bwd(handover.pop(), seed)


_FLOATS = frozenset({float, np.float64})  # one number: forward mode needs no tape
# Forward mode for up to this many float arguments as Python (more than one: where every tangent
# holds one number, ForwardGradient): each more costs a tangent line per statement, where reverse
# mode's sweep costs the same for any count and keeps a tape. Two floats (Kepler): forward mode
# and the sweeps take the same time (18.8 and 19.3 us), forward mode with no tape; four
# (a pendulum): forward mode 1.7x the sweeps. Compiled (``compiled=True``), a tangent line costs
# nanoseconds: every count runs forward mode, side by side.
FORWARD_MOST = 2
_SCALARS = frozenset({float, np.float64, np.float32})  # real scalar losses at a glance
# Calls passing only these (by position): what a call of these types ran, the next one of the
# same types runs directly (Calls).
_PLAIN_TYPES = PLAIN | {int, bool, np.int64, np.int32}
_ndarray = np.ndarray
_RECORDS_MOST = 1024  # Calls keeps what this many kinds of call ran (then starts again)
_NO_KEYWORDS: dict = {}  # a recorded call passes none (read, never written)


def _forward_grad(forward, args: tuple, kwargs: dict, needed: int, positions: tuple, single: bool,
                  name: str) -> Optional[tuple]:
    """``(value, gradients)`` by forward mode where every differentiated argument is a float
    (passed by position, with the ``needed`` positional arguments), or None: not such a call, or
    forward mode refuses."""
    if forward is None or kwargs or len(args) < needed or \
            any(type(args[p]) not in _FLOATS for p in positions) or forward.get() is None:
        return None
    result = forward.run(args)
    return None if result is None else _float_gradients(*result, args, positions, single, name)


def _float_gradients(value: Any, tangents: tuple, args: tuple, positions: tuple, single: bool,
                     name: str) -> tuple:
    """``(value, gradients)`` from forward mode's value (checked a real scalar) and its
    ``tangents`` along 1.0 for the arguments at ``positions``, each as its argument's type."""
    if type(value) not in _SCALARS:
        scalar_loss(value, False, name)
    grads = tuple([t if type(t) is float and type(args[p]) is float else runtime.like(t, args[p])
                   for t, p in zip(tangents, positions)])
    return value, (grads[0] if single else grads)


def forward_mode(fun: Callable, wrt: tuple, has_aux: bool = False,
                 compiled: bool = False) -> Optional[ForwardGradient]:
    """The forward mode grad runs for calls whose differentiated arguments ``wrt`` are floats:
    for up to FORWARD_MOST of them (more than one where each tangent holds one number), any
    number compiled (a tangent line costs nanoseconds there); None with ``has_aux``."""
    most = len(wrt) if compiled else FORWARD_MOST
    return ForwardGradient(fun, wrt, compiled=compiled) if 0 < len(wrt) <= most and not has_aux else None


def _call_key(args: tuple) -> tuple:
    """What Calls records a call by: its arguments' types, and the shapes of its arrays (an
    array's key is its shape, a tuple; any other argument's its type)."""
    if len(args) == 1:  # the common call, without a comprehension's frame
        arg = args[0]
        return (arg.shape,) if type(arg) is _ndarray else (type(arg),)
    key = []  # (a loop: no comprehension's frame before Python 3.12)
    for arg in args:
        key.append(arg.shape if type(arg) is _ndarray else type(arg))
    return tuple(key)


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

    def known_gradients(self, args: tuple) -> Any:
        """What grad returns where ``known`` has the call (the gradients, and the aux with
        has_aux), else None."""
        result = self.known(args)
        if result is None:
            return None
        return (result[1], result[0][1]) if self.has_aux else result[1]

    def known(self, args: tuple) -> Optional[tuple]:
        """The value and gradients where a call of these argument types (and arrays' shapes) ran
        before, or None: by the sweeps made for the arrays' shape signature (specialize.py)."""
        key = (_call_key(args), _globals_key(self.globals)) if self.globals else _call_key(args)
        plan = self.by_types.get(key)
        if plan is None:
            return None
        if type(plan) is _Ready:  # the sweeps, made: run at once (the common call)
            fwd, bwd, binding = plan
            if binding is not None and (binding.deps or not binding.check()):
                binding.ensure()  # the binding: the user's values now (read by check() itself)
            if self.has_aux:
                value, grads = run_sweeps(fwd, bwd, args, _NO_KEYWORDS, self.name, True)
            else:  # run_sweeps' steps, written out: no frame more on the path of every call
                value, residuals = fwd(*args)
                seed = 1.0 if type(value) in _SCALARS else \
                    unit_seed(scalar_loss(value, False, self.name), False)
                handover = [residuals]
                del residuals
                grads = bwd(handover.pop(), seed)
            return value, (grads[0] if self.single else grads)
        if type(plan) is _ReadyForward:  # forward mode, made: run at once
            forward, fn, binding, ones, _, plain = plan
            try:
                if binding is not None and (binding.deps or not binding.check()):
                    binding.ensure()  # (made again where a global's type changed: it may refuse)
                value, tangents = fn(*args, *ones)
            except Exception as exc:  # noqa: BLE001 - reverse mode runs the user's code again
                forward.failed(exc)
            else:
                if plain and type(value) is float:  # floats in, floats out: the common call
                    if len(ones) == 1:
                        if type(tangents) is float:
                            return value, (tangents if self.single else (tangents,))
                    elif type(tangents[0]) is float and type(tangents[1]) is float:
                        return value, tangents
                return _float_gradients(value, (tangents,) if len(ones) == 1 else tangents, args,
                                        self.positions, self.single, self.name)
            if plan[0].fn is None:  # given up (ForwardGradient.failed): the sweeps from now on
                self.by_types[key] = plan[4]
            numbers, _, shapes = plan[4]
            return self.finish(self.specialized.sweeps(numbers, shapes), args, {})
        numbers, forward, shapes = plan
        if forward is not None:
            result = _forward_grad(forward, args, {}, self.needed, self.positions, self.single, self.name)
            if result is not None:
                if forward.python is None and forward.positional == len(args):
                    self.by_types[key] = _ReadyForward(forward, binding_of(forward.fn),
                                                       (1.0,) * len(forward.tangents), plan,
                                                       self._plain(args, len(forward.tangents)))
                return result
        made = self.specialized.sweeps(numbers, shapes)
        if forward is None:  # every later call of this key runs these sweeps
            self.by_types[key] = _Ready(made[0], made[1], binding_of(made[0]))
        return self.finish(made, args, {})

    def _plain(self, args: tuple, tangents: int) -> bool:
        """Whether a call passing ``args`` gives its gradients as forward mode's ``tangents``
        (one or two) as they are where those are floats: each differentiated argument a Python
        float, one tangent each."""
        return tangents == len(self.positions) <= 2 and \
            all(type(args[p]) is float for p in self.positions)

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


class _ReadyForward(tuple):
    """``(forward, fn, binding, ones, plan, plain)``: the generated forward mode Calls runs at
    once for a recorded kind of call (``fn``, the Python function of the ForwardGradient
    ``forward``, called with the arguments and ``ones``, a 1.0 per tangent, after them; binding:
    its generated module's, kept current before each run), the plan it came from (run where it
    fails), and whether the differentiated arguments are Python floats (their gradients, where
    the code gives floats, are its tangents as they are: _float_gradients' reading at a glance)."""

    __slots__ = ()

    def __new__(cls, forward: ForwardGradient, binding: Any, ones: tuple, plan: tuple,
                plain: bool) -> "_ReadyForward":
        return tuple.__new__(cls, (forward, forward.fn, binding, ones, plan, plain))


class _Ready(tuple):
    """``(fwd, bwd, binding)``: sweeps Calls runs at once for a recorded kind of call (binding:
    their generated module's, kept current before each run; None for other functions)."""

    __slots__ = ()

    def __new__(cls, fwd: Callable, bwd: Callable, binding: Any) -> "_Ready":
        return tuple.__new__(cls, (fwd, bwd, binding))


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
