"""Index writes and their adjoints in place, O(size of the write) a step where the copying code
takes O(array).

``write_in_place``: a sweep's program items -> the same, with each ``x_2 = setitem(x, index,
value)`` (the lowering of ``x[index] = value``, and the adjoint of such a write, ``g_2 =
setitem(g, index, 0.0)``: both keep every version of ``x`` intact) written ``x_2 =
setitem_into(x, index, value)`` (into ``x`` itself), and each ``g_2 = g +
getitem_vjp(h, x, index)`` (an adjoint plus a read's, zeros with ``h`` at ``index``) written
``g_2 = getitem_add(g, h, x, index)`` (``h`` added into ``g[index]``), where nothing reads
the old values afterwards. Reverse mode reads the written value's adjoint before it zeroes that
part (reverse.setitem_backward), so the zeroing can be in place.

The names joined by those steps and by plain copies (``x = x_2``, a loop's carry, a helper that
may hand back its argument: ``unbroadcast``) are one array when the steps work in place (a group);
a group works in place only where:

- every name of the group is bound in the code (never a parameter, a residual or the seed), by a
  step, a copy of another name of the group, or a line making a new value (copied there, by
  ``owned_array``, unless the line certainly makes a new object: an operation's result, a call
  the rule table's ``FRESH`` names);
- at each step, no name that may hold the array (a name of the group, a view or a holder of one:
  a list, a tape, a tuple, a call's result) is read after the step, on any path through the
  sweep's loops and branches, before it is bound again, but the step's own target; a read only of
  its type, dtype or shape (``np.shape(x)``, ``template(x)``, the rule table's
  ``SHAPE_READS``) reads nothing a write changes.

Anything else keeps the copying code (never a different program). Where every name of a group
certainly holds a numpy array (``Plain``, plain_writes.py: what the builder knows of the names, from code made
for a call's shapes) and the index is basic, a step is plain numpy, ``u[1:-1] = v`` and
``u_bar[:-2] += h``: the same writes as the helpers' fast paths, without their checks.
``shape_only_records`` names the values a backward loop reads only for their shapes, which the
forward sweep's tape records as templates (O(1) memory a step, and no read of the array a later
write changes); ``drop_unread_records`` those it no longer reads at all, which it records no
more."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst

from .groups import joined_groups
from .plain_writes import Plain, plain_lines
from ..program import ElseHeader, ForHeader, IfHeader, Nest, Restore, Simple, Verbatim, WhileHeader
from ..read.names import name_nodes
from ..read.walk import children
from ..rules.helpers.inplace import FRESH_METHODS, GETITEM_ADD, GETITEM_VJP, OWNED_ARRAY, PASSTHROUGH, \
    SETITEM, SETITEM_INTO, SHAPE_ATTRIBUTES, SHAPE_READS, makes_new_array

__all__ = ["drop_unread_records", "shape_only_reads", "shape_only_records", "write_in_place"]


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    """``np.shape`` for the node of ``np.shape``, ``len`` for ``len``; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def _helper_call(node, name: str) -> bool:
    return isinstance(node, cst.Call) and _dotted(node.func) == f"s2s.{name}"


def _shape_positions(node: cst.CSTNode) -> set:
    """The ids of the Name nodes under ``node`` read only for their type, dtype or shape."""
    found: set = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            positions = SHAPE_READS.get(_dotted(current.func) or "", ())
            for i, arg in enumerate(current.args):
                if i not in positions or arg.keyword is not None or arg.star != "":
                    continue
                if isinstance(arg.value, cst.Name):
                    found.add(id(arg.value))
                elif isinstance(arg.value, (cst.List, cst.Tuple)):  # each item's shape
                    found.update(id(e.value) for e in arg.value.elements
                                 if isinstance(e, cst.Element) and isinstance(e.value, cst.Name))
        elif isinstance(current, cst.Attribute) and isinstance(current.value, cst.Name) and \
                current.attr.value in SHAPE_ATTRIBUTES:
            found.add(id(current.value))
        stack.extend(children(current))
    return found


