"""The pipeline: SourceUnit + Options -> generated module text (and the facts needed to load it).

    capture -> parse -> methods -> trees -> lift -> inner transforms -> comprehensions -> local functions
    -> structure -> fence
    -> custom_gradient | normalize -> aliasing -> hoist -> common -> parameter writes -> analyses
    (code made for shapes: variances written out, einsum products, splices, scans, batched loops,
    then hoist, common and analyses again; then sums of products and the sums over axes)
    -> reverse or forward -> fold, release -> codegen

(docs/architecture.md's table, stage by stage: ``_checked``/``_with_trees``, then ``lower``, then
``_analysed`` and the builders.)

Calls to the user's own functions (callees) are transformed the same way, once each, into
generated functions of the same module. Reverse and forward mode share one path; a ``Mode``
(REVERSE, FORWARD) says what differs: the generated names of a callee's functions and the builder
that makes them. ("Helper" is kept for the runtime helpers generated code calls, ``s2s.*``.)
"""

from __future__ import annotations

import ast
import hashlib
from functools import partial
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional

import libcst as cst

from .version import __version__
from .analyze.activity import analyze, seeded_outputs
from .analyze.dtypes import may_hold_complex
from .analyze.invariance import stabilizers
from .analyze.scalars import known_scalars
from .analyze.shapes import SCALAR, counter_bounds, shape_facts
from .lower.aliasing import check_inplace, check_parameter_writes
from .lower.axis_sums import axis_sums
from .lower.common import merge_common
from .lower.batched_loops import batched_loops
from .lower.einsum_products import einsum_products
from .lower.hoist import hoist_products
from .lower.scans import running_scans
from .lower.sums_of_products import sums_of_products
from .lower.variances import variances
from .lower.splices import spliced_joins
from .differentiate.forward import JvpFunction, forward
from .differentiate.forward_grad import forward_grad
from .differentiate.reverse import CalleeCall, VjpFunction, reverse
from .differentiate.unknown import refuse_user_method
from .errors import TransformError
from .read.names import name_nodes
from .lower.ir import CoreFunction, Prim, Stmt, flatten, operand_vars, prim_operands
from .lower.naming import Namer
from .lower.closures import inline_local_functions
from .lower.comprehensions import rewrite_comprehensions
from .lower.custom import custom_vjp, is_custom_def
from .lower.lift import lift_into
from .lower.methods import inline_methods
from .lower.inner import inner_transforms_into
from .lower.normalize import lower_function
from .lower.star_args import star_as_parameter
from .lower.structure import structure
from .lower.trees import dict_method_call, keys_read, with_tree_parameters
from .read.callees import static_callee
from .read.capture import SourceUnit, from_function, is_source_function
from .read.fence import fence
from .read.live import is_generated, live_names, names_read
from .read.parse import ParsedFunction, find_function
from .rules import DEFAULT_TABLE, RuleTable
from .rules.user import with_user_rules
from .write.codegen import Keyed, Program, body_text, grad_wrapper, header_lines, render
from .write.imports import module_imports


@dataclass(frozen=True)
class Options:
    """What to differentiate: parameter names (``wrt``), whether the output carries aux data, and
    the mode: ``"rev"`` (``<f>_fwd``/``<f>_bwd``/``<f>_grad``), ``"fwd"`` (``<f>_jvp``) or
    ``"fwd_grad"`` (``<f>_forward_grad``: forward mode, one tangent per parameter of ``wrt``)
    or ``"fwd_numbers"`` (the same, refused unless every varied name holds one number);
    ``numbers``: parameters known to hold numbers (Python's or numpy's scalars), which the code
    is specialized for (no shapes recorded or summed back for what only they broadcast);
    ``shapes``: array parameters' shapes (specialize.shape_signature), which reverse mode's code is
    specialized for (no unbroadcasting, no recorded shape, between values of equal known shapes);
    ``trees``: parameters given pytrees, with their structures (each becomes its leaves' parameters,
    and ``wrt`` naming it, those leaves: lower/trees.py)."""

    wrt: tuple
    has_aux: bool = False
    mode: str = "rev"
    trees: tuple = ()  # (parameter, trees.TreeDef): parameters taking pytrees, by structure
    keyed: tuple = ()  # codegen.Keyed: of ``trees``, the dicts known by the keys read (the CLI)
    numbers: tuple = ()  # parameters the code is made for calls passing numbers to (not arrays)
    shapes: tuple = ()  # ((parameter, dims), ...): the arrays' shapes the code is made for (reverse mode)


