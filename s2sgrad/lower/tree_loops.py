"""Loops over tree nodes, unrolled: a function's body and a resolver of its tree parameters'
chains -> the body with each ``for`` loop whose items the structure decides written out, one
copy of its body per item.

A loop's items are decided where it runs over a list, tuple or namedtuple node of a tree
parameter the body never rebinds (``for W, b in layers``), a literal slice of one
(``layers[:-1]``), ``reversed``, ``enumerate`` and ``zip`` of such, or ``range`` of literal
integers and their lengths (``range(len(layers) - 1)``). Each copy starts with the target bound to its item, destructured
where the item's structure is known (``W = layers[0][0]`` and ``b = layers[0][1]``, which the
tree pass then reads as the leaves ``layers_0_0`` and ``layers_0_1``), and the body reads the
item itself where the loop's names are read: ``layers[i]`` with ``i`` an ``enumerate`` counter
becomes ``layers[0]``, so nested loops over what an item holds are unrolled in turn. The code
made for each layer then reads arrays of the shapes that layer has (specialize.py), not a list
entry of any shape.

A loop is kept as it is where its body leaves it early (``break``, ``continue``, ``return``,
``yield``), where its target is not names, and where it would be written out past
ITEMS_MOST items or STATEMENTS_MOST statements. A dict's items are not unrolled: a TreeDef keeps
its keys sorted, and a dict runs in the order its keys were inserted.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import libcst as cst

from ..read.parse import KeepingTransformer, ParsedFunction
from ..read.walk import walk
from .text import FieldNames

ITEMS_MOST = 32  # the most items a loop is written out for
STATEMENTS_MOST = 1024  # the most statements all copies of one loop's body hold

_SEQUENCES = ("list", "tuple")


class _Chain:
    """An item reached by indexing a tree node: ``expr()`` builds a fresh node for each use."""

    def __init__(self, base: cst.BaseExpression, index: int) -> None:
        self.base, self.index = base, index

    def expr(self) -> cst.BaseExpression:
        return cst.Subscript(self.base.deep_clone(),
                             [cst.SubscriptElement(cst.Index(_integer(self.index)))])


class _Node:
    """An item that is an expression reaching a tree node as written (``layers[-1]``)."""

    def __init__(self, expr: cst.BaseExpression) -> None:
        self.node = expr

    def expr(self) -> cst.BaseExpression:
        return self.node.deep_clone()


class _Literal:
    """An integer item (a counter)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def expr(self) -> cst.BaseExpression:
        return _integer(self.value)


class _Pack:
    """A tuple of items (``enumerate``'s and ``zip``'s)."""

    def __init__(self, items: Sequence) -> None:
        self.items = tuple(items)

    def expr(self) -> cst.BaseExpression:
        return cst.Tuple([cst.Element(item.expr()) for item in self.items])


