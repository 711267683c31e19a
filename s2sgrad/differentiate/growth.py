"""Lists grown in place: a forward sweep's program items -> the same, with each ``lst_2 = lst + [v]``
(the lowering of ``lst.append(v)``, which keeps every version of the list intact at O(n) a step)
written ``lst.append(v)`` then ``lst_2 = lst`` (O(1)) where no version the append replaces is
observed afterwards.

The appends are given by the core form (each ``Stmt`` of ``list.append``: its target and the list
it extends), never found by their text. The names joined by appends and plain copies
(``lst = lst_2``, a loop's carry; ``prev = lst``) are one list object when appends work in place;
the rewrite is made for all of them or none, and only where:

- every such name is bound by a list display (``[]``: made here, never an argument, a global or
  a value a call returned), an append of the group or a copy of another name of the group;
- every read of a name of the group is the append's own list, a copy inside the group, an
  element or length read (``lst[-1]``, ``len(lst)``: nothing keeps the list) before the append
  that replaces that name in the same block, or any read (a tape record, a residual, a call that
  may keep it) that no append of the group can follow while the list is alive: after every
  append in program order and, inside a loop holding an append, only where that loop's own body
  makes the list anew each iteration.

Anything else keeps the copying code (never a different program)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..program import Nest, Simple, WhileHeader, ForHeader, name_reads

__all__ = ["append_in_place"]


@dataclass
class _Line:
    """One item of the program, where it is."""

    item: object
    position: int
    loops: tuple  # the enclosing loop Nests' ids, outermost first
    block: int  # the id of the block (tuple of items) holding it


@dataclass
class _Facts:
    lines: list = field(default_factory=list)
    appends: dict = field(default_factory=dict)  # target -> (line, base, item node)
    copies: dict = field(default_factory=dict)  # target -> [source] (plain ``a = b``)
    made: dict = field(default_factory=dict)  # target -> [line] (a list display)
    other: set = field(default_factory=set)  # names bound any other way
    reads: dict = field(default_factory=dict)  # name -> [line]
    bodies: dict = field(default_factory=dict)  # loop serial -> the serial of its body
    blocks: int = 0


def _append_parts(item, target: str, base: str):
    """The item node ``v`` of ``target = base + [v]``, or None where the line is not that."""
    node = item.node
    value = node.value
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)):
        return None
    left, right = value.left, value.right
    if not (isinstance(left, cst.Name) and left.value == base and isinstance(right, cst.List)
            and len(right.elements) == 1 and isinstance(right.elements[0], cst.Element)):
        return None
    return right.elements[0].value


def _walk(items: tuple, facts: _Facts, appends: dict, loops: tuple) -> None:
    """Number the items in program order (a Nest before its body) and collect their facts."""
    facts.blocks += 1
    block = facts.blocks
    for item in items:
        if isinstance(item, Nest):
            inner = loops
            if isinstance(item.header, (ForHeader, WhileHeader)):
                inner = loops + (len(facts.lines),)
                facts.bodies[inner[-1]] = facts.blocks + 1
            line = _Line(item, len(facts.lines), inner, block)
            facts.lines.append(line)
            for name in item.header.reads:
                facts.reads.setdefault(name, []).append(line)
            facts.other.update(item.binds)
            _walk(item.body, facts, appends, inner)
            continue
        line = _Line(item, len(facts.lines), loops, block)
        facts.lines.append(line)
        for name in item.reads:
            facts.reads.setdefault(name, []).append(line)
        target = item.assigned if isinstance(item, Simple) else None
        if target is None:
            facts.other.update(item.binds)
            continue
        value = item.node.value
        grown = _append_parts(item, target, appends[target]) if target in appends else None
        if grown is not None:
            facts.appends[target] = (line, appends[target], grown)
        elif isinstance(value, cst.Name):
            facts.copies.setdefault(target, []).append(value.value)
        elif isinstance(value, cst.List):
            facts.made.setdefault(target, []).append(line)
        else:
            facts.other.add(target)


def _groups(facts: _Facts) -> list:
    """The sets of names joined by appends and copies that hold at least one append."""
    parent: dict = {}

    def find(a):
        parent.setdefault(a, a)
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def join(a, b):
        parent[find(a)] = find(b)

    for target, (_, base, _) in facts.appends.items():
        join(target, base)
    for target, sources in facts.copies.items():
        for source in sources:
            join(target, source)
    members: dict = {}
    for name in list(parent):
        members.setdefault(find(name), set()).add(name)
    return [group for group in members.values() if any(n in facts.appends for n in group)]


def _element_read(node: cst.CSTNode, name: str) -> bool:
    """Whether every read of ``name`` in ``node`` is ``name[...]``'s list or ``len(name)``'s
    argument (nothing keeps the list itself)."""
    allowed: set = set()

    class _Finder(cst.CSTVisitor):
        def visit_Subscript(self, sub: cst.Subscript) -> None:
            if isinstance(sub.value, cst.Name) and sub.value.value == name:
                allowed.add(id(sub.value))

        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name) and call.func.value == "len" and \
                    len(call.args) == 1 and isinstance(call.args[0].value, cst.Name) and \
                    call.args[0].value.value == name:
                allowed.add(id(call.args[0].value))

    node.visit(_Finder())
    seen: list = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                seen.append(id(n))

    value = node.value if isinstance(node, (cst.Assign, cst.Expr)) else node
    if value is None:
        return False
    value.visit(_Names())
    return bool(seen) and all(s in allowed for s in seen)


def _safe(group: set, facts: _Facts, params: frozenset, final_reads: set) -> bool:
    if group & params or group & facts.other:
        return False
    if any(name not in facts.appends and name not in facts.copies and name not in facts.made
           for name in group):
        return False  # read but never bound here (a global)
    appended = [facts.appends[n][0] for n in group if n in facts.appends]
    made = [line for n in group for line in facts.made.get(n, ())]
    last = max(line.position for line in appended)
    for name in group:
        for line in facts.reads.get(name, ()):
            item = line.item
            target = item.assigned if isinstance(item, Simple) else None
            if target in group and target in facts.appends and facts.appends[target][1] == name:
                if name in name_reads(facts.appends[target][2]):
                    return False  # ``lst.append(lst)``
                continue  # the append's own list
            if target in group and target in facts.copies and name in facts.copies[target]:
                continue  # a copy inside the group
            if isinstance(item, Simple) and _element_read(item.node, name) and any(
                    a.block == line.block and a.position > line.position and base == name
                    for a, base, _ in (facts.appends[n] for n in group if n in facts.appends)):
                continue  # an element or the length, before the append that replaces the name
            if not _final(line, appended, made, last, facts.bodies):
                return False
    return True


def _final(line: _Line, appended: list, made: list, last: int, bodies: dict) -> bool:
    """Whether no append of the group can run after ``line`` on the list it reads: ``line``
    comes after every append, and a loop holding both makes the list anew in its own body."""
    if line.position <= last:
        return False
    for append in appended:
        common = []
        for loop, other in zip(line.loops, append.loops):
            if loop != other:
                break
            common.append(loop)
        if common and not (made and all(m.loops == tuple(common) and m.block == bodies[common[-1]]
                                        for m in made)):
            return False
    return True


def append_in_place(forward: tuple, appends: dict, params: frozenset, final_code: tuple) -> tuple:
    """``forward`` (program items, folded) with the safe appends made in place. ``appends``: each
    core ``list.append`` target -> the list it extends; ``params``: the function's parameters;
    ``final_code``: the code read when the sweep returns (its value and residuals)."""
    if not appends:
        return forward
    facts = _Facts()
    _walk(tuple(forward), facts, appends, ())
    final_reads = set()
    for code in final_code:
        final_reads |= set(name_reads(cst.parse_expression(code)))
    end = _Line(None, len(facts.lines), (), 0)
    for name in final_reads:
        facts.reads.setdefault(name, []).append(end)
    chosen = set()
    for group in _groups(facts):
        if _safe(group, facts, params, final_reads):
            chosen |= {n for n in group if n in facts.appends}
    if not chosen:
        return forward
    at = {facts.appends[n][0].position: n for n in chosen}
    return _rewrite(tuple(forward), at, facts, [0])


def _rewrite(items: tuple, lines: dict, facts: _Facts, counter: list) -> tuple:
    """``items`` with the append at each position of ``lines`` (numbered as ``_walk`` does)
    written in place."""
    out: list = []
    for item in items:
        position = counter[0]
        counter[0] += 1
        if isinstance(item, Nest):
            out.append(Nest(item.header, _rewrite(item.body, lines, facts, counter)))
        elif position in lines:
            target = lines[position]
            _, base, grown = facts.appends[target]
            call = cst.Call(cst.Attribute(cst.Name(base), cst.Name("append")), [cst.Arg(grown)])
            out.append(Simple(cst.Expr(call)))
            out.append(Simple(cst.Assign([cst.AssignTarget(cst.Name(target))], cst.Name(base))))
        else:
            out.append(item)
    return tuple(out)