@dataclass(frozen=True)
class SweepNames:
    """The generated names for one differentiated function: forward, backward and gradient."""

    fwd: str
    bwd: str
    grad: str


@dataclass(frozen=True)
class Generated:
    """A generated module's text, the names of its sweeps, and the live values it needs."""

    text: str
    names: SweepNames
    live_names: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    wrt: tuple = ()  # the parameters of the generated functions differentiated (leaves of trees)

    @property
    def callables(self) -> tuple:
        """The names of the functions a caller runs: the forward and backward sweeps and the
        ``<f>_grad`` wrapper (reverse mode), or the one ``<f>_jvp`` (forward mode)."""
        return tuple(name for name in (self.names.fwd, self.names.bwd, self.names.grad) if name)


@dataclass(frozen=True)
class GeneratedModule:
    """A generated module for several functions (targets): text, SweepNames per target."""

    text: str
    names: tuple
    live_names: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    wrts: tuple = ()  # per target, the parameters of its generated functions differentiated


@dataclass
class _Session:
    """Per-transform bookkeeping for callees (not shared between transforms)."""

    table: RuleTable
    module_namer: Namer
    mode: Mode  # REVERSE or FORWARD
    callees: dict = field(default_factory=dict)  # key -> what a call site needs (CalleeCall, ...)
    functions: list = field(default_factory=list)  # callees' Vjp/JvpFunctions, in discovery order
    in_progress: set = field(default_factory=set)
    lifted: dict = field(default_factory=dict)  # name -> Lifted: custom_gradient defs found in bodies
    digests: list = field(default_factory=list)
    live: dict = field(default_factory=dict)
    units: list = field(default_factory=list)  # (ParsedFunction, globals it reads)
    checked: set = field(default_factory=set)  # callees checked for writes into their parameters
    lowered: dict = field(default_factory=dict)  # callee key -> a called function's CoreFunction


def lower(pf: ParsedFunction, table: RuleTable, lifted: Optional[dict] = None,
          returns: bool = True, numbers: tuple = ()) -> CoreFunction:
    """Lift nested custom_gradient definitions (into ``lifted``, by name), structure (no jumps),
    fence and normalize one parsed function (``returns``: see lower_function; ``numbers``: its
    parameters given numbers, Options.numbers)."""
    lifted = lifted if lifted is not None else {}
    pf = _python(inner_transforms_into(lift_into(inline_methods(pf), lifted), lifted))
    structured = replace(pf, node=structure(pf.node, pf.parsed.written_as))
    core = lower_function(fence(structured), table, returns)
    immutable = known_scalars(core, table, frozenset(numbers), reductions=False) if numbers \
        else frozenset()
    check_inplace(core, table.views, immutable)
    return merge_common(hoist_products(core, table), table)


def _python(pf: ParsedFunction) -> ParsedFunction:
    """``pf`` with its comprehensions written as loops and the calls of its local functions
    inlined (comprehensions first, so a call in one is in a statement; then those the inlined
    bodies hold)."""
    return rewrite_comprehensions(inline_local_functions(rewrite_comprehensions(pf)))


def _resolve_callee(pf: ParsedFunction, prim: Prim) -> Optional[ParsedFunction]:
    """The source of a user function called as ``prim.callee``, when s2sgrad can read it."""
    live = pf.unit.live
    head = prim.callee.split(".")[0]
    if live is not None and head in live:
        value: Any = live[head]
        for part in prim.callee.split(".")[1:]:
            value = getattr(value, part, None)
        if value is None or not is_source_function(value):
            refuse_user_method(prim.callee, value, prim.location)
            return None
        return find_function(from_function(value))
    # Static (the CLI's path, or a live function calling a def further down its own file).
    return static_callee(pf, prim.callee)