def _value_reads(node: Optional[cst.CSTNode]) -> set:
    """The names ``node`` reads for their values (not the reads of a type, dtype or shape only)."""
    if node is None:
        return set()
    shape = _shape_positions(node)
    return {n.value for n in name_nodes(node, reads_only=True) if id(n) not in shape}


# ----- the control-flow graph of a sweep --------------------------------------------------------

@dataclass(eq=False)
class _Node:
    item: object  # a Simple, Restore or Verbatim; a Nest (its header); None at the sweep's end
    reads: set  # names read for their values
    binds: frozenset
    succ: list = field(default_factory=list)
    loop_head: bool = False  # binds only on the edge into its body: a loop may run zero times


def _item_reads(item) -> set:
    if isinstance(item, Simple):
        node = item.node
        if isinstance(node, cst.Assign):
            out = _value_reads(node.value)
            for target in node.targets:
                if not isinstance(target.target, (cst.Name, cst.Tuple, cst.List)):
                    out |= _value_reads(target.target)
            return out
        if isinstance(node, cst.AugAssign):
            return _value_reads(node.target) | _value_reads(node.value)
        if isinstance(node, (cst.Expr, cst.Return)):
            return _value_reads(node.value)
        return set()
    if isinstance(item, Restore):
        return {item.saved}
    if isinstance(item, Verbatim):
        return set(item.reads)
    header = item.header
    if isinstance(header, ForHeader):
        return _value_reads(header.iter)
    if isinstance(header, (IfHeader, WhileHeader)):
        return _value_reads(header.test)
    return set()


def _graph(items: tuple, after: _Node, nodes: list) -> _Node:
    """The nodes of ``items`` (appended to ``nodes`` in program order), each linked to what may
    run next; ``after`` runs after the last. Returns the first node (``after`` when empty)."""
    built: list = []  # (item, the ``else`` block after an ``if``, or None)
    for item in items:
        if isinstance(item, Nest) and isinstance(item.header, ElseHeader):
            built[-1] = (built[-1][0], item)  # the ``if`` before it takes it
            continue
        built.append((item, None))
    entry = after
    staged: list = []
    for item, orelse in reversed(built):
        if isinstance(item, Nest) and isinstance(item.header, (ForHeader, WhileHeader)):
            head = _Node(item, _item_reads(item), item.header.binds, loop_head=True)
            body_nodes: list = []
            head.succ = [_graph(item.body, head, body_nodes), entry]
            staged.append([head] + body_nodes)
            entry = head
        elif isinstance(item, Nest) and isinstance(item.header, IfHeader):
            head = _Node(item, _item_reads(item), frozenset())
            then_nodes: list = []
            else_nodes: list = []
            head.succ = [_graph(item.body, entry, then_nodes),
                         _graph(orelse.body, entry, else_nodes) if orelse is not None else entry]
            staged.append([head] + then_nodes + else_nodes)
            entry = head
        elif isinstance(item, (Simple, Restore, Verbatim)):
            node = _Node(item, _item_reads(item), frozenset(item.binds))
            node.succ = [entry]
            staged.append([node])
            entry = node
    for group in reversed(staged):
        nodes.extend(group)
    return entry


def _live_after(node: _Node, name: str) -> bool:
    """Whether a path from ``node`` reads ``name``'s value before binding it again."""
    seen: set = set()
    stack = list(node.succ)
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if name in current.reads:
            return True
        if name in current.binds:
            if current.loop_head:  # the way out of the loop binds nothing (zero trips)
                stack.append(current.succ[-1])
            continue
        stack.extend(current.succ)
    return False


