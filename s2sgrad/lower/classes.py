"""The user's classes as s2sgrad reads them in a function's own file (lower/methods.py inlines
their methods): a live class, or a class named in the file read without running it -> a
``ClassInfo``: its members by name (methods, properties, others), and the attributes a call of it
stores where it can be scalar-replaced (an ``__init__`` that only stores attributes, or a
dataclass's own with literal defaults).

A member is read only where the live class's member is the def in the file (its code starts
there, and the file is the one it was compiled from: read.live.check_current).
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from typing import Any, Optional

import libcst as cst

from ..read.live import check_current, member_code
from ..read.names import name_nodes
from ..read.parse import ParsedFunction
from ..read.paths import display_path

_NOT_USER = {"numpy", "builtins", "s2sgrad", "scipy", "collections", "typing", "math", "abc", "enum"}


@dataclass
class ClassInfo:
    """A class s2sgrad reads in the function's file: its members by name (``(kind, def)``, kind
    ``"method"``, ``"property"``, ``"constant"`` (assigned in the class body) or ``"other"``), the attributes a call of it stores in order
    (``fields``, None where the class cannot be scalar-replaced) and how (``init``: the
    ``__init__`` def, None for a dataclass's own)."""

    name: str
    members: dict
    fields: Optional[tuple] = None
    init: Optional[cst.FunctionDef] = None
    defaults: dict = field(default_factory=dict)  # field of a dataclass -> its literal default


def _decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""


def _def_line(pf: ParsedFunction, node: cst.FunctionDef) -> int:
    first = node.decorators[0] if node.decorators else node
    where = pf.parsed.positions.get(first)
    return where.start.line if where is not None else -1


def _class_defs(pf: ParsedFunction) -> dict:
    return {stmt.name.value: stmt for stmt in pf.parsed.module.body if isinstance(stmt, cst.ClassDef)}


def _own_members(node: cst.ClassDef) -> dict:
    out: dict = {}
    for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.FunctionDef):
            kinds = [_decorator_name(d) for d in stmt.decorators]
            kind = "method" if not kinds else "property" if kinds == ["property"] else "other"
            out[stmt.name.value] = (kind, stmt)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, cst.AnnAssign) else []
                for target in targets:
                    if isinstance(target, cst.Name):  # a class attribute (constant)
                        out.setdefault(target.value, ("constant", None))
    return out


def _code_of(member: Any) -> Any:
    """The code object of a live class member s2sgrad would inline (a function, a property's
    getter), else None."""
    function = member_code(member)
    return function.__code__ if function is not None else None


def live_class(pf: ParsedFunction, cls: type) -> Optional[ClassInfo]:
    """The class ``cls`` as s2sgrad reads it in ``pf``'s file (its bases too, in method
    resolution order), or None when it is not defined there."""
    if not isinstance(cls, type) or cls.__module__.split(".")[0] in _NOT_USER or \
            cls.__qualname__ != cls.__name__:  # a class defined in a function: not a def of the file's top
        return None
    defs = _class_defs(pf)
    members: dict = {}
    for klass in cls.__mro__[:-1]:  # object's members are not the user's
        node = defs.get(klass.__name__)
        if node is None or klass.__qualname__ != klass.__name__ or klass.__module__ != cls.__module__:
            for name in vars(klass):
                members.setdefault(name, ("other", None))
            continue
        own = _own_members(node)
        for name, live in vars(klass).items():
            kind, node_def = own.get(name, ("other", None))
            code = _code_of(live)
            if kind in ("method", "property") and (code is None or display_path(code.co_filename) != pf.unit.path
                                                  or code.co_firstlineno != _def_line(pf, node_def)):
                kind, node_def = "other", None  # replaced at run time: not the def read here
            elif kind in ("method", "property"):
                check_current(member_code(live), linecache.getlines(code.co_filename), pf.unit.path)
            members.setdefault(name, (kind, node_def))
    node = defs.get(cls.__name__)
    if node is None or cls.__module__ != pf.unit.module:
        return None
    found = ClassInfo(cls.__name__, members)
    dataclass_fields = getattr(cls, "__dataclass_fields__", None)
    init = members.get("__init__", ("other", None))
    if dataclass_fields is not None and "__init__" not in _own_members(node) and \
            "__post_init__" not in members and len(cls.__mro__) == 2:
        _dataclass_fields(found, node, dataclass_fields)
    elif init[0] == "method" and len(cls.__mro__) == 2:
        _init_fields(found, init[1])
    return found


