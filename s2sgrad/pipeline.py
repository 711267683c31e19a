"""The pipeline: SourceUnit + Options -> generated module text (and the facts needed to load it).

    source capture -> parse -> fence -> normalize -> activity -> reverse -> codegen

Calls to the user's own functions are transformed the same way, once each, into helpers of the
same generated module.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Optional

import libcst as cst

from . import __version__
from .analyze.activity import analyze, seeded_outputs
from .analyze.invariance import stabilizers
from .analyze.shapes import shape_facts
from .lower.aliasing import check_inplace
from .lower.hoist import hoist_products
from .differentiate.forward import forward
from .differentiate.reverse import HelperCall, VjpFunction, reverse
from .differentiate.unknown import refuse_user_method
from .errors import TransformError
from .read.names import name_nodes
from .lower.ir import CoreFunction, Param, Prim, Stmt
from .lower.naming import Namer
from .lower.custom import custom_vjp, is_custom_def
from .lower.normalize import lower_function
from .lower.structure import structure
from .read import project
from .read.capture import SourceUnit, from_file, from_function, is_source_function
from .read.fence import fence
from .read.parse import ParsedFunction, ParsedModule, find_function, parse_module
from . import registry
from .rules import DEFAULT_TABLE, RuleTable
from .registry import RegisteredRule
from .write.codegen import GradWrapper, Program, body_text, header_lines, jvp_lines, render
from .write.imports import free_globals, import_lines


@dataclass(frozen=True)
class Options:
    """What to differentiate: parameter names (``wrt``), whether the output carries aux data, and
    the mode: ``"rev"`` (``<f>_fwd``/``<f>_bwd``/``<f>_grad``) or ``"fwd"`` (``<f>_jvp``)."""

    wrt: tuple
    has_aux: bool = False
    mode: str = "rev"


@dataclass(frozen=True)
class EntryNames:
    """The generated names for one differentiated function: forward, backward and gradient."""

    fwd: str
    bwd: str
    grad: str


@dataclass(frozen=True)
class Generated:
    """A generated module's text, its entry's names, and the live values it needs."""

    text: str
    names: EntryNames
    live_names: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def callables(self) -> tuple:
        """The names of the functions a caller runs: the forward and backward sweeps (reverse
        mode), or the one ``<f>_jvp`` (forward mode)."""
        return tuple(name for name in (self.names.fwd, self.names.bwd) if name)


@dataclass(frozen=True)
class GeneratedModule:
    """A generated module for several functions: text, EntryNames per entry."""

    text: str
    names: tuple
    live_names: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class _Session:
    """Per-transform bookkeeping for helpers (not shared between transforms)."""

    table: RuleTable
    module_namer: Namer
    helpers: dict = field(default_factory=dict)  # key -> HelperCall
    functions: list = field(default_factory=list)  # helper VjpFunctions in discovery order
    in_progress: set = field(default_factory=set)
    globals_read: set = field(default_factory=set)
    digests: list = field(default_factory=list)
    live: dict = field(default_factory=dict)
    units: list = field(default_factory=list)  # (ParsedFunction, globals it reads)


def lower(pf: ParsedFunction, table: RuleTable) -> CoreFunction:
    """Structure (no jumps), fence and normalize one parsed function."""
    structured = replace(pf, node=structure(pf.node))
    core = lower_function(fence(structured), table.nondiff)
    check_inplace(core, table.views)
    return hoist_products(core)


def _function_digest(pf: ParsedFunction) -> str:
    code = cst.Module([]).code_for_node(pf.node)
    return hashlib.sha256(code.encode()).hexdigest()


def _resolve_helper(pf: ParsedFunction, prim: Prim) -> Optional[ParsedFunction]:
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
    # Static (the CLI's path, or a live function calling a def further down its own file): a
    # module-level def in the same file, else a function imported from another file of the project.
    node = _module_def(pf.parsed.module, prim.callee)
    if node is not None:
        return _function_at(pf.unit, pf.parsed, node)
    if live is not None:
        return None
    return _imported_function(pf.unit.path, pf.parsed.module, prim.callee.split("."), 0)


def _module_def(module: cst.Module, name: str) -> Optional[cst.FunctionDef]:
    return next((node for node in module.body
                 if isinstance(node, cst.FunctionDef) and node.name.value == name), None)


def _function_at(unit: SourceUnit, parsed: ParsedModule, node: cst.FunctionDef) -> ParsedFunction:
    first = node.decorators[0] if node.decorators else node
    line = parsed.positions[first].start.line
    return find_function(SourceUnit(unit.text, unit.path, unit.module, node.name.value, line,
                                    unit.sha256, unit.live))


def _imported_function(path: str, module: cst.Module, parts: list, depth: int) -> Optional[ParsedFunction]:
    """Follow the import that binds ``parts[0]`` in ``module`` (the file at ``path``) to the def it
    names in another file of the project, through re-exports (``from .core import f`` in a package's
    ``__init__.py``). None for anything outside the project (numpy, installed packages)."""
    binding = project.import_binding(module, parts[0])
    if binding is None or depth > 8:
        return None
    dotted, level, attr = binding
    names = (dotted.split(".") if dotted else []) + ([attr] if attr is not None else []) + parts[1:]
    if len(names) < 2 and level == 0:
        return None
    filename = project.find_module_file(".".join(names[:-1]), level, path)
    if filename is None:
        return None
    text = project.read_text(filename)
    unit = from_file(filename, names[-1], 0, project.module_name(filename), text)
    parsed = parse_module(text, unit.path)
    node = _module_def(parsed.module, names[-1])
    if node is not None:
        return _function_at(unit, parsed, node)
    return _imported_function(filename, parsed.module, names[-1:], depth + 1)


def _lowered(pf: ParsedFunction, session: _Session, core: Optional[CoreFunction]) -> CoreFunction:
    """``pf`` lowered (unless ``core`` already is), its digest, the globals it reads and the live
    values of those recorded in ``session``."""
    core = core if core is not None else lower(pf, session.table)
    session.globals_read.update(core.globals_read)
    session.digests.append(_function_digest(pf))
    if pf.unit.live is not None:
        for name in core.globals_read:
            if name in pf.unit.live:
                session.live.setdefault(name, pf.unit.live[name])
    session.units.append((pf, core.globals_read))
    return core


def _differentiate(pf: ParsedFunction, session: _Session, *, wrt: Optional[tuple], has_aux: bool,
                   top_level: bool, names: tuple, core: Optional[CoreFunction] = None) -> tuple:
    core = _lowered(pf, session, core)
    params = tuple(p.name for p in core.params)
    wrt = params if wrt is None else wrt
    outputs = seeded_outputs(core, has_aux)
    classes, scalars = shape_facts(core, session.table.elementwise)
    stable = stabilizers(core, session.table, outputs, classes, scalars)
    activity = analyze(core, wrt, outputs, session.table.nondiff, stable)

    def lookup(prim: Prim, stmt: Stmt) -> Optional[HelperCall]:
        return _helper(pf, prim, stmt, session)

    kwonly = tuple(p.name.value for p in pf.node.params.kwonly_params)
    fwd_name, bwd_name = names
    vjp = reverse(core, activity, session.table, wrt=wrt, has_aux=has_aux, top_level=top_level,
                  helper_lookup=lookup, fwd_name=fwd_name, bwd_name=bwd_name, kwonly=kwonly,
                  shapes=(classes, scalars))
    return core, vjp


def _custom(pf: ParsedFunction, session: _Session, names: tuple, *, top_level: bool,
            wrt: Optional[tuple]) -> VjpFunction:
    """A custom_gradient function: the user's forward body and grad_fn, not differentiated."""
    session.digests.append(_function_digest(pf))
    if pf.unit.live is not None:
        for name in _free_names(pf.node):
            if name in pf.unit.live:
                session.live.setdefault(name, pf.unit.live[name])
    session.units.append((pf, ()))
    return custom_vjp(pf, fwd_name=names[0], bwd_name=names[1], top_level=top_level, wrt=wrt)