def shape_only_records(backward: tuple, final_code: tuple) -> dict:
    """Of each backward loop over a tape (``for a, b in reversed(loop1_tape):``), the names its
    header binds whose values no code reads before binding them again (only their type, dtype or
    shape): tape name -> frozenset. The forward sweep records a template of those."""
    end = _Node(None, set().union(*(_value_reads(cst.parse_expression(t)) for t in final_code)),
                frozenset())
    nodes: list = []
    _graph(backward, end, nodes)
    out: dict = {}
    for node in nodes:
        item = node.item
        if not (isinstance(item, Nest) and isinstance(item.header, ForHeader)):
            continue
        it = item.header.iter
        if not (isinstance(it, cst.Call) and _dotted(it.func) == "reversed" and len(it.args) == 1
                and isinstance(it.args[0].value, cst.Name)):
            continue
        out[it.args[0].value.value] = frozenset(n for n in node.binds if not _live_after(node, n))
    return out


def shape_only_reads(backward: tuple, final_code: tuple, names) -> frozenset:
    """Of ``names`` (values the sweep is handed), those no path of ``backward`` reads the value of
    before binding them again (only their type, dtype or shape): the forward sweep records a
    template of each."""
    end = _Node(None, set().union(*(_value_reads(cst.parse_expression(t)) for t in final_code)),
                frozenset())
    nodes: list = []
    start = _Node(None, set(), frozenset(), succ=[_graph(backward, end, nodes)])
    return frozenset(name for name in names if not _live_after(start, name))


def _all_reads(items: tuple) -> set:
    """Every name ``items`` read, for a value, a shape or anything else (nested blocks too)."""
    out: set = set()
    for item in items:
        if isinstance(item, Nest):
            out |= set(item.header.reads) | _all_reads(item.body)
        elif isinstance(item, Simple):
            out |= set(item.reads)
        elif isinstance(item, Restore):
            out.add(item.saved)
        elif isinstance(item, Verbatim):
            out |= set(item.reads)
    return out


def drop_unread_records(backward: tuple) -> tuple:
    """``(backward, {tape: names})``: of each backward loop over a tape at the sweep's top level
    (``for a, b in reversed(loop1_tape):``), the names its header binds that nothing reads, not
    its body and no line after it (an index write made plain reads no template of the array),
    dropped from the header, and by tape, for the forward sweep to record no more (where every
    name goes, the header keeps the first, bound to the None the tape then holds a step)."""
    out: list = []
    dropped: dict = {}
    items = tuple(backward)
    for at, item in enumerate(items):
        header = item.header if isinstance(item, Nest) else None
        it = header.iter if isinstance(header, ForHeader) else None
        if not (isinstance(it, cst.Call) and _dotted(it.func) == "reversed" and len(it.args) == 1
                and isinstance(it.args[0].value, cst.Name) and
                isinstance(header.target, (cst.Tuple, cst.Name))):
            out.append(item)
            continue
        elements = header.target.elements if isinstance(header.target, cst.Tuple) else \
            [cst.Element(header.target)]
        names = [e.value.value for e in elements if isinstance(e.value, cst.Name)]
        if len(names) != len(elements):
            out.append(item)
            continue
        read = _all_reads(item.body) | _all_reads(items[at + 1:])
        unread = [n for n in names if n not in read]
        if not unread:
            out.append(item)
            continue
        kept = [n for n in names if n not in unread] or names[:1]
        target = cst.Name(kept[0]) if len(kept) == 1 else \
            cst.Tuple([cst.Element(cst.Name(n)) for n in kept], lpar=[], rpar=[])
        out.append(Nest(ForHeader(target, it), item.body))
        dropped[it.args[0].value.value] = frozenset(unread)
    return tuple(out), dropped


# ----- groups -----------------------------------------------------------------------------------

# A step: (its target, the name it writes into), or None.
StepOf = Callable[[Simple], Optional[tuple]]


def _fresh(value: cst.BaseExpression) -> bool:
    """Whether ``value`` certainly makes an object nothing else holds."""
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return True
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Attribute) and value.func.attr.value in FRESH_METHODS and not value.args:
        return True
    return makes_new_array(_dotted(value.func) or "") and not any(a.keyword and a.keyword.value == "out"
                                                                 for a in value.args)