def _record(pf: ParsedFunction, session: _Session, names: Any, globals_read: Any) -> None:
    """Note ``pf`` in ``session``: its digest, the live values of the ``names`` it reads, and the
    globals it reads (for the generated module's imports)."""
    code = cst.Module([]).code_for_node(pf.node)
    session.digests.append(hashlib.sha256(code.encode()).hexdigest())
    if pf.unit.live is not None:
        for name in names:
            if name in pf.unit.live:
                session.live.setdefault(name, pf.unit.live[name])
    session.units.append((pf, globals_read))


def _analysed(pf: ParsedFunction, session: _Session, core: Optional[CoreFunction],
              has_aux: bool, numbers: tuple = (), shapes: tuple = ()) -> tuple:
    """``pf`` lowered (unless ``core`` already is) and recorded in ``session``, with what both modes
    know about it: ``(core, seeded outputs, (shape classes, known scalars), stabilizing maxima)``."""
    core = core if core is not None else lower(pf, session.table, session.lifted)
    _check_callees(pf, core, session)
    _record(pf, session, core.globals_read, core.globals_read)
    classes, scalars = shape_facts(core, session.table, frozenset(numbers), dict(shapes))
    while shapes:  # shapes known: variances written out, einsums that are matrix products written as products, joins
        # that rebuild an array as index writes, running products of rows as scans, loops of
        # independent sums batched
        known = {k: v for k, v in classes.items() if isinstance(v, tuple)}
        rewritten = core if may_hold_complex(core, session.table) else variances(core, known, session.table)
        rewritten = einsum_products(rewritten, known)
        rewritten = spliced_joins(rewritten, known, session.table)
        rewritten = running_scans(rewritten, known, session.table, frozenset(scalars))
        numbers_known = {k: () for k, v in classes.items() if v == SCALAR}
        rewritten = batched_loops(rewritten, {**known, **numbers_known}, session.table, frozenset(scalars),
                                  partial(counter_bounds, rewritten, session.table, frozenset(scalars), dict(shapes)))
        if rewritten is core:
            break  # (else the products' shapes may make more einsums' ranks known)
        core = merge_common(hoist_products(rewritten, session.table), session.table)
        classes, scalars = shape_facts(core, session.table, frozenset(numbers), dict(shapes))
    if shapes:  # the whole sums of products and the sums over axes as the runtime's (after the
        # rewrites above, which spell numpy's)
        known = {k: v for k, v in classes.items() if isinstance(v, tuple)}
        summed = axis_sums(sums_of_products(core, known, session.table), session.table, known)
        if summed is not core:
            core = summed
            classes, scalars = shape_facts(core, session.table, frozenset(numbers), dict(shapes))
    outputs = seeded_outputs(core, has_aux)  # (of the rewritten body: its result may be renamed)
    stable = stabilizers(core, session.table, outputs, classes, scalars)
    return core, outputs, (classes, scalars), stable


def _differentiate(pf: ParsedFunction, session: _Session, *, wrt: Optional[tuple], has_aux: bool,
                   top_level: bool, names: tuple, core: Optional[CoreFunction] = None,
                   numbers: tuple = (), shapes: tuple = ()) -> tuple:
    """Reverse mode of one function: ``(core, VjpFunction)`` (``wrt`` None: all parameters;
    ``numbers``: its parameters given numbers, Options.numbers)."""
    core, outputs, facts, stable = _analysed(pf, session, core, has_aux, numbers, shapes)
    wrt = tuple(p.name for p in core.params) if wrt is None else wrt
    activity = analyze(core, wrt, outputs, session.table, stable)
    vjp = reverse(core, activity, session.table, wrt=wrt, has_aux=has_aux, top_level=top_level,
                  callee_lookup=partial(_callee, session, pf), fwd_name=names[0], bwd_name=names[1],
                  kwonly=_kwonly(pf), shapes=facts, final=bool(shapes))
    return core, vjp