def _free_names(node: cst.FunctionDef) -> list:
    return sorted({n.value for n in name_nodes(node)})


def _helper(caller: ParsedFunction, prim: Prim, stmt: Stmt, session: _Session) -> Optional[HelperCall]:
    target = _resolve_helper(caller, prim)
    if target is None:
        return None
    key = (target.unit.path, target.unit.def_line, target.name)
    if key in session.in_progress:
        loc = prim.location or stmt.origin.location
        raise TransformError(f"recursive call to {target.name} cannot be differentiated", loc,
                             "rewrite the recursion as a loop")
    if key in session.helpers:
        return session.helpers[key]
    session.in_progress.add(key)
    names = (session.module_namer.fresh(f"{target.name}_fwd"),
             session.module_namer.fresh(f"{target.name}_bwd"))
    if is_custom_def(target):
        vjp = _custom(target, session, names, top_level=False, wrt=None)
        params = tuple(p.name.value for p in target.node.params.params)
        kwonly: tuple = ()
    else:
        core, vjp = _differentiate(target, session, wrt=None, has_aux=False, top_level=False,
                                   names=names)
        params = tuple(p.name for p in core.params)
        kwonly = tuple(p.name.value for p in target.node.params.kwonly_params)
    session.in_progress.discard(key)
    call = HelperCall(
        fwd_name=names[0],
        bwd_name=names[1],
        params=params,
        kwonly=kwonly,
        returns_adjoint=tuple(r != "None" for r in vjp.returns),
    )
    session.helpers[key] = call
    session.functions.append(vjp)
    return call