def _copied_from(value: cst.BaseExpression) -> Optional[str]:
    """The name ``value`` is, or may be (a helper handing back its first argument), else None."""
    if isinstance(value, cst.Name):
        return value.value
    if isinstance(value, cst.Call) and _dotted(value.func) in PASSTHROUGH and value.args and \
            isinstance(value.args[0].value, cst.Name) and value.args[0].keyword is None:
        return value.args[0].value.value
    return None


def _keeps_items(value: cst.BaseExpression, containers: set, holders: set,
                 arrays: frozenset = frozenset()) -> Optional[bool]:
    """For ``value`` making a new object (arithmetic, a call that makes a new array): whether
    it may hold the items of a name of ``containers`` (``+`` and ``*`` of lists, a copy of a
    list) or of an expression reading ``holders``; it shares no memory with its operands. None
    where ``value`` may be (a view of) an operand. ``arrays``: names certainly holding numpy
    arrays, a part of which (``g[1:-1]``) holds no items."""
    if isinstance(value, cst.Comparison):
        return False
    if isinstance(value, cst.UnaryOperation):
        return _keeps_items(value.expression, containers, holders, arrays) or False
    if isinstance(value, cst.Call) and _fresh(value):  # a new array; a list's items kept
        operands = [a.value for a in value.args]
        if isinstance(value.func, cst.Attribute) and value.func.attr.value in FRESH_METHODS and not value.args:
            operands.append(value.func.value)  # ``xs.copy()``
        operands = [op for op in operands if not (isinstance(op, cst.Subscript) and
                                                  isinstance(op.value, cst.Name) and op.value.value in arrays)]
        return any(_value_reads(op) & containers or
                   (not isinstance(op, cst.Name) and _value_reads(op) & holders) for op in operands)
    if not isinstance(value, cst.BinaryOperation):
        return None
    for side in (value.left, value.right):
        if isinstance(side, cst.Name) and side.value in containers:
            return True
        if isinstance(side, (cst.List, cst.Tuple, cst.Set, cst.Dict)) and _value_reads(side) & holders:
            return True
        if isinstance(side, (cst.BinaryOperation, cst.UnaryOperation)) and \
                _keeps_items(side, containers, holders, arrays):
            return True
    return False


@dataclass
class _Facts:
    nodes: list
    steps: dict  # id(node) -> (node, target, base)
    copies: dict  # target -> {source}
    made: dict  # name -> [node] binding a new value
    other: set  # names bound any other way
    arrays: frozenset = frozenset()  # names certainly holding numpy arrays (Plain.arrays)


def _facts(code: tuple, step_of: StepOf, final_code: tuple, arrays: frozenset = frozenset(),
           params: frozenset = frozenset()) -> _Facts:
    """What each line of ``code`` does to the names it binds: a step, a copy of a name bound here
    (a group's versions joined), a new value (a copy of one of ``params``, bound before the
    items, is one: copied where it is bound when its group works in place), or anything else."""
    end = _Node(None, set().union(*(_value_reads(cst.parse_expression(t)) for t in final_code)),
                frozenset())
    nodes: list = []
    _graph(code, end, nodes)
    nodes.append(end)
    facts = _Facts(nodes, {}, {}, {}, set(), arrays)
    for node in nodes:
        item = node.item
        step = step_of(item) if isinstance(item, Simple) else None
        if step is not None:
            facts.steps[id(node)] = (node,) + step
            facts.other.update(node.binds - {step[0]})
            continue
        target = item.assigned if isinstance(item, Simple) else None
        if target is None:
            facts.other.update(node.binds)
        elif _copied_from(item.node.value) not in (None, *params):
            facts.copies.setdefault(target, set()).add(_copied_from(item.node.value))
        else:
            facts.made.setdefault(target, []).append(node)
    return facts


def _groups(facts: _Facts) -> list:
    """The sets of names joined by steps and copies that hold at least one step."""
    links = [(target, base) for _, target, base in facts.steps.values()]
    links += [(target, source) for target, sources in facts.copies.items() for source in sources]
    return joined_groups(links, {step[2] for step in facts.steps.values()})