def _forward(pf: ParsedFunction, session: _Session, wrt: tuple, name: str,
             core: Optional[CoreFunction] = None, numbers: tuple = (), each: bool = False,
             numbers_only: bool = False) -> JvpFunction:
    """Forward mode of one function (callees it calls are added to ``session.functions``);
    ``each``: one tangent per parameter of ``wrt``, side by side (forward_grad.py; refused
    unless each tangent holds one number, with ``numbers_only``)."""
    if is_custom_def(pf):
        raise pf.error(pf.node, "forward mode (jvp) does not support custom_gradient functions "
                       "(their gradient is a reverse-mode rule)", "use s2sgrad.grad or s2sgrad.vjp")
    core, _, shapes, stable = _analysed(pf, session, core, False, numbers)
    common = dict(name=name, kwonly=_kwonly(pf), constant=stable,
                  callee_lookup=partial(_callee, session, pf), shapes=shapes,
                  on_numbers=_numbers_now(pf, core, session.table, numbers))
    if each:
        return forward_grad(core, session.table, wrt=wrt, numbers_only=numbers_only, **common)
    return forward(core, session.table, wrt=wrt, **common)


def _numbers_now(pf: ParsedFunction, core: CoreFunction, table: RuleTable, numbers: tuple) -> frozenset:
    """For code made for calls passing numbers to ``numbers``: the names known to hold numbers,
    the globals ``core`` reads that hold a Python int or float now taken to hold one (what forward
    mode decides by them costs time only: ForwardBuilder.on_numbers), a reduction's result not
    (a float32 array's sum is a float32, which math would compute as a float); empty without
    numbers."""
    if not numbers:
        return frozenset()
    live = pf.unit.live or {}
    now = frozenset(name for name in core.globals_read if type(live.get(name)) in (int, float))
    return known_scalars(core, table, frozenset(numbers), reductions=False, assumed=now)


def _custom(pf: ParsedFunction, session: _Session, names: tuple, *, top_level: bool,
            wrt: Optional[tuple]) -> VjpFunction:
    """A custom_gradient function: the user's forward body and grad_fn, not differentiated."""
    _record(pf, session, _free_names(pf.node), ())
    lifted = session.lifted.get(pf.name)
    outer = lifted.outer_name if lifted is not None and lifted.function is pf else ""
    return custom_vjp(pf, fwd_name=names[0], bwd_name=names[1], top_level=top_level, wrt=wrt,
                      captured_from=outer)


def _free_names(node: cst.FunctionDef) -> list:
    return sorted({n.value for n in name_nodes(node)})


def _positional(pf: ParsedFunction) -> tuple:
    return tuple(p.name.value for p in pf.node.params.params)


def _kwonly(pf: ParsedFunction) -> tuple:
    return tuple(p.name.value for p in pf.node.params.kwonly_params)


def _reverse_callee(target: ParsedFunction, session: _Session, names: tuple,
                    wrt: Optional[tuple]) -> tuple:
    """Reverse mode of a called user function, with respect to all its parameters (``wrt`` is
    None): its VjpFunction and the CalleeCall its call sites need."""
    if is_custom_def(target):
        vjp = _custom(target, session, names, top_level=False, wrt=None)
        params, kwonly = _positional(target), ()
    else:
        core, vjp = _differentiate(target, session, wrt=None, has_aux=False, top_level=False,
                                   names=names, core=_called(target, session))
        params, kwonly = tuple(p.name for p in core.params), _kwonly(target)
    returns = tuple(r != "None" for r in vjp.returns)
    return vjp, CalleeCall(names[0], names[1], params, kwonly, returns)


def _forward_callee(target: ParsedFunction, session: _Session, names: tuple, wrt: tuple) -> tuple:
    """Forward mode of a called user function with respect to ``wrt``: its JvpFunction and
    ``(name, ((param, tangent parameter), ...))`` for its call sites."""
    core = None if is_custom_def(target) else _called(target, session)
    fn = _forward(target, session, wrt, names[0], core=core)
    return fn, (fn.name, tuple(zip(wrt, fn.tangent_params)))