def static_class(pf: ParsedFunction, name: str) -> Optional[ClassInfo]:
    """The class ``name`` defined at the top of ``pf``'s file, read without running it (no bases)."""
    node = _class_defs(pf).get(name)
    if node is None or any(not (isinstance(b.value, cst.Name) and b.value.value == "object")
                           for b in node.bases) or node.keywords:
        return None
    members = _own_members(node)
    found = ClassInfo(name, members)
    decorators = [_decorator_name(d) for d in node.decorators]
    if decorators == ["dataclass"] and "__init__" not in members and "__post_init__" not in members:
        _dataclass_fields(found, node, None)
    elif not decorators and members.get("__init__", ("", None))[0] == "method":
        _init_fields(found, members["__init__"][1])
    return found


def literal(node: Optional[cst.BaseExpression]) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
        isinstance(node.expression, (cst.Integer, cst.Float))


def _dataclass_fields(found: ClassInfo, node: cst.ClassDef, live_fields: Optional[dict]) -> None:
    """Note a dataclass's fields (annotated class attributes, literal defaults only)."""
    names, defaults = [], {}
    for stmt in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                if "ClassVar" in {n.value for n in name_nodes(small.annotation)}:
                    continue
                if small.value is not None and not literal(small.value):
                    return
                names.append(small.target.value)
                if small.value is not None:
                    defaults[small.target.value] = small.value
    if live_fields is not None and list(live_fields) != names:
        return
    found.fields, found.defaults = tuple(names), defaults


def _init_fields(found: ClassInfo, init: cst.FunctionDef) -> None:
    """Note the attributes an ``__init__`` stores, when all it does is store them (``self.a =
    expression of its parameters and attributes stored before``; a docstring, ``pass``)."""
    params = init.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None \
            or params.posonly_params or not params.params:
        return
    if any(p.default is not None and not literal(p.default) for p in (*params.params, *params.kwonly_params)):
        return
    me = params.params[0].name.value
    stored: list = []
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else init.body.body
    for index, stmt in enumerate(body):
        line = stmt if isinstance(stmt, cst.SimpleStatementLine) else None
        smalls = line.body if line is not None else [stmt]
        for small in smalls:
            if isinstance(small, cst.Pass) or index == 0 and isinstance(small, cst.Expr) and \
                    isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            if not (isinstance(small, (cst.Assign, cst.AnnAssign)) and
                    (len(small.targets) == 1 if isinstance(small, cst.Assign) else small.value is not None)):
                return
            target = small.targets[0].target if isinstance(small, cst.Assign) else small.target
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                    and target.value.value == me):
                return
            for read in attribute_reads(small.value, me):
                if read not in stored:
                    return
            if any(n.value == me for n in bare_names(small.value)):
                return
            if target.attr.value not in stored:
                stored.append(target.attr.value)
    found.fields, found.init = tuple(stored), init


def attribute_reads(node: cst.CSTNode, me: str) -> list:
    """The attributes ``me.<attr>`` read under ``node``."""
    out: list = []

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> None:
            if isinstance(attribute.value, cst.Name) and attribute.value.value == me:
                out.append(attribute.attr.value)

    node.visit(Reads())
    return out


def bare_names(node: cst.CSTNode) -> list:
    """The names read under ``node`` other than as the object of an attribute read."""
    out: list = []

    class Bare(cst.CSTVisitor):
        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            if isinstance(attribute.value, cst.Name):
                return False
            attribute.value.visit(self)
            return False

        def visit_Arg(self, arg: cst.Arg) -> bool:
            arg.value.visit(self)
            return False

        def visit_Name(self, name: cst.Name) -> None:
            out.append(name)

    node.visit(Bare())
    return out