def _holders(group: set, facts: _Facts, copied: frozenset = frozenset()) -> set:
    """The names that may hold the group's array: its names, the names that may share its
    memory (a view, a copy of a name, a call's result) and those that may hold it as an item (a
    list or tuple, a tape, what a call may keep it in). ``copied``: the nodes of lines whose
    value is copied where it is made (they hold nothing)."""
    views, containers = set(group), set()
    changed = True
    while changed:
        changed = False
        held = views | containers
        for node in facts.nodes:
            step = facts.steps.get(id(node))
            if (step is not None and step[2] in group) or id(node) in copied or not node.reads & held:
                continue  # the group's own steps write values into it, keeping none
            item = node.item
            new_views: set = set()
            new_containers: set = set()
            if isinstance(item, Simple) and item.assigned is not None:
                target, value = item.assigned, item.node.value
                if target in group and _copied_from(value) is not None:
                    continue  # a copy inside the group
                keeps = _keeps_items(value, containers, held, facts.arrays)
                if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and \
                        value.value.value not in containers:
                    new_views = {target}  # a part of an array: an array, holding no items
                elif keeps is None:
                    new_views = new_containers = {target}
                elif keeps:
                    new_containers = {target}
            elif isinstance(item, Nest):
                new_views = new_containers = set(node.binds)
            elif item is not None:
                new_views = new_containers = set(node.binds) | node.reads  # a call may keep it anywhere
            if new_views - views or new_containers - containers:
                views |= new_views
                containers |= new_containers
                changed = True
    return views | containers


def _safe(group: set, facts: _Facts, params: frozenset, copied: frozenset = frozenset()) -> tuple:
    """``(whether the group may work in place, the names read after one of its steps that may
    hold its array)``; ``copied`` as for ``_holders``."""
    if group & params or group & facts.other:
        return False, set()
    steps = [step for step in facts.steps.values() if step[2] in group]
    stepped = {step[1] for step in steps} | {step[2] for step in steps}
    if any(n not in stepped and n not in facts.copies and n not in facts.made for n in group):
        return False, set()  # read but never bound here
    held = _holders(group, facts, copied)
    live = {name for node, _, _ in steps for name in held - node.binds if _live_after(node, name)}
    return not live, live


def _views_read_later(group: set, facts: _Facts, live: set) -> frozenset:
    """The nodes of lines binding a name of ``live`` to a part of the group's array (``v =
    x[1:-1]``, a view): copied where they are made (O(the part)), the writes after them leave
    what they hold as it was."""
    out = set()
    for name in live:
        for node in facts.made.get(name, ()):
            value = node.item.node.value
            if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and \
                    value.value.value in group:
                out.add(id(node))
    return frozenset(out)


def _rewrite(items: tuple, at: dict, nodes: iter) -> tuple:
    """``items`` with each item whose node (numbered as ``_graph`` numbers them) is a key of ``at``
    replaced by what ``at`` gives for it."""
    out: list = []
    for item in items:
        if isinstance(item, Nest):
            if not isinstance(item.header, ElseHeader):
                next(nodes)
            out.append(Nest(item.header, _rewrite(item.body, at, nodes)))
        elif isinstance(item, (Simple, Restore, Verbatim)):
            node = next(nodes)
            replaced = at[id(node)](item) if id(node) in at else item
            out.extend(replaced if isinstance(replaced, tuple) else (replaced,))
        else:
            out.append(item)
    return tuple(out)


def _call(name: str, arg: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(name)), [cst.Arg(arg)])


def _owned_value(item: Simple) -> Simple:
    """``name = value`` as ``name = owned_array(value)``."""
    return Simple(item.node.with_changes(value=_call(OWNED_ARRAY, item.node.value)))