def _integer(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return cst.Integer(str(value))


class Unroller:
    """Writes out the loops of a body whose items the structure decides. ``resolve(expr)`` is
    ``(tree, path)`` for a chain reaching a node of a tree parameter (its ``defs[path]``, a
    TreeDef), or None."""

    def __init__(self, pf: ParsedFunction, resolve: Callable, changed: Callable) -> None:
        self.pf, self.resolve, self.changed = pf, resolve, changed

    # ----- the items of a loop ------------------------------------------------------------------

    def _node(self, expr: cst.BaseExpression):
        """The list or tuple TreeDef ``expr`` reaches, or None."""
        found = self.resolve(expr)
        if found is None:
            return None
        tree, path = found
        treedef = tree.defs[path]
        if treedef.kind == "namedtuple" or (treedef.kind in _SEQUENCES and treedef.node_type is None):
            return treedef  # (a namedtuple runs through its fields in order, as a tuple does)
        return None

    def _builtin(self, call: cst.Call, name: str) -> bool:
        return isinstance(call.func, cst.Name) and call.func.value == name and \
            self.pf.qualified_name(call.func) == f"builtins.{name}"

    def integer(self, expr: cst.BaseExpression) -> Optional[int]:
        """The value of an integer expression of literals and lengths of tree nodes, or None."""
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            inner = self.integer(expr.expression)
            return None if inner is None else -inner
        if isinstance(expr, cst.BinaryOperation) and \
                isinstance(expr.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            left, right = self.integer(expr.left), self.integer(expr.right)
            if left is None or right is None:
                return None
            if isinstance(expr.operator, cst.Add):
                return left + right
            return left - right if isinstance(expr.operator, cst.Subtract) else left * right
        if isinstance(expr, cst.Call) and self._builtin(expr, "len") and len(expr.args) == 1 and \
                expr.args[0].keyword is None and not expr.args[0].star:
            treedef = self._node(expr.args[0].value)
            return None if treedef is None else len(treedef.children)
        return None

    def items(self, expr: cst.BaseExpression) -> Optional[list]:
        """The items a loop over ``expr`` runs through, or None where the structure does not
        decide them."""
        treedef = self._node(expr)
        if treedef is not None:
            return [_Chain(expr, k) for k in range(len(treedef.children))]
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Slice):
            treedef = self._node(expr.value)
            bounds = self._bounds(expr.slice[0].slice)
            if treedef is None or bounds is None:
                return None
            return [_Chain(expr.value, k) for k in range(*slice(*bounds).indices(len(treedef.children)))]
        if not isinstance(expr, cst.Call) or any(a.star or (a.keyword is not None) for a in expr.args):
            return None
        args = [a.value for a in expr.args]
        if self._builtin(expr, "reversed") and len(args) == 1:
            inner = self.items(args[0])
            return None if inner is None else inner[::-1]
        if self._builtin(expr, "enumerate") and len(args) in (1, 2):
            start = self.integer(args[1]) if len(args) == 2 else 0
            inner = self.items(args[0])
            if inner is None or start is None:
                return None
            return [_Pack((_Literal(start + k), item)) for k, item in enumerate(inner)]
        if self._builtin(expr, "zip") and args:
            inners = [self.items(a) for a in args]
            if any(inner is None for inner in inners):
                return None
            return [_Pack(group) for group in zip(*inners)]
        if self._builtin(expr, "range") and 1 <= len(args) <= 3:
            values = [self.integer(a) for a in args]
            if any(v is None for v in values) or (len(values) == 3 and values[2] == 0):
                return None
            return [_Literal(k) for k in range(*values)]
        return None

    def _bounds(self, found: cst.Slice) -> Optional[tuple]:
        bounds = []
        for part in (found.lower, found.upper, found.step):
            value = None if part is None else self.integer(part)
            if part is not None and value is None:
                return None
            bounds.append(value)
        return None if bounds[2] == 0 else tuple(bounds)

    # ----- binding an item to the target ----------------------------------------------------------

    def _bind(self, target: cst.BaseExpression, item, out: list, names: dict) -> bool:
        """Appends to ``out`` the assignments binding ``item`` to ``target`` and records in
        ``names`` the item each name stands for; False where the target is not names."""
        if isinstance(target, cst.Name):
            out.append(cst.Assign([cst.AssignTarget(cst.Name(target.value))], item.expr()))
            names[target.value] = item
            return True
        if not isinstance(target, (cst.Tuple, cst.List)) or \
                any(isinstance(e, cst.StarredElement) for e in target.elements):
            return False
        parts = self._parts(item, len(target.elements))
        if parts is None:  # unpacked as Python does it, from the item's value
            if not all(isinstance(e.value, cst.Name) for e in target.elements):
                return False
            out.append(cst.Assign([cst.AssignTarget(target.deep_clone())], item.expr()))
            for e in target.elements:
                names.pop(e.value.value, None)
            return True
        return all(self._bind(e.value, part, out, names) for e, part in zip(target.elements, parts))

    def _parts(self, item, count: int) -> Optional[tuple]:
        """``item``'s parts where its structure says it holds ``count`` of them, or None."""
        if isinstance(item, _Pack):
            return item.items if len(item.items) == count else None
        if isinstance(item, (_Chain, _Node)):
            treedef = self._node(item.expr())
            if treedef is not None and len(treedef.children) == count:
                return tuple(_Chain(item.expr(), k) for k in range(count))
        return None

    # ----- blocks -----------------------------------------------------------------------------

    def block(self, statements: Sequence[cst.BaseStatement]) -> list:
        """``statements`` with their loops whose items are decided written out."""
        out: list = []
        for stmt in statements:
            if isinstance(stmt, cst.For):
                copies = self._unrolled(stmt)
                if copies is not None:
                    out.extend(self.block(copies))
                    continue
            elif isinstance(stmt, cst.SimpleStatementLine):
                out.extend(self._unpacked(stmt))
                continue
            out.append(self._inside(stmt))
        return out

    def _unpacked(self, line: cst.SimpleStatementLine) -> list:
        """``W, b = layers[-1]`` (one statement on its line, a node whose length the structure
        says) as one assignment per name (``W = layers[-1][0]``...); else ``[line]``."""
        if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign) or \
                len(line.body[0].targets) != 1 or \
                not isinstance(line.body[0].targets[0].target, (cst.Tuple, cst.List)):
            return [line]
        stmt = line.body[0]
        assignments: list = []
        if self._parts(_Node(stmt.value), len(stmt.targets[0].target.elements)) is None or \
                not self._bind(stmt.targets[0].target, _Node(stmt.value), assignments, {}):
            return [line]
        out = []
        for assignment in assignments:
            new = cst.SimpleStatementLine([assignment])
            self._locate(new, stmt.value)
            self.pf.parsed.written_as[new] = self.pf.parsed.written_as[assignment] = \
                self.pf.parsed.written_as.get(line, line)
            out.append(new)
        return out

    def _locate(self, made: cst.CSTNode, at: cst.CSTNode) -> None:
        """Every node of ``made`` (written here) located at ``at``: errors point at the loop."""
        for node in walk(made):
            if self.pf.parsed.positions.get(node) is None:
                self.pf.parsed.adopt(node, at)
    def _inside(self, stmt: cst.BaseStatement) -> cst.BaseStatement:
        """``stmt`` with the loops in the blocks it holds written out."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or isinstance(stmt, cst.SimpleStatementLine):
            return stmt
        changes = {}
        for field in ("body", "orelse", "finalbody"):
            part = getattr(stmt, field, None)
            if isinstance(part, cst.IndentedBlock):
                changes[field] = part.with_changes(body=self.block(part.body))
            elif isinstance(part, (cst.Else, cst.Finally)) and isinstance(part.body, cst.IndentedBlock):
                changes[field] = part.with_changes(body=part.body.with_changes(body=self.block(part.body.body)))
            elif isinstance(part, cst.If):
                changes[field] = self._inside(part)
        if isinstance(stmt, cst.Try):
            changes["handlers"] = [h.with_changes(body=h.body.with_changes(body=self.block(h.body.body)))
                                   if isinstance(h.body, cst.IndentedBlock) else h for h in stmt.handlers]
        if not changes:
            return stmt
        new = stmt.with_changes(**changes)
        self.pf.parsed.adopt(new, stmt)
        if stmt in self.pf.parsed.written_as:
            self.pf.parsed.written_as[new] = self.pf.parsed.written_as[stmt]
        return new

    def _unrolled(self, loop: cst.For) -> Optional[list]:
        """The statements ``loop`` is written out as, or None where it is kept."""
        if loop.asynchronous is not None or not isinstance(loop.body, cst.IndentedBlock) or \
                _leaves_early(loop.body) or \
                (loop.orelse is not None and not isinstance(loop.orelse.body, cst.IndentedBlock)):
            return None
        items = self.items(loop.iter)
        if items is None or len(items) > ITEMS_MOST:
            return None
        size = sum(1 for node in walk(loop.body) if isinstance(node, cst.BaseSmallStatement))
        if size * len(items) > STATEMENTS_MOST:
            return None
        changed = self.changed(loop.body)
        closures = any(isinstance(n, (cst.Lambda, cst.FunctionDef, cst.ClassDef)) for n in walk(loop.body))
        out: list = []
        for k, item in enumerate(items):
            assignments: list = []
            names: dict = {}
            if not self._bind(loop.target, item, assignments, names):
                return None
            standing = {} if closures else {n: i for n, i in names.items() if n not in changed}
            for assignment in assignments:
                if k < len(items) - 1 and _bound_name(assignment) in standing:
                    continue  # the body reads the item itself; the last binding outlives the loop
                line = cst.SimpleStatementLine([assignment])
                self._locate(line, loop.iter)
                self.pf.parsed.written_as[line] = self.pf.parsed.written_as[assignment] = loop
                out.append(line)
            for stmt in loop.body.body:
                out.append(stmt.visit(_Copy(self.pf, standing)))
        if loop.orelse is not None:
            out.extend(loop.orelse.body.body)
        return out


def _bound_name(assignment: cst.Assign) -> Optional[str]:
    target = assignment.targets[0].target
    return target.value if isinstance(target, cst.Name) else None


def _leaves_early(body: cst.IndentedBlock) -> bool:
    """Whether ``body`` returns or yields, or breaks or continues its own loop."""
    stack = list(body.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Return, cst.Yield, cst.Await, cst.Break, cst.Continue)):
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # their returns are their own
        if isinstance(node, (cst.For, cst.While)):  # their breaks are their own
            stack.extend(_returns(node))
            continue
        stack.extend(node.children)
    return False


def _returns(node: cst.CSTNode) -> list:
    """The returns and yields under ``node`` (not inside functions it defines)."""
    found: list = []
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Return, cst.Yield, cst.Await)):
            found.append(current)
        elif not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(current.children)
    return found


def _literal_int(expr: cst.BaseExpression) -> Optional[int]:
    """The value of an integer literal, negated or not (no brackets), or None."""
    if isinstance(expr, cst.Integer) and not expr.lpar:
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and \
            not expr.lpar and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.evaluated_value)
    return None


class _Copy(FieldNames, KeepingTransformer):
    """A fresh copy of a statement of a loop's body (every node new, located as its original),
    each read of a name in ``standing`` replaced by the item it stands for; each statement quotes
    the user's (provenance comments)."""

    def __init__(self, pf: ParsedFunction, standing: dict) -> None:
        super().__init__(pf.parsed)
        self.standing = standing
        self.fields: set = set()

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        item = self.standing.get(original.value)
        if item is None or self.is_field(original):
            return updated
        made = item.expr()
        for node in walk(made):  # located at the name it stands in for
            self.parsed.adopt(node, original)
        return made

    def leave_BinaryOperation(self, original: cst.BinaryOperation,
                              updated: cst.BinaryOperation) -> cst.BaseExpression:
        """Sums, differences and products of integer literals folded (``layers[i + 1]`` with
        ``i`` a counter: ``layers[1]``, which the tree pass reads as a leaf)."""
        left, right = _literal_int(updated.left), _literal_int(updated.right)
        if left is None or right is None or \
                not isinstance(updated.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            return updated
        if isinstance(updated.operator, cst.Add):
            return _integer(left + right)
        return _integer(left - right if isinstance(updated.operator, cst.Subtract) else left * right)

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, (cst.SimpleStatementLine, cst.BaseSmallStatement)):
            self.parsed.written_as[result] = self.parsed.written_as.get(original_node, original_node)
        return result


__all__ = ["ITEMS_MOST", "STATEMENTS_MOST", "Unroller"]
