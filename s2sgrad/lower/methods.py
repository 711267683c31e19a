"""Methods of the user's own classes: a ParsedFunction -> the same with each call of a method (and
each read of a property) of an object whose class s2sgrad reads in the function's own file written
as a call of a local function, which lower/closures.py then inlines, so every mode gets it.

    model = LinearModel(W, b)            model_W = W
    y = model.predict(x)          ->     model_b = b
                                         def model_predict(x):
                                             return np.tanh(x @ model_W + model_b)
                                         y = model_predict(x)

The object (the receiver) is one of:

- a global or closure value of the live function whose class is defined in this file: the
  method's ``self`` reads that name (``self.W`` is ``MODEL.W``, an attribute read where the code
  runs, a constant); read from a file (the command line), a module-level name the file binds
  once, to a call of such a class;
- a parameter given a pytree whose node is such a class (a dataclass, ``Options.trees``):
  ``self.W`` is ``model.W``, which lower/trees.py then reads as the leaf's parameter;
- a local bound once to ``Cls(...)`` where ``Cls``'s ``__init__`` only stores attributes (or is a
  dataclass's own): scalar replacement, each attribute a local name (``model.W`` is ``model_W``);
  any other use of the object (passed on, returned, an attribute it never stores) is refused where
  it is written.

A method is read only where the function that runs is the ``def`` in the class s2sgrad reads (the
live class's member's code starts at that def: a method replaced at run time is not inlined); the
generated code is guarded on the class's members it reads (read/live.py: ``class_members``), so a
class changed between calls is read again. What is not read here (a method of a builtin or of a
class of another file, a static or class method) is left as written, and the builders refuse it
where it carries a derivative.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field, replace
from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..read.names import name_nodes
from ..read.parse import KeepingTransformer, ParsedFunction
from .classes import ClassInfo, live_class, literal, static_class
from .local_scope import _params, _scope, check_reads_unbound
from .naming import Namer
from .text import code
from ..read.walk import findall


@dataclass
class _Receiver:
    """An object whose members are inlined: its name in the function, its class, and (scalar
    replacement) each stored attribute's local name."""

    name: str
    cls: ClassInfo
    scalars: Optional[dict] = None  # attribute -> local name
    locals: dict = field(default_factory=dict)  # member -> the local function standing for it
    annotation: Optional[cst.Param] = None  # a parameter read by its annotation (the command line)


def _bound_names(pf: ParsedFunction) -> set:
    """The names ``pf`` binds (its parameters, what it assigns, its local functions)."""
    return {p.name.value for p in _params(pf.node.params)} | \
        {name for name, _ in _scope(pf.node.body).bound} | \
        {p.name.value for p in ([pf.node.params.star_arg] if isinstance(pf.node.params.star_arg, cst.Param) else [])}


def inline_methods(pf: ParsedFunction, trees: tuple = ()) -> ParsedFunction:
    """``pf`` with the methods and properties of its receivers (module doc) called as local
    functions, its scalar-replaced objects' attributes local names (``pf`` itself when there is
    nothing to do), or a located TransformError for a use that cannot be read."""
    reads = {node.value for node in _attribute_objects(pf.node.body)}
    if not reads or not any(isinstance(s, cst.ClassDef) for s in pf.parsed.module.body):
        return pf
    bound = _bound_names(pf)
    receivers = _receivers(pf, reads, bound, dict(trees))
    if not receivers:
        return pf
    namer = Namer({n.value for n in name_nodes(pf.node)} | bound |
                  {n.value for s in pf.parsed.module.body if isinstance(s, cst.ClassDef) for n in name_nodes(s)})
    writer = _Writer(pf, receivers, namer, bound)
    body = _guarded(pf, writer.rewrite_body(pf.node.body), receivers)
    node = pf.node.with_changes(body=body)
    pf.parsed.adopt(node, pf.node)
    return replace(pf, node=node)