def _made_in_block(step: tuple, facts: _Facts, preds: dict) -> Optional[list]:
    """For a step ``(node, target, base)``: the nodes after the line that made the array it writes
    into and before the step, where that line is a new array's (``_fresh``) and it, the steps in
    between that carry the array to this one, and every line between them run one after another
    (no branch, loop or join between); else None."""
    node, _, base = step
    between: list = []
    current = node
    while True:
        before = preds.get(id(current), [])
        if len(before) != 1 or len(before[0].succ) != 1 or \
                not isinstance(before[0].item, (Simple, Restore, Verbatim)):
            return None
        current = before[0]
        if base not in current.binds:
            between.append(current)
            continue
        carried = facts.steps.get(id(current))
        if carried is not None and carried[1] == base:
            base = carried[2]  # an earlier step carried the array here
            between.append(current)
            continue
        if isinstance(current.item, Simple) and current.item.assigned == base and \
                _fresh(current.item.node.value) and current.binds == {base}:
            return [current] + between[::-1]
        return None


def _fresh_array_safe(step: tuple, facts: _Facts, preds: dict) -> bool:
    """Whether a step may write in place into an array its own block made shortly before (where
    its group as a whole may not: a name of the group holds an older array, whose views are read
    later): no name bound between the making and the step that may hold the new array (followed
    line by line, as ``_holders`` does for the group) is read after the step."""
    lines = _made_in_block(step, facts, preds)
    if lines is None:
        return False
    node = step[0]
    holders = set(lines[0].binds)
    for line in lines[1:]:
        if not line.reads & holders:
            continue
        item = line.item
        if id(line) in facts.steps:
            holders |= line.binds
            continue
        if not (isinstance(item, Simple) and item.assigned is not None):
            return False  # a call, a write or a restore reading it may keep it anywhere
        value = item.node.value
        if _copied_from(value) in holders or (isinstance(value, cst.Subscript) and
                                               isinstance(value.value, cst.Name)) or \
                _keeps_items(value, holders, holders, facts.arrays) is not False:
            holders |= line.binds
    return not any(_live_after(node, name) for name in holders - node.binds)


def _analysed(code: tuple, step_of: StepOf, params: frozenset, final_code: tuple,
              arrays: frozenset = frozenset()) -> tuple:
    """``(facts, {id(node) of a step: whether its group works in place}, made nodes to copy)``."""
    facts = _facts(code, step_of, final_code, arrays, params)
    in_place: dict = {}
    copies: set = set()
    for group in _groups(facts):
        safe, live = _safe(group, facts, params)
        views = _views_read_later(group, facts, live) if live else frozenset()
        if views:  # the array's parts a later line reads, copied where they are taken
            safe = _safe(group, facts, params, views)[0]
            if safe:
                copies |= views
        for key, (node, _, base) in facts.steps.items():
            if base in group:
                in_place[key] = safe
        if safe:
            for name in group:
                for node in facts.made.get(name, ()):
                    if not _fresh(node.item.node.value):
                        copies.add(id(node))
    preds: dict = {}
    for node in facts.nodes:
        for after in node.succ:
            preds.setdefault(id(after), []).append(node)
    for key, step in facts.steps.items():
        if not in_place.get(key) and not (set(step[1:]) & params) and \
                _fresh_array_safe(step, facts, preds):
            in_place[key] = True
    return facts, in_place, copies


# ----- the rewriting -----------------------------------------------------------------------------

def _scatter(node) -> bool:
    """Whether ``node`` is ``getitem_vjp(g, x, index)``, its three arguments by position."""
    return _helper_call(node, GETITEM_VJP) and len(node.args) == 3 and \
        all(a.keyword is None and a.star == "" for a in node.args)