def _check_wrt(pf: ParsedFunction, options: Options) -> None:
    params = tuple(p.name.value for p in list(pf.node.params.params) + list(pf.node.params.kwonly_params))
    for name in options.wrt:
        if name not in params:
            raise pf.error(pf.node, f"{pf.name} has no parameter `{name}` to differentiate "
                           f"with respect to", f"its parameters are: {', '.join(params)}")


def generate_module(entries: tuple, table: RuleTable = DEFAULT_TABLE, *, command: str = "",
                    source: str = "") -> GeneratedModule:
    """Transform several functions (``(SourceUnit, Options)`` pairs) into one generated module.

    Helpers they call are generated once and shared.
    """
    parsed = []
    for unit, options in entries:
        pf = find_function(unit)
        if not is_custom_def(pf):
            fence(replace(pf, node=structure(pf.node)))
        _check_wrt(pf, options)
        parsed.append((pf, options))
    table, live_rules = with_user_rules(table, tuple(pf for pf, _ in parsed))
    session = _Session(table=table, module_namer=Namer(()))
    session.live.update(live_rules)
    reserved = set()
    cores = []
    for pf, _ in parsed:
        if is_custom_def(pf):
            reserved.update(_free_names(pf.node))
            cores.append(None)
        else:
            cores.append(lower(pf, table))
            reserved.update(cores[-1].globals_read)
        reserved.add(pf.name)
    session.module_namer = Namer(reserved)
    names = []
    for pf, _ in parsed:
        names.append(EntryNames(session.module_namer.fresh(f"{pf.name}_fwd"),
                                session.module_namer.fresh(f"{pf.name}_bwd"),
                                session.module_namer.fresh(f"{pf.name}_grad")))
    for (pf, options), entry in zip(parsed, names):
        # An entry differentiated with respect to all its parameters serves its callers too.
        params = [p.name.value for p in pf.node.params.params]
        kwonly = [p.name.value for p in pf.node.params.kwonly_params]
        everything = tuple(params) if is_custom_def(pf) else tuple(params + kwonly)
        if options.wrt == everything and not options.has_aux:
            key = (pf.unit.path, pf.unit.def_line, pf.name)
            session.helpers[key] = HelperCall(entry.fwd, entry.bwd, everything,
                                              () if is_custom_def(pf) else tuple(kwonly),
                                              tuple(True for _ in everything))
    tops = []
    wrappers = []
    for (pf, options), entry, core in zip(parsed, names, cores):
        if core is None:
            top = _custom(pf, session, (entry.fwd, entry.bwd), top_level=True, wrt=options.wrt)
            core = lower_signature(pf)
        else:
            key = (pf.unit.path, pf.unit.def_line, pf.name)
            session.in_progress.add(key)
            core, top = _differentiate(pf, session, wrt=options.wrt, has_aux=options.has_aux,
                                       top_level=True, names=(entry.fwd, entry.bwd), core=core)
            session.in_progress.discard(key)
        grad_name = entry.grad
        tops.append(top)
        wrappers.append(_wrapper(core, top, grad_name))
    functions = (*tops, *session.functions)
    digest = hashlib.sha256("\n".join(session.digests).encode()).hexdigest()
    first = parsed[0][0]
    header = header_lines(source or first.unit.path, tuple(pf.name for pf, _ in parsed), digest,
                          command or f"s2sgrad.source(s2sgrad.grad({first.name}))")
    program = Program(functions, tuple(wrappers), (), header)
    body = body_text(program)
    imports = import_lines(tuple(pf for pf, _ in session.units), free_globals(header_code(header) + body))
    text = render(replace(program, imports=imports), body)
    return GeneratedModule(text, tuple(names), dict(session.live))