def _annotated(pf: ParsedFunction, name: str) -> Optional[cst.Param]:
    """``pf``'s parameter ``name`` where its annotation is one plain name (``model:
    LinearModel``), else None."""
    param = next((p for p in _params(pf.node.params) if p.name.value == name), None)
    if param is None or param.annotation is None or \
            not isinstance(param.annotation.annotation, cst.Name):
        return None
    return param


def _guarded(pf: ParsedFunction, suite: cst.BaseSuite, receivers: dict) -> cst.BaseSuite:
    """``suite`` headed, for each parameter whose methods were read by its annotation, by
    ``assert type(model) is LinearModel, ...``: the code read that class's methods, so an
    argument of another class (a subclass overriding one) stops there rather than getting that
    class's derivative."""
    guards = []
    present = {code(stmt) for stmt in suite.body}  # (a pass that runs again)
    for receiver in sorted(receivers.values(), key=lambda r: r.name):
        if receiver.annotation is None:
            continue
        cls = receiver.cls.name
        message = f"{pf.node.name.value}: generated for a `{receiver.name}` of class {cls} (its annotation)"
        guard = cst.parse_statement(f"assert type({receiver.name}) is {cls}, {message!r}\n")
        if code(guard) in present:
            continue
        pf.parsed.adopt(guard, receiver.annotation)
        pf.parsed.adopt(guard.body[0], receiver.annotation)
        guards.append(guard)
    if not guards:
        return suite
    body = list(suite.body)
    docstring = body[:1] if body and _is_docstring(body[0]) else []
    return suite.with_changes(body=docstring + guards + body[len(docstring):])