def _step(item: Simple) -> Optional[tuple]:
    """``(target, the name written into)`` of a line that may write into an array in place:
    ``x_2 = setitem(x, ...)``; ``g_2 = g + getitem_vjp(...)``; ``x += e``; else None."""
    node = item.node
    if isinstance(node, cst.AugAssign):
        base = node.target
        while isinstance(base, (cst.Subscript, cst.Attribute)):
            base = base.value
        return (base.value, base.value) if isinstance(base, cst.Name) else None
    target = item.assigned
    if target is None:
        return None
    value = node.value
    if (_helper_call(value, SETITEM) or _helper_call(value, SETITEM_INTO)) and value.args and \
            isinstance(value.args[0].value, cst.Name):
        return target, value.args[0].value.value
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) and \
            isinstance(value.left, cst.Name) and _scatter(value.right):
        return target, value.left.value
    return None


def _in_place(item: Simple) -> Simple:
    """A step of a group that works in place, written so: ``setitem_into(x, ...)``,
    ``g_2 = getitem_add(g, ...)``; an ``x += e`` as it is."""
    node = item.node
    if isinstance(node, cst.AugAssign):
        if isinstance(node.target, cst.Name) and isinstance(node.operator, cst.AddAssign) and \
                _scatter(node.value):
            add = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(GETITEM_ADD)),
                           [cst.Arg(node.target)] + list(node.value.args))
            return Simple(cst.Assign([cst.AssignTarget(node.target)], add))
        return item
    value = node.value
    if _helper_call(value, SETITEM):
        return Simple(node.with_changes(value=value.with_changes(
            func=cst.Attribute(cst.Name("s2s"), cst.Name(SETITEM_INTO)))))
    if isinstance(value, cst.BinaryOperation):
        add = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(GETITEM_ADD)),
                       [cst.Arg(value.left)] + list(value.right.args))
        return Simple(node.with_changes(value=add))
    return item


def _plain_step(item: Simple, numbers: frozenset):
    """A step of a group that works in place as plain numpy (plain_writes.plain_lines), or None
    where its index is not one that writes."""
    node = item.node
    if isinstance(node, cst.AugAssign):
        if not (isinstance(node.target, cst.Name) and isinstance(node.operator, cst.AddAssign) and
                _scatter(node.value)):
            return None
        value, _, index = (a.value for a in node.value.args)
        return plain_lines(None, node.target, index, value, True, numbers)
    value = node.value
    if _helper_call(value, SETITEM) or _helper_call(value, SETITEM_INTO):
        if len(value.args) != 3 or any(a.keyword is not None or a.star != "" for a in value.args):
            return None
        base, index, written = (a.value for a in value.args)
        return plain_lines(item.assigned, base, index, written, False, numbers)
    if isinstance(value, cst.BinaryOperation):
        added, _, index = (a.value for a in value.right.args)
        return plain_lines(item.assigned, value.left, index, added, True, numbers)
    return None


def _in_place_step(plain: Plain, group: frozenset):
    """How a step of ``group`` (the names that may hold its array) is written: plain numpy where
    every one of them is in ``plain.arrays`` and its index is basic, else by a helper."""
    if not group or not group <= plain.arrays:
        return _in_place

    def write(item: Simple):
        lines = _plain_step(item, plain.numbers)
        return _in_place(item) if lines is None else lines
    return write


def write_in_place(code: tuple, params: frozenset, final_code: tuple, plain: Plain = Plain()) -> tuple:
    """``code`` (a sweep's program items, folded) with the index writes into arrays it owns
    made in place, and the adjoints of index reads added into an adjoint it owns (each group's
    new values copied where they are made, unless certainly new). ``params``: the names bound
    before the items (the function's parameters; a backward sweep's residuals and seed);
    ``final_code``: the code read when it returns; ``plain``: where a step is plain numpy."""
    facts, in_place, copies = _analysed(tuple(code), _step, params, final_code, plain.arrays)
    at: dict = {key: _owned_value for key in copies}
    groups = _groups(facts)
    for key, safe in in_place.items():
        if safe:
            _, target, base = facts.steps[key]
            group = next((g for g in groups if base in g), {target, base})
            at[key] = _in_place_step(plain, frozenset(group))
    if not at:
        return code
    return _rewrite(tuple(code), at, iter(facts.nodes))