def generate(unit: SourceUnit, options: Options, table: RuleTable = DEFAULT_TABLE,
             *, command: str = "") -> Generated:
    """Transform the function ``unit`` names into a generated module's text (forward mode's
    ``<f>_jvp`` when ``options.mode`` is ``"fwd"``)."""
    if options.mode == "fwd":
        return generate_jvp(unit, options.wrt, table, command=command)
    module = generate_module(((unit, options),), table, command=command)
    return Generated(module.text, module.names[0], module.live_names)


def generate_jvp(unit: SourceUnit, wrt: tuple, table: RuleTable = DEFAULT_TABLE, *,
                 command: str = "") -> Generated:
    """Transform the function ``unit`` names into a module holding its forward-mode function
    ``<name>_jvp(<params>, <wrt>_dot...)`` (named in ``names.fwd``), and those of the user
    functions it calls."""
    pf = find_function(unit)
    _check_wrt(pf, Options(wrt=wrt))
    table, live_rules = with_user_rules(table, (pf,))
    core = None if is_custom_def(pf) else lower(pf, table)  # structured and fenced there
    reserved = set(core.globals_read) if core is not None else set(_free_names(pf.node))
    session = _Session(table=table, module_namer=Namer(reserved | {pf.name}))
    session.live.update(live_rules)
    name = session.module_namer.fresh(f"{pf.name}_jvp")
    top = _forward(pf, session, wrt, name, core)
    digest = hashlib.sha256("\n".join(session.digests).encode()).hexdigest()
    header = header_lines(unit.path, (pf.name,), digest, command or _jvp_command(pf, wrt))
    body = "".join("\n\n\n" + "\n".join(jvp_lines(fn)) for fn in (top, *session.functions)) + "\n"
    imports = import_lines(tuple(p for p, _ in session.units), free_globals(header_code(header) + body))
    text = render(Program((), (), imports, header), body)
    return Generated(text, EntryNames(name, "", ""), dict(session.live))


def _forward(pf: ParsedFunction, session: _Session, wrt: tuple, name: str,
             core: Optional[CoreFunction] = None):
    """The JvpFunction of one function (helpers it calls are added to ``session.functions``)."""
    if is_custom_def(pf):
        raise pf.error(pf.node, "forward mode (jvp) does not support custom_gradient functions "
                       "(their gradient is a reverse-mode rule)", "use s2sgrad.grad or s2sgrad.vjp")
    core = _lowered(pf, session, core)
    table = session.table
    classes, scalars = shape_facts(core, table.elementwise)
    stable = stabilizers(core, table, seeded_outputs(core, False), classes, scalars)
    kwonly = tuple(p.name.value for p in pf.node.params.kwonly_params)

    def lookup(prim: Prim, stmt: Stmt, choose: Any) -> Optional[tuple]:
        return _jvp_helper(pf, prim, stmt, session, choose)

    return forward(core, table, wrt=wrt, name=name, kwonly=kwonly, constant=stable,
                   helper_lookup=lookup, shapes=(classes, scalars))