def _check_callees(pf: ParsedFunction, core: CoreFunction, session: _Session) -> None:
    """Refuse a call in ``core`` that passes a local value to a function of the user's that
    changes its parameter in place, whether or not the call carries a derivative (one that does
    not is run as written, and the change is not differentiated). A callee s2sgrad cannot read
    is left to the builders, which refuse it where it carries a derivative."""
    table = session.table
    for stmt in flatten(core.body):
        prim = stmt.prim
        if not prim.callee or prim.op in session.checked or table.get(prim.op) is not None \
                or not table.differentiable(prim.op) or table.is_library(prim.op) \
                or not any(operand_vars(a) for a in prim_operands(prim)):
            continue
        session.checked.add(prim.op)
        lifted = session.lifted.get(prim.callee)
        try:
            target = lifted.function if lifted is not None else _resolve_callee(pf, prim)
            if target is None or is_custom_def(target):
                continue
            callee = _lowered(target, session, returns=False)
        except TransformError:
            continue
        check_parameter_writes(callee, table.views)


def _called(target: ParsedFunction, session: _Session) -> CoreFunction:
    """A called user function lowered, refused where it changes a parameter in place."""
    core = _lowered(target, session)
    check_parameter_writes(core, session.table.views)
    return core


def _lowered(target: ParsedFunction, session: _Session, returns: bool = True) -> CoreFunction:
    """``target`` lowered once per session (_check_callees, then its differentiation, read the
    same core); ``returns`` False also lowers a function that returns nothing, uncached."""
    key = _callee_key(target)
    if key not in session.lowered:
        try:
            session.lowered[key] = lower(target, session.table, session.lifted)
        except TransformError:
            if returns:
                raise
            return lower(target, session.table, session.lifted, returns=False)
    return session.lowered[key]


@dataclass(frozen=True)
class Mode:
    """Reverse or forward mode, as the pipeline tells them apart: the name suffixes of a called
    user function's generated functions, and ``callee`` (ParsedFunction, _Session, those names,
    its ``wrt``) -> (its generated function, what its call sites need)."""

    name: str
    suffixes: tuple
    callee: Callable


REVERSE = Mode("rev", ("_fwd", "_bwd"), _reverse_callee)
FORWARD = Mode("fwd", ("_jvp",), _forward_callee)
FORWARD_GRAD = "fwd_grad"  # Options.mode: forward mode, one tangent per parameter (callees: FORWARD's)
# Options.mode: FORWARD_GRAD's code where every varied name holds one number, else a refusal
FORWARD_NUMBERS = "fwd_numbers"


def _callee_key(pf: ParsedFunction, wrt: Optional[tuple] = None) -> tuple:
    return (pf.unit.path, pf.unit.def_line, pf.name, wrt)


def _callee(session: _Session, caller: ParsedFunction, prim: Prim, stmt: Stmt,
            choose: Optional[Callable] = None) -> Any:
    """The builders' callee lookup: what a call in ``caller`` to a user function needs (None when
    s2sgrad cannot read the callee: a rule or an error decides), its code generated once per
    session (in forward mode, once per ``choose(its parameters)``: those receiving tangents)."""
    lifted = session.lifted.get(prim.callee)
    target = lifted.function if lifted is not None else _resolve_callee(caller, prim)
    if target is None:
        return None
    wrt = None if choose is None else choose(_positional(target) + _kwonly(target))
    key = _callee_key(target, wrt)
    if key in session.in_progress:
        loc = prim.location or stmt.origin.location
        raise TransformError(f"recursive call to {target.name} cannot be differentiated", loc,
                             "rewrite the recursion as a loop")
    if key not in session.callees:
        session.in_progress.add(key)
        names = tuple(session.module_namer.fresh(target.name + s) for s in session.mode.suffixes)
        function, call = session.mode.callee(target, session, names, wrt)
        session.in_progress.discard(key)
        session.callees[key] = call
        session.functions.append(function)
    return session.callees[key]


def _check_wrt(pf: ParsedFunction, options: Options) -> None:
    params = _positional(pf) + _kwonly(pf)
    for name in options.wrt:
        if name not in params:
            raise pf.error(pf.node, f"{pf.name} has no parameter `{name}` to differentiate "
                           f"with respect to", f"its parameters are: {', '.join(params)}")


def _checked(unit: SourceUnit, options: Options) -> tuple:
    """``(ParsedFunction, options)`` for one target of a module, fenced and its ``wrt`` checked;
    its tree parameters replaced by their leaves (``wrt`` naming those)."""
    pf = inline_methods(star_as_parameter(find_function(unit), options.trees), options.trees)
    if not is_custom_def(pf):
        fence(replace(pf, node=structure(_python(lift_into(pf, {})).node)))
    _check_wrt(pf, options)
    return _with_trees(pf, options)