def _attribute_objects(node: cst.CSTNode) -> list:
    """The Name nodes read as the object of an attribute (``model`` in ``model.W``)."""
    out: list = []

    class Objects(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            if isinstance(attribute.value, cst.Name):
                out.append(attribute.value)

    node.visit(Objects())
    return out


def _receivers(pf: ParsedFunction, reads: set, bound: set, trees: dict) -> dict:
    """name -> _Receiver for the objects of ``pf`` whose members s2sgrad reads (module doc)."""
    out: dict = {}
    live = pf.unit.live
    params = {p.name.value for p in _params(pf.node.params)}
    bindings: dict = {}
    for name, node in _scope(pf.node.body).bound:
        bindings.setdefault(name, []).append(node)
    for name in sorted(reads):
        cls: Optional[ClassInfo] = None
        scalars = None
        if name in trees and name in params:
            treedef = trees[name]
            if treedef.kind in ("dataclass", "custom", "object") and treedef.node_type is not None \
                    and live is not None:
                cls = live_class(pf, treedef.node_type)
        elif name in params:
            if live is not None:
                continue
            param = _annotated(pf, name)  # the command line: `model: LinearModel`
            cls = static_class(pf, param.annotation.annotation.value) if param is not None else None
            if cls is not None:
                out[name] = _Receiver(name, cls, annotation=param)
            continue
        elif name in bound:
            made = _constructed(pf, name, bindings.get(name, []), bound)
            if made is None:
                continue
            cls = live_class(pf, live[made]) if live is not None and made in live else \
                static_class(pf, made) if live is None else None
            if cls is None or cls.fields is None:
                continue
            scalars = {}
        elif live is not None and name in live:
            value = live[name]
            if isinstance(value, (type, types.ModuleType, types.FunctionType)) or callable(value):
                continue
            cls = live_class(pf, type(value))
            if cls is not None:  # an attribute of the object itself hides its class's member
                cls.members.update({attr: ("other", None) for attr in getattr(value, "__dict__", {})})
        elif live is None:  # the command line: a module-level ``NAME = Cls(...)``, bound once
            made = _module_object(pf, name)
            cls = static_class(pf, made) if made is not None else None
        if cls is not None:
            out[name] = _Receiver(name, cls, scalars)
    return out


def _module_object(pf: ParsedFunction, name: str) -> Optional[str]:
    """The class whose call the module binds ``name`` to, where that is the one module-level
    statement naming ``name`` as a target (``MODEL = LinearModel(W0, b0)``), else None (read
    without running the file: the command line)."""
    found = None
    for stmt in pf.parsed.module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            if stmt.name.value == name:
                return None
            continue
        targets = findall(stmt, m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For() | m.AsName())
        names = {n.value for t in targets for n in name_nodes(getattr(t, "target", None) or t.name)}
        if isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            names |= {n.value for n in name_nodes(stmt)}
        if name not in names:
            continue
        if found is not None:
            return None  # bound more than once
        found = stmt
    small = found.body[0] if isinstance(found, cst.SimpleStatementLine) and len(found.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
            isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call) and \
            isinstance(small.value.func, cst.Name):
        return small.value.func.value
    return None


def _constructed(pf: ParsedFunction, name: str, nodes: list, bound: set) -> Optional[str]:
    """The class name ``name`` is bound to a call of, where its one binding is ``name =
    Cls(...)`` with ``Cls`` a module-level name; else None."""
    if len(nodes) != 1 or not isinstance(nodes[0], cst.AssignTarget):
        return None
    found = [line for line in _simple_lines(pf.node.body) if len(line.body) == 1 and
             isinstance(line.body[0], cst.Assign) and line.body[0].targets[0] is nodes[0]]
    if not found or len(found[0].body[0].targets) != 1:
        return None
    value = found[0].body[0].value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value not in bound:
        return value.func.value
    return None


def _simple_lines(suite: cst.CSTNode) -> list:
    out: list = []

    class Lines(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> bool:
            out.append(line)
            return False

        def visit_FunctionDef(self, node) -> bool:
            return False

    suite.visit(Lines())
    return out


class _Writer:
    """Writes the receivers' member reads as local function calls, the scalar-replaced objects'
    constructions as their attributes' assignments; collects the local functions (``defs``)."""

    def __init__(self, pf: ParsedFunction, receivers: dict, namer: Namer, bound: set) -> None:
        self.pf = pf
        self.receivers = receivers
        self.namer = namer
        self.bound = bound
        self.defs: list = []

    def rewrite_body(self, suite: cst.BaseSuite) -> cst.BaseSuite:
        body = self.statements(suite)
        new = _Members(self, {name: r for name, r in self.receivers.items()})
        body = [stmt.visit(new) for stmt in body]
        self.check_whole_uses(body)
        docstring = body[:1] if body and _is_docstring(body[0]) else []
        return cst.IndentedBlock(docstring + self.defs + body[len(docstring):]) \
            if isinstance(suite, cst.SimpleStatementSuite) else \
            suite.with_changes(body=docstring + self.defs + body[len(docstring):])

    def statements(self, suite: cst.BaseSuite) -> list:
        """The statements of ``suite``, each construction of a scalar-replaced object replaced."""
        lines = suite.body
        if isinstance(suite, cst.SimpleStatementSuite):
            lines = [cst.SimpleStatementLine([s]) for s in suite.body]
        out: list = []
        for stmt in lines:
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
                    isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1:
                target = stmt.body[0].targets[0].target
                receiver = self.receivers.get(target.value) if isinstance(target, cst.Name) else None
                if receiver is not None and receiver.scalars is not None and \
                        isinstance(stmt.body[0].value, cst.Call):
                    out.extend(self.construction(stmt, receiver))
                    continue
            out.append(self.blocks(stmt))
        return out

    def blocks(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        """``stmt`` with the statements of its blocks rewritten (statements)."""
        if isinstance(stmt, (cst.If, cst.For, cst.While, cst.With, cst.Else)):
            changes: dict = {"body": stmt.body.with_changes(body=self.statements(stmt.body))
                             if isinstance(stmt.body, cst.IndentedBlock) else stmt.body}
            orelse = getattr(stmt, "orelse", None)
            if orelse is not None:
                changes["orelse"] = self.blocks(orelse)
            new = stmt.with_changes(**changes)
            self.pf.parsed.adopt(new, stmt)
            return new
        return stmt

    def construction(self, stmt: cst.SimpleStatementLine, receiver: _Receiver) -> list:
        """``m = Cls(args)`` as the assignments of its attributes' local names."""
        call = stmt.body[0].value
        cls = receiver.cls
        names, values = self.arguments(call, cls)
        receiver.scalars = {}
        out: list = []
        if cls.init is None:  # a dataclass: each field the argument given for it
            for name in cls.fields:
                receiver.scalars[name] = self.namer.fresh(f"{receiver.name}_{name}")
                out.append(self.line(receiver.scalars[name], values[name], stmt))
            return out
        me = cls.init.params.params[0].name.value
        reads = [n.value for n in name_nodes(cls.init.body, reads_only=True)]
        renames: dict = {}
        for name in names:
            value = values[name]
            if isinstance(value, cst.Name) and value.value not in self.receivers or literal(value) \
                    or reads.count(name) == 1:
                renames[name] = value  # read once: the argument is evaluated there
                continue
            local = self.namer.fresh(f"{receiver.name}_{name}")
            out.append(self.line(local, value, stmt))
            renames[name] = cst.Name(local)
        check_reads_unbound(self.pf, cls.init, set(names) | {me}, self.bound, call,
                            f"`{cls.init.name.value}` of your class")
        for line in cls.init.body.body:
            for small in (line.body if isinstance(line, cst.SimpleStatementLine) else []):
                if isinstance(small, (cst.Pass, cst.Expr)):
                    continue
                target = small.targets[0].target if isinstance(small, cst.Assign) else small.target
                value = small.value.visit(_Substitute(self.pf.parsed, renames, me, receiver.scalars))
                local = self.namer.fresh(f"{receiver.name}_{target.attr.value}")
                out.append(self.line(local, value, stmt))
                receiver.scalars[target.attr.value] = local
        return out

    def arguments(self, call: cst.Call, cls: ClassInfo) -> tuple:
        """``(parameter names, {parameter: expression})``: what a call of ``cls`` gives each
        parameter of its ``__init__`` (or field of a dataclass), defaults included."""
        if cls.init is not None:
            params = cls.init.params
            positional = [p.name.value for p in params.params[1:]]
            names = positional + [p.name.value for p in params.kwonly_params]
            defaults = {p.name.value: p.default for p in (*params.params[1:], *params.kwonly_params)
                        if p.default is not None}
        else:
            positional, names, defaults = list(cls.fields), list(cls.fields), dict(cls.defaults)
        given = [arg for arg in call.args if arg.keyword is None]
        if any(arg.star for arg in call.args) or len(given) > len(positional):
            raise self.pf.error(call, f"this call of your class `{cls.name}` passes its arguments in "
                                "a way s2sgrad does not read (star-arguments, or too many)",
                                "pass each argument by position or keyword")
        values = {param: arg.value for param, arg in zip(positional, given)}
        for arg in call.args:
            if arg.keyword is not None:
                if arg.keyword.value not in names or arg.keyword.value in values:
                    raise self.pf.error(arg, f"`{cls.name}` has no parameter `{arg.keyword.value}` "
                                        "left to give", "check the call")
                values[arg.keyword.value] = arg.value
        for name in names:
            if name not in values:
                if name not in defaults:
                    raise self.pf.error(call, f"this call of your class `{cls.name}` gives no value "
                                        f"to its parameter `{name}`", "check the call")
                values[name] = defaults[name]
        return names, values

    def line(self, name: str, value: cst.BaseExpression, stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """``name = value`` located at, and quoting, ``stmt``."""
        line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])
        self.pf.parsed.adopt(line.body[0], stmt.body[0])
        self.pf.parsed.adopt(line, stmt)
        quoted = self.pf.parsed.written_as.get(stmt.body[0], stmt.body[0])
        self.pf.parsed.written_as[line] = self.pf.parsed.written_as[line.body[0]] = quoted
        return line

    def member(self, receiver: _Receiver, attr: str, where: cst.CSTNode) -> Optional[str]:
        """The local function standing for ``receiver``'s method or property ``attr`` (made on
        first use), or None when ``attr`` is not one s2sgrad reads."""
        kind, node = receiver.cls.members.get(attr, ("other", None))
        if kind not in ("method", "property"):
            return None
        if attr in receiver.locals:
            return receiver.locals[attr]
        params = node.params
        if not params.params or params.posonly_params:
            raise self.pf.error(where, f"`{attr}` of your class `{receiver.cls.name}` takes no "
                                "`self` s2sgrad can bind", "write it as a plain method")
        me = params.params[0].name.value
        appears = {n.value for n in name_nodes(node)}
        if receiver.name in appears - {me}:
            raise self.pf.error(where, f"`{attr}` of your class `{receiver.cls.name}` names "
                                f"`{receiver.name}` itself; s2sgrad inlines it here, where "
                                f"`{receiver.name}` is the object", f"rename `{receiver.name}` here")
        check_reads_unbound(self.pf, node, {me}, self.bound, where,
                            f"`{node.name.value}` of your class")
        name = self.namer.fresh(f"{receiver.name}_{attr}")
        receiver.locals[attr] = name
        body = node.body.visit(_Members(self, {me: receiver}))
        new = cst.FunctionDef(name=cst.Name(name), params=params.with_changes(params=params.params[1:]),
                              body=body)
        self.pf.parsed.adopt(new, node)
        self.pf.parsed.adopt(new.name, node.name)
        self.defs.append(new)
        return name

    def check_whole_uses(self, body: list) -> None:
        """Refuse a use of a scalar-replaced object other than reading what it stores."""
        for stmt in body:
            for node in name_nodes(stmt, reads_only=True):
                receiver = self.receivers.get(node.value)
                if receiver is not None and receiver.scalars is not None:
                    raise self.pf.error(node, f"`{node.value}`, an object of your class "
                                        f"`{receiver.cls.name}` built here, is used whole (passed "
                                        "on, returned, compared, or an attribute it does not store "
                                        "is read): s2sgrad reads such an object's attributes and "
                                        "methods only", f"read its attributes here "
                                        f"(`{node.value}.<attribute>`) and pass those on")


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


class _Substitute(KeepingTransformer):
    """An ``__init__``'s expression with its parameters replaced by what the call gave them and
    ``self.<attr>`` by the attribute's local name."""

    def __init__(self, parsed, renames: dict, me: str, scalars: dict) -> None:
        super().__init__(parsed)
        self.renames, self.me, self.scalars = renames, me, scalars

    def leave_Attribute(self, original, updated):
        if isinstance(original.value, cst.Name) and original.value.value == self.me:
            return cst.Name(self.scalars[original.attr.value])
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Name(self, original, updated):
        return self.renames.get(original.value, updated)


class _Members(KeepingTransformer):
    """Member reads of the receivers (``spelled``: the name each is read by here, the object's
    own or a method's ``self``) written as local function calls and local names."""

    def __init__(self, writer: _Writer, spelled: dict) -> None:
        super().__init__(writer.pf.parsed)
        self.writer = writer
        self.spelled = spelled
        self.called: set = set()
        self.objects: set = set()  # the Names read as an attribute's object
        self.fields: set = set()  # the Names that are attribute fields or keywords (no names)

    def visit_Attribute(self, node) -> None:
        self.objects.add(id(node.value))
        self.fields.add(id(node.attr))

    def visit_Arg(self, node) -> None:
        if node.keyword is not None:
            self.fields.add(id(node.keyword))

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, (cst.BaseSmallStatement, cst.SimpleStatementLine)) and \
                result is not original_node and isinstance(result, cst.CSTNode):
            written = self.parsed.written_as  # the comment quotes the user's statement
            written[result] = written.get(original_node, original_node)
        return result

    def receiver(self, node: cst.CSTNode) -> Optional[_Receiver]:
        return self.spelled.get(node.value) if isinstance(node, cst.Name) else None

    def visit_Call(self, node) -> None:
        self.called.add(id(node.func))

    def visit_FunctionDef(self, node) -> bool:
        # a nested def naming one of the spellings as its own parameter: its own object
        names = {p.name.value for p in (*node.params.params, *node.params.kwonly_params)}
        return not names & set(self.spelled)

    def visit_Lambda(self, node) -> bool:
        return self.visit_FunctionDef(node)

    def visit_ListComp(self, node) -> bool:
        # a comprehension binding one of the spellings: its own value there
        clause, names = node.for_in, set()
        while clause is not None:
            names |= {n.value for n in name_nodes(clause.target)}
            clause = clause.inner_for_in
        return not names & set(self.spelled)

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp

    def visit_AssignTarget(self, node) -> None:
        target = node.target
        if isinstance(target, cst.Attribute) and self.receiver(target.value) is not None:
            raise self.writer.pf.error(target, f"this changes an attribute of `{target.value.value}`, "
                                       "an object of your class: s2sgrad reads methods that do not "
                                       "change their object", "return the new value instead")

    def visit_AugAssign(self, node) -> None:
        if isinstance(node.target, cst.Attribute) and self.receiver(node.target.value) is not None:
            self.visit_AssignTarget(cst.AssignTarget(node.target))

    def leave_Call(self, original, updated):
        func = original.func
        if isinstance(func, cst.Attribute) and self.receiver(func.value) is not None:
            receiver = self.receiver(func.value)
            local = self.writer.member(receiver, func.attr.value, original)
            if local is not None and receiver.cls.members[func.attr.value][0] == "method":
                new = updated.with_changes(func=cst.Name(local))
                self.parsed.adopt(new.func, func)
                return new
        return updated

    def leave_Attribute(self, original, updated):
        receiver = self.receiver(original.value)
        if receiver is None:
            return updated
        attr = original.attr.value
        kind = receiver.cls.members.get(attr, ("other", None))[0]
        if id(original) in self.called and kind == "method":
            return updated  # leave_Call writes it
        if kind == "property":
            local = self.writer.member(receiver, attr, original)
            new = cst.Call(func=cst.Name(local))
            self.parsed.adopt(new.func, original)
            return new
        if receiver.scalars is not None:
            if attr not in receiver.scalars and kind == "constant":  # read from the class
                new = cst.Attribute(cst.Name(receiver.cls.name), cst.Name(attr))
                self.parsed.adopt(new, original)
                return new
            if attr not in receiver.scalars:
                raise self.writer.pf.error(original, f"`{attr}` is not an attribute `{receiver.cls.name}"
                                           "(...)` stores in its `__init__`, nor a method or "
                                           "property s2sgrad reads", "read only what the object stores")
            return cst.Name(receiver.scalars[attr])
        if original.value.value != receiver.name:  # a method's self: the object's own name
            return updated.with_changes(value=cst.Name(receiver.name))
        return updated

    def leave_Name(self, original, updated):
        receiver = self.receiver(original)
        if receiver is None or id(original) in self.fields or original.value == receiver.name:
            return updated
        if id(original) in self.objects:
            return updated  # leave_Attribute reads the member
        if receiver.scalars is not None:
            raise self.writer.pf.error(original, f"`{original.value}` here is an object of your class "
                                       f"`{receiver.cls.name}` built in the function, used whole: "
                                       "s2sgrad reads such an object's attributes and methods only",
                                       "pass the attributes the code needs instead")
        return cst.Name(receiver.name)  # ``self`` passed on: the object itself
