"""Lists grown and shrunk in place, O(1) a step where the copying code takes O(n).

``append_in_place``: a forward sweep's program items -> the same, with each ``lst_2 = lst + [v]``
(the lowering of ``lst.append(v)``, which keeps every version of the list intact) written
``lst.append(v)`` then ``lst_2 = lst``. The appends are given by the core form (each ``Stmt`` of
``list.append``: its target and the list it extends), never found by their text.

``pop_in_place``: a backward sweep's program items -> the same, where each ``rest, last =
split_last(g)`` (the runtime's adjoint of an append, which pops ``g``'s last item from ``g``
itself; rules/helpers/containers.py names it) is kept only where the sweep owns ``g``'s list;
elsewhere it is passed ``owned(g)`` (a copy), which keeps ``g`` intact as the rule's templates
did. The sweep owns the list where every value entering it is copied once by ``owned``, where
it is made.

In both, the names joined by the steps and by plain copies (``lst = lst_2``, a loop's carry) are
one list object when the steps work in place; a group is rewritten whole or not at all, and only
where:

- every name of the group is bound in the code (never a parameter, a residual or a global), by
  a step of the group, a copy of another name of the group, or where the list is made (forward:
  a list display; backward: any other value, copied there);
- no read of the list a step extends can follow that step before the name is bound again (it
  would see the longer list);
- every read of a name of the group is the step's own list, a copy inside the group, an element
  or length read (``lst[-1]``, ``len(lst)``; backward: also the value where the list is made
  again) before the step that replaces that name in the same block, or any read (a tape record,
  a residual, a call that may keep the list) that no step of the group can follow while the
  list is alive: after every step in program order and, inside a loop holding a step, only
  where that loop's own body makes the list anew each iteration.

Anything else keeps the copying code (never a different program)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst

from .groups import joined_groups
from ..program import ElseHeader, ForHeader, IfHeader, Nest, Simple, WhileHeader, name_reads
from ..rules.helpers.containers import OWNED, POP_LAST
from .fold import substitute_statement
from .inline import substitute

__all__ = ["append_in_place", "pop_in_place"]


@dataclass
class _Line:
    """One item of the program, where it is."""

    item: object
    position: int
    loops: tuple  # the enclosing loops' positions, outermost first
    block: int  # the serial of the block (tuple of items) holding it


@dataclass
class _Facts:
    lines: list = field(default_factory=list)
    steps: dict = field(default_factory=dict)  # step position -> (line, target, base, other nodes read)
    copies: dict = field(default_factory=dict)  # target -> [source] (plain ``a = b``)
    made: dict = field(default_factory=dict)  # target -> [line] where a list is made
    other: set = field(default_factory=set)  # names bound any other way
    reads: dict = field(default_factory=dict)  # name -> [line]
    bodies: dict = field(default_factory=dict)  # loop position -> the serial of its body
    blocks: int = 0
    code: tuple = ()  # the items walked
    final: set = field(default_factory=set)  # the names the sweep's return reads


# A step: (the step's target, the list it reads, the other nodes it reads), or None.
StepOf = Callable[[Simple], Optional[tuple]]


def _walk(items: tuple, facts: _Facts, step_of: StepOf, made: Callable, loops: tuple) -> None:
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
            _walk(item.body, facts, step_of, made, inner)
            continue
        line = _Line(item, len(facts.lines), loops, block)
        facts.lines.append(line)
        for name in item.reads:
            facts.reads.setdefault(name, []).append(line)
        step = step_of(item) if isinstance(item, Simple) else None
        if step is not None:
            facts.steps[line.position] = (line,) + step
            facts.other.update(item.binds - {step[0]})
            continue
        target = item.assigned if isinstance(item, Simple) else None
        if target is None:
            facts.other.update(item.binds)
        elif isinstance(item.node.value, cst.Name):
            facts.copies.setdefault(target, []).append(item.node.value.value)
        elif made(item.node.value):
            facts.made.setdefault(target, []).append(line)
        else:
            facts.other.add(target)


def _groups(facts: _Facts) -> list:
    """The sets of names joined by steps and copies that hold at least one step."""
    links = [(target, base) for _, target, base, _ in facts.steps.values()]
    links += [(target, source) for target, sources in facts.copies.items() for source in sources]
    return joined_groups(links, {step[1] for step in facts.steps.values()})


def _only_elements(node: cst.CSTNode, name: str) -> bool:
    """Whether every read of ``name`` in ``node``'s value is ``name[...]``'s list or ``len(name)``'s
    argument (nothing keeps the list itself)."""
    value = getattr(node, "value", None)
    if value is None:
        return False
    allowed, seen = set(), []

    class _Finder(cst.CSTVisitor):
        def visit_Subscript(self, sub: cst.Subscript) -> None:
            if isinstance(sub.value, cst.Name) and sub.value.value == name:
                allowed.add(id(sub.value))

        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name) and call.func.value == "len" and len(call.args) == 1 \
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == name:
                allowed.add(id(call.args[0].value))

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                seen.append(id(n))

    value.visit(_Finder())
    return bool(seen) and all(s in allowed for s in seen)


def _safe(group: set, facts: _Facts, params: frozenset, remade: bool) -> bool:
    """Whether the group's list may be changed in place (the module docstring's conditions);
    ``remade``: a line making the list may read the group (it is copied there)."""
    if group & params or group & facts.other:
        return False
    steps = [step for step in facts.steps.values() if step[1] in group]
    stepped = {step[1] for step in steps}
    if any(n not in stepped and n not in facts.copies and n not in facts.made for n in group):
        return False  # read but never bound here
    made = [line for n in group for line in facts.made.get(n, ())]
    last = max(step[0].position for step in steps)
    if any(_stale(facts.code, step[0].item, step[2], facts.final) for step in steps):
        return False
    for name in group:
        for line in facts.reads.get(name, ()):
            item = line.item
            step = next((s for s in steps if s[0] is line), None)
            if step is not None and step[2] == name:
                if any(name in name_reads(node) for node in step[3]):
                    return False  # ``lst.append(lst)``
                continue  # the step's own list
            target = item.assigned if isinstance(item, Simple) else None
            if target in group and name in facts.copies.get(target, ()):
                continue  # a copy inside the group
            local = isinstance(item, Simple) and (
                _only_elements(item.node, name) or (remade and target in group and target in facts.made))
            if local and (any(s[0].block == line.block and s[0].position > line.position and s[2] == name
                              for s in steps) or _before(line, [s[0] for s in steps])):
                continue  # before the step that replaces the name, or before every step
            if not _final(line, [s[0] for s in steps], made, last, facts.bodies):
                return False
    return True


def _stale(code: tuple, step: object, base: str, final: set) -> bool:
    """Whether a read of ``base`` (the list the step ``step`` extends) can follow the step on
    some path before ``base`` is bound again (``final``: the names the sweep's return reads): in
    place, it would see the longer list where the code reads the list as it was
    (forward-mode code's ``zeros_like(lst)`` after ``lst_2 = lst + [v]``), or extend it twice. Walks ``code``
    with one fact, whether the step ran since ``base`` was last bound: the arms of a branch
    join, a loop's body runs again with what its end leaves."""
    found = []

    def block(items: tuple, live: bool) -> bool:
        at = 0
        while at < len(items):
            item = items[at]
            if isinstance(item, Nest) and isinstance(item.header, IfHeader):
                arms = [item]
                while at + 1 < len(items) and isinstance(items[at + 1], Nest) and \
                        isinstance(items[at + 1].header, ElseHeader):
                    at += 1
                    arms.append(items[at])
                if live and base in item.header.reads:
                    found.append(item)
                outs = [block(arm.body, live) for arm in arms]
                live = any(outs) or (len(arms) == 1 and live)
            elif isinstance(item, Nest):
                if live and base in item.header.reads:
                    found.append(item)
                looped = isinstance(item.header, (ForHeader, WhileHeader))
                start = live and base not in item.header.binds
                out = block(item.body, start)
                if looped and out and not start:  # the next step of the loop starts after its end
                    out = block(item.body, True)
                live = (live or out) if looped else out
            else:
                if live and base in item.reads:
                    found.append(item)
                if item is step:
                    live = True
                if base in item.binds:
                    live = False
            at += 1
        return live

    if block(code, False) and base in final:
        return True
    return bool(found)


def _before(line: _Line, steps: list) -> bool:
    """Whether ``line`` runs before every step of the group, never after one."""
    return all(line.position < step.position and not set(line.loops) & set(step.loops)
               for step in steps)


def _final(line: _Line, steps: list, made: list, last: int, bodies: dict) -> bool:
    """Whether no step of the group can run after ``line`` on the list it reads: ``line`` comes
    after every step, and a loop holding both makes the list anew in its own body."""
    if line.position <= last:
        return False
    for step in steps:
        common = []
        for loop, other in zip(line.loops, step.loops):
            if loop != other:
                break
            common.append(loop)
        if common and not (made and all(m.loops == tuple(common) and m.block == bodies[common[-1]]
                                        for m in made)):
            return False
    return True


def _analysed(code: tuple, step_of: StepOf, made: Callable, params: frozenset, final_code,
              remade: bool) -> tuple:
    """``(facts, the step targets of the groups that may work in place, of the others)``."""
    facts = _Facts(code=code)
    _walk(code, facts, step_of, made, ())
    end = _Line(None, len(facts.lines), (), 0)
    for text in final_code:
        for name in name_reads(cst.parse_expression(text)):
            facts.reads.setdefault(name, []).append(end)
            facts.final.add(name)
    safe = set()
    for group in _groups(facts):
        if _safe(group, facts, params, remade):
            safe |= {p for p, step in facts.steps.items() if step[1] in group}
    return facts, safe, set(facts.steps) - safe


def _rewrite(items: tuple, at: dict, counter: list) -> tuple:
    """``items`` with the item at each position of ``at`` (numbered as ``_walk`` does) replaced
    by what ``at`` gives for it (a tuple of items)."""
    out: list = []
    for item in items:
        position = counter[0]
        counter[0] += 1
        if isinstance(item, Nest):
            out.append(Nest(item.header, _rewrite(item.body, at, counter)))
        elif position in at:
            out.extend(at[position](item))
        else:
            out.append(item)
    return tuple(out)


# ----- the forward sweep: appends ----------------------------------------------------------------

def append_in_place(forward: tuple, appends: dict, params: frozenset, final_code: tuple) -> tuple:
    """``forward`` (program items, folded) with the safe appends made in place. ``appends``: each
    core ``list.append`` target -> the list it extends; ``params``: the function's parameters;
    ``final_code``: the code read when the sweep returns (its value and residuals)."""
    if not appends:
        return forward

    def step_of(item: Simple) -> Optional[tuple]:
        target = item.assigned
        if target not in appends:
            return None
        value = item.node.value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) and \
                isinstance(value.left, cst.Name) and value.left.value == appends[target] and \
                isinstance(value.right, cst.List) and len(value.right.elements) == 1 and \
                isinstance(value.right.elements[0], cst.Element):
            return target, appends[target], (value.right.elements[0].value,)
        return None

    facts, safe, _ = _analysed(tuple(forward), step_of, lambda value: isinstance(value, cst.List),
                               params, final_code, remade=False)
    if not safe:
        return forward
    final = set()
    for text in final_code:
        final |= set(name_reads(cst.parse_expression(text)))
    names: dict = {}  # a group's name -> the one name the group is written with
    for group in _groups(facts):
        if not any(p in safe for p, step in facts.steps.items() if step[1] in group):
            continue
        kept = sorted(group & final)
        if len(kept) > 1:
            continue  # two names the sweep returns: keep the copies between them (rare)
        one = kept[0] if kept else min(facts.steps[p][2] for p in facts.steps if facts.steps[p][1] in group)
        names.update({name: one for name in group})
    return _renamed(tuple(forward), names, facts, [0]) if names else forward


def _renamed(items: tuple, names: dict, facts: _Facts, counter: list) -> tuple:
    """``items`` with each group of ``names`` written as one list grown in place: its appends
    ``lst.append(v)``, the copies between its names dropped, every other read or binding of one
    of them under the group's name."""
    mapping = {name: cst.Name(one) for name, one in names.items()}
    out: list = []
    for item in items:
        position = counter[0]
        counter[0] += 1
        if isinstance(item, Nest):
            out.append(Nest(_renamed_header(item.header, mapping), _renamed(item.body, names, facts, counter)))
            continue
        step = facts.steps.get(position)
        if step is not None and step[1] in names:
            call = cst.Call(cst.Attribute(cst.Name(names[step[1]]), cst.Name("append")), [cst.Arg(step[3][0])])
            out.append(Simple(cst.Expr(call)))
            continue
        target = item.assigned if isinstance(item, Simple) else None
        if target in names and isinstance(item.node.value, cst.Name) and item.node.value.value in names:
            continue  # the same list under another name of the group
        if isinstance(item, Simple) and set(item.reads) & set(names):
            item = Simple(substitute_statement(item.node, mapping))
        if target in names:
            item = Simple(item.node.with_changes(targets=[cst.AssignTarget(cst.Name(names[target]))]))
        out.append(item)
    return tuple(out)


def _renamed_header(header, mapping: dict):
    """A block header reading names of ``mapping`` reading their replacements."""
    if not set(header.reads) & set(mapping):
        return header
    if isinstance(header, ForHeader):
        return ForHeader(header.target, substitute(header.iter, mapping))
    return type(header)(substitute(header.test, mapping))


# ----- the backward sweep: the appends' adjoints -------------------------------------------------

def _is_helper(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
        isinstance(node.func.value, cst.Name) and node.func.value.value == "s2s" and \
        node.func.attr.value == name


def _split_step(item: Simple) -> Optional[tuple]:
    """``rest, last = split_last(g)`` -> ``(rest, g, ())``."""
    node = item.node
    if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
        return None
    target, value = node.targets[0].target, node.value
    if isinstance(target, cst.Tuple) and len(target.elements) == 2 and \
            all(isinstance(e.value, cst.Name) for e in target.elements) and \
            _is_helper(value, POP_LAST) and len(value.args) == 1 and \
            isinstance(value.args[0].value, cst.Name):
        return target.elements[0].value.value, value.args[0].value.value, ()
    return None


def _owned(node: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(OWNED)), [cst.Arg(node)])


def pop_in_place(backward: tuple, params: frozenset, final_code: tuple) -> tuple:
    """``backward`` (program items, folded) with each ``split_last`` of a list the sweep
    cannot show it owns passed a copy, and the lines making the lists it owns copying what they
    bind. ``params``: names bound before the items (residuals, the seed); ``final_code``: the
    code the sweep returns."""
    facts, safe, unsafe = _analysed(tuple(backward), _split_step, lambda value: True, params,
                                    final_code, remade=True)
    if not facts.steps:
        return backward
    at: dict = {}
    for position in unsafe:
        at[position] = lambda item: (Simple(item.node.with_changes(
            value=item.node.value.with_changes(args=[cst.Arg(_owned(item.node.value.args[0].value))]))),)
    owned = set()
    for position in safe:
        owned |= set(facts.steps[position][1:3])
    for group in _groups(facts):
        if group & owned:
            for name in group:
                for line in facts.made.get(name, ()):
                    if _is_helper(line.item.node.value, OWNED):
                        continue
                    at[line.position] = lambda item: (Simple(item.node.with_changes(
                        value=_owned(item.node.value))),)
    return _rewrite(tuple(backward), at, [0])
