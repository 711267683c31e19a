"""The scope of a function inlined where it is called (a local function, a module-level function
given one, a method of the user's class): the names its body binds and its returns (``_scope``),
its parameters and their defaults, literals and constant keys, and the refusal of one that reads
a global the caller binds (``check_reads_unbound``), and of a local function used other than by
being called (``check_other_uses``). Used by lower/closures.py and
lower/methods.py."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..read.names import name_nodes
from ..read.parse import ParsedFunction
from ..read.walk import findall


class _Scope(cst.CSTVisitor):
    """The names a block binds in its own scope (with repeats), and its ``return`` statements;
    nested functions, lambdas and comprehensions are scopes of their own (a def's name is bound)."""

    def __init__(self) -> None:
        super().__init__()
        self.bound: list = []  # (name, node binding it)
        self.returns: list = []

    def target(self, expr: cst.CSTNode, node: cst.CSTNode) -> None:
        if isinstance(expr, cst.Name):
            self.bound.append((expr.value, node))
        elif isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                self.target(element.value, node)
        elif isinstance(expr, cst.StarredElement):
            self.target(expr.value, node)

    def visit_FunctionDef(self, node) -> bool:
        self.bound.append((node.name.value, node))
        for default in _defaults(node.params).values():
            default.visit(self)  # evaluated where the def runs
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ListComp(self, node) -> bool:
        return False

    def visit_GeneratorExp(self, node) -> bool:
        return False

    def visit_SetComp(self, node) -> bool:
        return False

    def visit_DictComp(self, node) -> bool:
        return False

    def visit_AssignTarget(self, node) -> None:
        self.target(node.target, node)

    def visit_AugAssign(self, node) -> None:
        self.target(node.target, node)

    def visit_AnnAssign(self, node) -> None:
        self.target(node.target, node)

    def visit_For(self, node) -> None:
        self.target(node.target, node)

    def visit_AsName(self, node) -> None:
        self.target(node.name, node)

    def visit_NamedExpr(self, node) -> None:
        self.target(node.target, node)

    def visit_Return(self, node) -> None:
        self.returns.append(node)


def _scope(node: cst.CSTNode) -> _Scope:
    scope = _Scope()
    node.visit(scope)
    return scope


def _params(params: cst.Parameters) -> list:
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _defaults(params: cst.Parameters) -> dict:
    return {p.name.value: p.default for p in _params(params) if p.default is not None}


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
        isinstance(node.expression, (cst.Integer, cst.Float))


def _statements(suite: cst.BaseSuite) -> list:
    """A suite's statements, each small statement on a line of its own."""
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine([s]) for s in suite.body]
    out = []
    for line in suite.body:
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) > 1:
            out.extend(cst.SimpleStatementLine([s]) for s in line.body)
        else:
            out.append(line)
    return out


def _literal_key(node: cst.BaseExpression):
    """The value of an integer (negative too) or string literal, or None."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return None


def _constant_key(node: cst.BaseExpression):
    """For ``name[key]`` with ``key`` a literal: that key; None for any other expression."""
    if not isinstance(node, cst.Subscript) or not isinstance(node.value, cst.Name) or \
            len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return _literal_key(node.slice[0].slice.value)


def check_reads_unbound(pf: ParsedFunction, fn: cst.FunctionDef, own: set, caller_bound: set,
                        where: cst.CSTNode, subject: str) -> None:
    """Refuse ``fn``, a module-level def inlined at ``where`` into ``pf``, when its body reads a
    global (a name neither ``fn`` binds, nor its parameters, nor ``own``) that ``pf`` binds
    (``caller_bound``): inlined, it would read the caller's value. ``subject`` names ``fn`` in the
    message (``"`f`, given a local function here,"``)."""
    own = own | {name for name, _ in _scope(fn.body).bound} | {p.name.value for p in _params(fn.params)}
    for read in name_nodes(fn.body, reads_only=True):
        if read.value not in own and read.value in caller_bound:
            raise pf.error(where, f"{subject} reads the global `{read.value}`, a name this "
                           "function also binds: s2sgrad inlines it here and would read this "
                           "function's value", f"rename `{read.value}` in this function")


def check_other_uses(pf: ParsedFunction, body: cst.BaseSuite, defined: dict, tables: dict) -> None:
    """Refuse, at the first one, a use of a local function (or of a table of them) that was not
    inlined."""
    for node in name_nodes(body, reads_only=True):
        if node.value in tables:
            raise pf.error(node, f"`{node.value}` holds local functions and is used here other "
                           "than to call one of them by a constant key (iterated, indexed by a "
                           "computed value, passed on or returned): s2sgrad inlines each call of "
                           "a local function and must know which one it calls",
                           f"call its entries by constant keys (`{node.value}[0](z)`), or call "
                           "each function by its name")
    for call in findall(body, m.Call(func=m.Name())):
        name = call.func.value
        if name in defined:
            raise pf.error(call, f"this call of the local function `{name}` runs only sometimes "
                           "(in a conditional expression's branch, after `and`/`or`, in an `elif` "
                           "or `while` test, in a lambda) or before its definition: s2sgrad "
                           "cannot inline it there",
                           "call it in a statement of its own before, and use the name you assign")
    for node in name_nodes(body, reads_only=True):
        if node.value in defined:
            raise pf.error(node, f"the local function `{node.value}` is used as a value (returned, "
                           "stored, or passed to a function that is not local): s2sgrad supports "
                           "local functions called in the function that defines them",
                           "call it here, or define it at module level and pass it what it reads as "
                           "arguments")