def keyed_trees(unit: SourceUnit, wrt: tuple) -> tuple:
    """``(parameter, TreeDef)`` for each parameter of ``wrt`` that the function ``unit`` names
    reads by literal string keys (``params["W1"]``): its structure as far as the code tells,
    for code made before any call (the CLI; lower/trees.py's ``keys_read``)."""
    pf = find_function(unit)
    found = tuple((name, keys_read(pf, name)) for name in wrt)
    for name, treedef in found:
        call = dict_method_call(pf, name)
        if call is not None and treedef is None:
            raise pf.error(call, f"`{name}` is a dict whose keys this code does not spell out: the "
                           "command line never runs the file, so it cannot know them",
                           f"read it by literal keys (`{name}[\"W1\"]`), or differentiate at run "
                           "time with s2sgrad.grad, which sees the dict a call passes")
    return tuple((name, treedef) for name, treedef in found if treedef is not None)


def _with_trees(pf: ParsedFunction, options: Options) -> tuple:
    """``pf`` and ``options`` with each tree parameter replaced by its leaves (lower/trees.py)."""
    if not options.trees:
        return pf, options
    if is_custom_def(pf):
        raise pf.error(pf.node, "a custom_gradient function takes arrays and numbers, not pytrees",
                       "pass the arrays as separate arguments")
    signature = cst.Module([]).code_for_node(pf.node.params)
    pf, leaves = with_tree_parameters(pf, options.trees)
    wrt = tuple(leaf for name in options.wrt for leaf in leaves.get(name, (name,)))
    keyed = tuple(Keyed(param, treedef.paths(), leaves[param], signature)
                  for param, treedef in options.trees if treedef.kind == "keys")
    return pf, replace(options, wrt=wrt, trees=(), keyed=keyed)


def _open(pfs: tuple, table: RuleTable, mode: Mode, numbers: tuple = ()) -> tuple:
    """``(session, cores)`` for transforming ``pfs`` in ``mode``: the user's registered gradients
    added to ``table``, a namer reserving every name they read, and each one's CoreFunction
    (None for a custom_gradient function; ``numbers``: each one's parameters given numbers)."""
    table, live_rules = with_user_rules(table, pfs)
    lifted: dict = {}
    numbers = numbers or tuple(() for _ in pfs)
    cores = tuple(None if is_custom_def(pf) else lower(pf, table, lifted, numbers=given)
                  for pf, given in zip(pfs, numbers))
    reserved = {pf.name for pf in pfs} | set(lifted)
    for pf, core in zip(pfs, cores):
        reserved.update(_free_names(pf.node) if core is None else core.globals_read)
    session = _Session(table, Namer(reserved), mode)
    session.lifted.update(lifted)
    session.live.update(live_rules)
    return session, cores


def _module_text(session: _Session, source: str, qualnames: tuple, command: str,
                 program: Program) -> str:
    """``program``'s functions and wrappers as a module: its header, the imports they need, them,
    and the generated functions they name as values (copied: see _copy_generated)."""
    body = body_text(program)
    body += _copy_generated(session, body)
    digest = hashlib.sha256("\n".join(session.digests).encode()).hexdigest()
    header = header_lines(source, qualnames, digest, command)
    imports = module_imports(tuple(pf for pf, _ in session.units), header, body)
    return render(replace(program, imports=imports, header=header), body)


def _copy_generated(session: _Session, body: str) -> str:
    """The source of each function of another generated module that this module names as a
    value (a custom function's stated rule, ``s2s.stated(value, c_bwd, ...)``, in a gradient
    transformed inside a differentiated function), taken out of ``session.live``: the module
    defines it instead, so it is loaded, and cached, whole. Transitive; none already defined."""
    named = sorted(n for n, v in session.live.items() if is_generated(v))
    if not named:
        return ""
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    defined = {n.name for n in ast.parse(body).body if isinstance(n, defs)}
    copied: list = []
    todo = [n for n in named if n not in defined]
    while todo:
        name = todo.pop(0)
        value = session.live.pop(name, None)
        if value is None or name in defined:
            continue
        defined.add(name)
        node = find_function(from_function(value)).node
        copied.append("\n\n" + cst.Module([]).code_for_node(node))
        for read in sorted(live_names(value)):
            if read in names_read(value.__code__) and is_generated(live_names(value)[read]):
                session.live.setdefault(read, live_names(value)[read])
                todo.append(read)
    return "".join(copied)


