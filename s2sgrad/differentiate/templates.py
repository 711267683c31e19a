"""Rule templates -> code: substitute the names of a parsed template with operand expressions."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..rules.table import parse_template

ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float,
         cst.Imaginary, cst.SimpleString, cst.Tuple, cst.List, cst.Dict)

# Binary operators that bind at least as tightly as `+` on their right-hand side.
_TIGHT = (cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power, cst.FloorDivide, cst.Modulo)


class _Substitute(cst.CSTTransformer):
    """Replaces mapped names; a replacement that is not an atom gets parentheses where it is the
    operand of an operator (but not where it is a call argument or a display element)."""

    def __init__(self, mapping: dict, droppable: frozenset = frozenset()) -> None:
        self.mapping = mapping
        self.inserted: list = []
        self.droppable = droppable
        self.dropped_nodes: list = []

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        new = self.mapping.get(original.value)
        if new is None:
            return updated
        self.inserted.append(new)
        if original.value in self.droppable:
            self.dropped_nodes.append(new)
        return new

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        """Leave out trailing runtime-helper arguments that are just the rule's defaults
        (``s2s.sum_vjp(g, x)`` rather than ``s2s.sum_vjp(g, x, None, False)``)."""
        if not m.matches(updated.func, m.Attribute(value=m.Name("s2s"))):
            return updated
        def dropped(arg: cst.Arg) -> bool:
            return any(arg.value is n for n in self.dropped_nodes)

        args = [a for a in updated.args if a.keyword is None or not dropped(a)]
        while args and args[-1].keyword is None and dropped(args[-1]):
            args.pop()
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=args)

    def _wrap(self, node):
        if any(node is n for n in self.inserted) and needs_parens(node):
            return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return node

    def leave_BinaryOperation(self, original, updated):
        return updated.with_changes(left=self._wrap(updated.left), right=self._wrap(updated.right))

    def leave_UnaryOperation(self, original, updated):
        return updated.with_changes(expression=self._wrap(updated.expression))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr, value=self._wrap(updated.value))

    def leave_Subscript(self, original, updated):
        """``g[1]`` where ``g`` stands for a display (the outputs' adjoints of a rule with several
        outputs, rules/table.py): that display's item itself."""
        value = updated.value
        if isinstance(value, cst.Tuple) and any(value is n for n in self.inserted) and \
                len(updated.slice) == 1 and isinstance(updated.slice[0].slice, cst.Index) and \
                isinstance(updated.slice[0].slice.value, cst.Integer):
            position = int(updated.slice[0].slice.value.value)
            if position < len(value.elements):
                item = value.elements[position].value
                self.inserted.append(item)
                return item
        return updated.with_changes(value=self._wrap(value))

    def leave_IfExp(self, original, updated):
        """``a if flag else b`` where the call passed a literal ``True`` or ``False`` for ``flag``
        (``compute_uv``): the branch it takes."""
        if m.matches(updated.test, m.Name("True") | m.Name("False")):
            chosen = updated.body if updated.test.value == "True" else updated.orelse
            self.inserted.append(chosen)
            return chosen
        return updated

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def needs_parens(node: cst.CSTNode, inside: str = "*") -> bool:
    """Whether ``node`` must be parenthesized as an operand (of ``+``, the right one of ``-``, or
    of a tighter operator)."""
    if node.lpar if hasattr(node, "lpar") else False:
        return False
    if isinstance(node, ATOMS):
        return False
    if isinstance(node, cst.UnaryOperation):
        return inside != "+"
    if isinstance(node, cst.BinaryOperation):
        if inside == "+":
            return not isinstance(node.operator, _TIGHT + (cst.Add,))
        if inside == "-":
            return not isinstance(node.operator, _TIGHT)
        return True
    return True


def instantiate(template: str, mapping: dict, defaulted: frozenset = frozenset()) -> cst.BaseExpression:
    """The template's expression with each mapped name replaced by its node (parenthesized as
    needed). Names in ``defaulted`` hold parameter defaults: trailing runtime-helper arguments
    made only of them are left out, so helpers must declare the same defaults as their rules."""
    return parse_template(template).visit(_Substitute(mapping, frozenset(defaulted)))