def _jvp_helper(caller: ParsedFunction, prim: Prim, stmt: Stmt, session: _Session,
                choose: Any) -> Optional[tuple]:
    """The forward mode of the user function ``prim`` calls, with respect to the parameters
    ``choose`` picks: ``(name, ((param, tangent parameter), ...))``, generated once per choice."""
    target = _resolve_helper(caller, prim)
    if target is None:
        return None
    params = tuple(p.name.value for p in list(target.node.params.params) +
                   list(target.node.params.kwonly_params))
    wrt = choose(params)
    key = ("jvp", target.unit.path, target.unit.def_line, target.name, wrt)
    if key in session.in_progress:
        loc = prim.location or stmt.origin.location
        raise TransformError(f"recursive call to {target.name} cannot be differentiated", loc,
                             "rewrite the recursion as a loop")
    if key not in session.helpers:
        session.in_progress.add(key)
        fn = _forward(target, session, wrt, session.module_namer.fresh(f"{target.name}_jvp"))
        session.in_progress.discard(key)
        session.helpers[key] = (fn.name, tuple(zip(wrt, fn.tangent_params)))
        session.functions.append(fn)
    return session.helpers[key]


def _jvp_command(pf: ParsedFunction, wrt: tuple) -> str:
    params = [p.name.value for p in pf.node.params.params]
    if len(wrt) == 1 and wrt[0] in params:
        return f"s2sgrad.source(s2sgrad.grad({pf.name}, argnums={params.index(wrt[0])}), mode='fwd')"
    return f"s2sgrad.jvp({pf.name}, primals, tangents)"


REGISTER_DECORATORS = frozenset({"s2sgrad.register_gradient", "s2sgrad.registry.register_gradient"})


def with_user_rules(table: RuleTable, functions: tuple) -> tuple:
    """``table`` plus the gradients users registered: at run time (this process's registry) and,
    statically, ``@register_gradient("name")`` definitions in the modules of ``functions``.
    Returns the table and the run-time rule functions generated code must be given by name."""
    rules = {}
    live = {}
    for name, fn in sorted(registry.registered().items()):
        function = getattr(fn, "__name__", "rule")
        rules[name] = RegisteredRule(name, function, getattr(fn, "__module__", ""))
        live[function] = fn
    seen = set()
    for pf in functions:
        if pf.unit.path in seen:
            continue
        seen.add(pf.unit.path)
        for node in pf.parsed.module.body:
            if not isinstance(node, cst.FunctionDef):
                continue
            for deco in node.decorators:
                call = deco.decorator
                if isinstance(call, cst.Call) and call.args and \
                        pf.qualified_name(call.func) in REGISTER_DECORATORS and \
                        isinstance(call.args[0].value, cst.SimpleString):
                    name = call.args[0].value.evaluated_value
                    rules.setdefault(name, RegisteredRule(name, node.name.value, pf.unit.module))
    if not rules:
        return table, live
    return table.with_rules(tuple(rules[k] for k in sorted(rules))), live


def lower_signature(pf: ParsedFunction) -> CoreFunction:
    """A CoreFunction with only the signature of ``pf`` (for the ``_grad`` wrapper)."""
    params = tuple(Param(p.name.value, p.default)
                   for p in list(pf.node.params.params) + list(pf.node.params.kwonly_params))
    names = frozenset(n.value for n in name_nodes(pf.node))
    return CoreFunction(pf.name, pf.name, params, (), None, None, names, (), pf.unit.path)


def header_code(header: tuple) -> str:
    """The header's code lines (its imports), so that names they bind count as bound."""
    return "\n".join(line for line in header if not line.startswith("#")) + "\n"


def _wrapper(core: CoreFunction, top: VjpFunction, grad_name: str) -> GradWrapper:
    namer = Namer(core.reserved | {grad_name, top.fwd_name, top.bwd_name})
    seed = namer.fresh(f"{core.name}_bar")
    call_args = ", ".join(p.name for p in core.params)
    return GradWrapper(grad_name, core.name, top.fwd_name, top.bwd_name, top.params_code,
                       call_args, seed, top.wrt)


def generate_for_function(fn: Any, options: Options, table: RuleTable = DEFAULT_TABLE) -> Generated:
    """The pipeline for a live function."""
    return generate(from_function(fn), options, table)


__all__ = ["Options", "EntryNames", "Generated", "GeneratedModule", "generate", "generate_module",
           "generate_for_function", "__version__"]