def _serve_callers(pf: ParsedFunction, options: Options, names: SweepNames, session: _Session) -> None:
    """A target differentiated with respect to all its parameters serves its callers too."""
    custom = is_custom_def(pf)
    everything = _positional(pf) if custom else _positional(pf) + _kwonly(pf)
    if options.wrt == everything and not options.has_aux:
        session.callees[_callee_key(pf)] = CalleeCall(names.fwd, names.bwd, everything,
                                                      () if custom else _kwonly(pf),
                                                      tuple(True for _ in everything))


def _reverse_mode(pf: ParsedFunction, options: Options, names: SweepNames, core: Optional[CoreFunction],
           session: _Session) -> tuple:
    """Reverse mode of one target: its VjpFunction and its ``<f>_grad`` wrapper."""
    if core is None:
        top = _custom(pf, session, (names.fwd, names.bwd), top_level=True, wrt=options.wrt)
        reserved = frozenset(_free_names(pf.node))
        return top, grad_wrapper(pf.name, _positional(pf) + _kwonly(pf), reserved, top, names.grad,
                                 _kwonly(pf))
    session.in_progress.add(_callee_key(pf))
    core, top = _differentiate(pf, session, wrt=options.wrt, has_aux=options.has_aux,
                               top_level=True, names=(names.fwd, names.bwd), core=core,
                               numbers=options.numbers, shapes=options.shapes)
    session.in_progress.discard(_callee_key(pf))
    params = tuple(p.name for p in core.params)
    wrapper = grad_wrapper(core.name, params, core.reserved, top, names.grad, _kwonly(pf))
    return top, replace(wrapper, keyed=options.keyed)


def generate_module(targets: tuple, table: RuleTable = DEFAULT_TABLE, *, command: str = "",
                    source: str = "") -> GeneratedModule:
    """Transform several functions (``(SourceUnit, Options)`` pairs) into one generated module
    (reverse mode). Callees they call are generated once and shared."""
    parsed = tuple(_checked(unit, options) for unit, options in targets)
    pfs = tuple(pf for pf, _ in parsed)
    session, cores = _open(pfs, table, REVERSE, tuple(options.numbers for _, options in parsed))
    fresh = session.module_namer.fresh
    names = tuple(SweepNames(*(fresh(pf.name + s) for s in ("_fwd", "_bwd", "_grad"))) for pf in pfs)
    for (pf, options), sweeps in zip(parsed, names):
        _serve_callers(pf, options, sweeps, session)
    tops, wrappers = zip(*(_reverse_mode(pf, options, sweeps, core, session)
                           for (pf, options), sweeps, core in zip(parsed, names, cores)))
    program = Program((*tops, *session.functions), wrappers, (), ())
    text = _module_text(session, source or pfs[0].unit.path, tuple(pf.name for pf in pfs),
                        command or f"s2sgrad.source(s2sgrad.grad({pfs[0].name})"
                        f"{_shapes_text(parsed[0][1].shapes) or _numbers_text(parsed[0][1].numbers) + ')'}",
                        program)
    return GeneratedModule(text, names, dict(session.live), tuple(o.wrt for _, o in parsed))


def generate(unit: SourceUnit, options: Options, table: RuleTable = DEFAULT_TABLE,
             *, command: str = "") -> Generated:
    """Transform the function ``unit`` names into a generated module's text (forward mode's
    ``<f>_jvp`` when ``options.mode`` is ``"fwd"``)."""
    if options.mode in (FORWARD.name, FORWARD_GRAD, FORWARD_NUMBERS):
        return generate_jvp(unit, options.wrt, table, command=command, trees=options.trees,
                            numbers=options.numbers, each=options.mode != FORWARD.name,
                            numbers_only=options.mode == FORWARD_NUMBERS)
    module = generate_module(((unit, options),), table, command=command)
    return Generated(module.text, module.names[0], module.live_names, module.wrts[0])


def generate_jvp(unit: SourceUnit, wrt: tuple, table: RuleTable = DEFAULT_TABLE, *,
                 command: str = "", trees: tuple = (), numbers: tuple = (),
                 each: bool = False, numbers_only: bool = False) -> Generated:
    """Transform the function ``unit`` names into a module holding its forward-mode function
    ``<name>_jvp(<params>, <wrt>_dot...)`` (named in ``names.fwd``; ``each``:
    ``<name>_forward_grad``, one tangent per parameter of ``wrt``), and those of the user
    functions it calls; ``numbers_only``: refused unless each tangent holds one number."""
    return jvp_generated(unit, wrt, table, command=command, trees=trees, numbers=numbers,
                         each=each, numbers_only=numbers_only)[0]


def jvp_generated(unit: SourceUnit, wrt: tuple, table: RuleTable = DEFAULT_TABLE, *,
                  command: str = "", trees: tuple = (), numbers: tuple = (),
                  each: bool = False, numbers_only: bool = False) -> tuple:
    """``(Generated, its JvpFunction)``: generate_jvp's module, and the forward-mode function of
    the function ``unit`` names, for what is made from it (compose.py: its parts)."""
    pf, session, program = jvp_program(unit, wrt, table, trees, numbers, each, numbers_only)
    text = _module_text(session, unit.path, (pf.name,),
                        command or _jvp_command(pf, wrt, numbers, each), program)
    top = program.functions[0]
    return Generated(text, SweepNames(top.name, "", ""), dict(session.live), top.wrt), top


def jvp_program(unit: SourceUnit, wrt: tuple, table: RuleTable = DEFAULT_TABLE,
                trees: tuple = (), numbers: tuple = (), each: bool = False,
                numbers_only: bool = False) -> tuple:
    """``(ParsedFunction, session, Program)``: the forward-mode functions of the function
    ``unit`` names (its ``<name>_jvp`` first), not yet rendered."""
    pf = inline_methods(star_as_parameter(find_function(unit), trees), trees)
    _check_wrt(pf, Options(wrt=wrt))
    pf, options = _with_trees(pf, Options(wrt=wrt, trees=trees))
    wrt = options.wrt
    session, (core,) = _open((pf,), table, FORWARD, (numbers,))
    name = session.module_namer.fresh(pf.name + ("_forward_grad" if each else FORWARD.suffixes[0]))
    top = _forward(pf, session, wrt, name, core, numbers, each, numbers_only)
    return pf, session, Program((top, *session.functions), (), (), ())


def _jvp_command(pf: ParsedFunction, wrt: tuple, numbers: tuple = (), each: bool = False) -> str:
    params = [p.name.value for p in pf.node.params.params]
    if (len(wrt) == 1 or each) and set(wrt) <= set(params) and not pf.unit.path.startswith("<"):
        argnums = ", ".join(str(params.index(name)) for name in wrt)
        argnums = argnums if len(wrt) == 1 else f"({argnums})"
        return (f"s2sgrad.source(s2sgrad.grad({pf.name}, argnums={argnums}), "
                f"mode='fwd'{_numbers_text(numbers)})")
    return f"s2sgrad.jvp({pf.name}, primals, tangents)"


def _shapes_text(shapes: tuple) -> str:
    """The array shapes code is made for, as its regenerate command says them (a comment)."""
    if not shapes:
        return ""
    said = ", ".join(f"{param}: ({', '.join(str(d) for d in dims)}{',' if len(dims) == 1 else ''})"
                     for param, dims in shapes)
    return f", like=args) with arrays of shapes {said}"


def _numbers_text(numbers: tuple) -> str:
    """The ``numbers=`` argument of the regenerate command for code made for ``numbers``."""
    return f", numbers={numbers!r}" if numbers else ""


def generate_for_function(fn: Any, options: Options, table: RuleTable = DEFAULT_TABLE) -> Generated:
    """The pipeline for a live function."""
    return generate(from_function(fn), options, table)


__all__ = ["Options", "SweepNames", "Generated", "GeneratedModule", "generate", "generate_module",
           "generate_for_function", "jvp_generated", "jvp_program", "__version__"]
