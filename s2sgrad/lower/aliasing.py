"""In-place updates of shared arrays: CoreFunction -> nothing, or a located TransformError.

The core form is functional: ``z += 1``, ``z[i] = v`` and ``lst.append(v)`` make new values. In
the user's program they change an object in place, and every other name bound to that object
(``z = y``, a view ``z = y[1:]`` / ``y.T`` / ``y.reshape(...)``, a list element) sees the change.
This pass finds the names that may share an object (points-to sets, each branch of an ``if`` on
its own; views as the rule table declares them) and refuses an in-place update when another name
sharing the object is read after it: s2sgrad would otherwise differentiate a program other than
the one that runs. An object is named by the statement target that made it; a new object made
there (in a later iteration of a loop) renames the earlier ones ``target'`` first (the most
recent object and a summary of the older ones), and a binding replaces what a name was: so
``b = a`` at the end of an iteration and ``a = <new array>`` in the next share nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import TransformError
from .ir import Const, CoreFunction, If, Loop, Seq, Stmt, Var, operand_reads, operand_vars


@dataclass
class _Walk:
    """Positions in source order: where each name is defined and read, what it may point to,
    and the span of each loop."""

    views: frozenset
    inplace: dict = field(default_factory=dict)  # in-place target -> (updated name, Location)
    points: dict = field(default_factory=dict)  # name -> the objects (ids) it may be
    elements: dict = field(default_factory=dict)  # name -> the objects a list or tuple may hold
    defined: dict = field(default_factory=dict)  # name -> first position
    reads: dict = field(default_factory=dict)  # name -> [positions]
    loops: list = field(default_factory=list)  # (start, end, carried names)
    where: dict = field(default_factory=dict)  # name -> indices of its enclosing loops in ``loops``
    position: int = 0
    stack: list = field(default_factory=list)
    sharing: dict = field(default_factory=dict)  # in-place target -> names sharing its array then
    holding: dict = field(default_factory=dict)  # in-place target -> lists or tuples holding it then
    updated: dict = field(default_factory=dict)  # in-place target -> the update's position
    immutable: frozenset = frozenset()  # objects known to be numbers: an update changes none
    # per open loop: name -> (every object it was bound to in it, every object it held then)
    ever: list = field(default_factory=list)

    def objects(self, op, table: str = "points") -> frozenset:
        """What the names inside ``op`` are (``points``) or hold (``elements``)."""
        out: frozenset = frozenset()
        for name in operand_vars(op):
            out |= getattr(self, table).get(name, frozenset())
        return out

    def bind(self, name: str, objects: tuple) -> None:
        self.points[name], self.elements[name] = objects
        for ever in self.ever:
            was, held = ever.get(name, (frozenset(), frozenset()))
            ever[name] = (was | objects[0], held | objects[1])
        self.defined.setdefault(name, self.position)
        self.where.setdefault(name, tuple(self.stack))

    def renew(self, site: str, kept: frozenset = frozenset()) -> None:
        """Before ``site`` makes a new object: the objects it made before are ``site'`` (but
        ``kept``, the objects a copy binds there again)."""
        if site in kept:
            return
        old = site + "'"
        for table in (self.points, self.elements):
            for name, objects in table.items():
                if site in objects:
                    table[name] = (objects - {site}) | {old}
        for ever in self.ever:  # what a loop bound keeps both names (it is a union over time)
            for name, (was, held) in ever.items():
                ever[name] = (was | {old} if site in was else was, held | {old} if site in held else held)

    def statement(self, stmt: Stmt, inplace: dict) -> None:
        self.position += 1
        prim = stmt.prim
        read = set()
        for op in prim.args + tuple(v for _, v in prim.kwargs):
            for name in operand_reads(op):
                self.reads.setdefault(name, []).append(self.position)
            read.update(operand_vars(op))
        for target in stmt.targets:
            # the update itself reads the array it changes; a loop's carry or a join binding the
            # same name later (or a placeholder earlier) is a plain assignment
            updating = target in inplace and inplace[target][0] in read
            if updating:  # who shares the array at this point of the program
                self.updated[target] = self.position
                shared = self.points.get(inplace[target][0], frozenset()) - self.immutable
                self.sharing.setdefault(target, set()).update(
                    n for n, objects in self.points.items() if objects & shared)
                self.holding.setdefault(target, set()).update(
                    n for n, objects in self.elements.items() if objects & shared)
            else:  # a copy (a loop's carry) makes no object: the one it binds keeps its name
                copied = prim.op == "copy" and prim.args and isinstance(prim.args[0], Var)
                self.renew(target, self.objects(prim.args[0]) if copied else frozenset())
            self.bind(target, self.shares(stmt, target, inplace[target][0] if updating else None))

    def shares(self, stmt: Stmt, target: str, mutated) -> tuple:
        """(the objects ``target`` may be, the objects it may hold as a list's or tuple's
        elements) after ``stmt``, which changes the array ``mutated`` in place (None if not)."""
        prim, own = stmt.prim, frozenset({target})
        args = prim.args
        if mutated is not None:  # the same object, changed (``.append`` adds an element)
            added = self.objects(args[1]) if prim.op == "list.append" else frozenset()
            return self.points.get(mutated, frozenset()), self.elements.get(mutated, frozenset()) | added
        if prim.op == "copy" and args and isinstance(args[0], Seq):
            return own, self.objects(args[0])  # a new list or tuple holding these
        if prim.op == "copy" and args and isinstance(args[0], Const) and not args[0].reads:
            return own, frozenset()  # a literal (``[]``): a new object
        if prim.op == "copy" and args:
            return self.objects(args[0]), self.objects(args[0], "elements")
        if prim.op.startswith("user:"):  # the result may be, or hold, any argument
            everything = frozenset().union(*(self.objects(a) | self.objects(a, "elements") for a in args))
            return own | everything, everything
        if prim.op in ("list.getitem", "operator.getitem") and isinstance(args[0], Seq):
            return self.objects(args[0]), frozenset()
        if prim.op == "list.getitem":
            return self.objects(args[0], "elements"), frozenset()
        if prim.op == "operator.getitem" and isinstance(args[1], Const) and not args[1].basic:
            return own | self.objects(args[0], "elements"), frozenset()  # fancy indexing copies
        if prim.op in self.views:  # a view (or an element of a tuple parameter)
            return self.objects(args[0]) | self.objects(args[0], "elements"), frozenset()
        return own, frozenset()

    def block(self, body: tuple, inplace: dict) -> None:
        for stmt in body:
            if isinstance(stmt, Stmt):
                self.statement(stmt, inplace)
            elif isinstance(stmt, If):
                self.reads.setdefault(stmt.test, []).append(self.position + 1)
                self.branches(stmt, inplace)
            elif isinstance(stmt, Loop):
                self.loop(stmt, inplace)

    def branches(self, stmt: If, inplace: dict) -> None:
        """Each branch from what names may be before the ``if`` (one path never sees the
        other's bindings), then what they may be after either."""
        before = dict(self.points), dict(self.elements)
        self.block(stmt.body, inplace)
        then = self.points, self.elements
        self.points, self.elements = dict(before[0]), dict(before[1])
        self.block(stmt.orelse, inplace)
        for joined, other in ((self.points, then[0]), (self.elements, then[1])):
            for name, objects in other.items():
                joined[name] = joined.get(name, frozenset()) | objects

    def loop(self, loop: Loop, inplace: dict) -> None:
        """Walk a loop twice over the same positions: the second time, what the carries bring
        back to the top is known. After it, a name may be what it was before (no iteration) or
        anything the loop bound it to (a ``break`` leaves from the middle)."""
        start, index = self.position + 1, len(self.loops)
        self.loops.append(None)
        self.stack.append(index)
        before = dict(self.points), dict(self.elements)
        self.ever.append({})
        for target in loop.targets:
            self.renew(target)
            self.bind(target, (frozenset({target}), frozenset()))
        for _ in range(2):
            self.position = start - 1
            self.block(loop.body, inplace)
            self.block(loop.carries, inplace)
        ever = self.ever.pop()
        for side, (table, earlier) in enumerate(((self.points, before[0]), (self.elements, before[1]))):
            for name in set(earlier) | set(ever):  # each path's own naming: as at an if's join
                bound = ever.get(name, (frozenset(), frozenset()))[side]
                table[name] = table.get(name, frozenset()) | earlier.get(name, frozenset()) | bound
        self.stack.pop()
        carried = frozenset(t for c in loop.carries for t in c.targets)
        self.loops[index] = (start, self.position, carried)


def check_inplace(fn: CoreFunction, views: frozenset, numbers: frozenset = frozenset()) -> None:
    """Raise a located TransformError for an in-place update that another live name would see.
    ``numbers``: names known to hold Python or numpy numbers, which are immutable: their
    augmented assignment (``E -= d``) binds a new number and changes nothing another name holds;
    nor does one of a name that may be such a number (``t = a; t -= d``: only the objects it
    may be that are not numbers may be shared)."""
    walk = _walked(fn, views, numbers)
    for target, (mutated, location) in walk.inplace.items():
        if mutated not in numbers:
            _check_one(fn, walk, target, mutated, location)


def check_parameter_writes(fn: CoreFunction, views: frozenset) -> None:
    """Raise a located TransformError for an in-place update of an array a parameter may be: in
    a function another one calls, the caller's array would change (s2sgrad's calls do not)."""
    walk = _walked(fn, views)
    params = {p.name for p in fn.params}
    for target, (mutated, location) in walk.inplace.items():
        written = sorted(params & walk.sharing.get(target, set()))
        if written:
            raise TransformError(
                f"`{fn.name}` changes its parameter `{written[0]}` in place, so the array its "
                "caller passed would change too, and s2sgrad does not model that", location,
                f"make a new array instead (`{written[0]} = {written[0]} + ...`, or copy first: "
                f"`{written[0]} = {written[0]}.copy()`), and return it")


def _walked(fn: CoreFunction, views: frozenset, numbers: frozenset = frozenset()) -> _Walk:
    """The walk over ``fn`` (points-to sets, reads, who shares each updated array; the
    objects the names ``numbers`` made, or are as parameters, are numbers: shared by none)."""
    inplace = {target: (mutated, location) for target, mutated, location in fn.inplace}
    walk = _Walk(views, inplace=inplace, immutable=numbers)
    if not inplace:
        return walk
    for p in fn.params:
        walk.bind(p.name, (frozenset({p.name}), frozenset()))
    walk.block(fn.body, inplace)
    end = walk.position + 1
    for name in operand_reads(fn.result):
        walk.reads.setdefault(name, []).append(end)
    return walk


def _check_one(fn: CoreFunction, walk: _Walk, target: str, mutated: str, location) -> None:
    at = walk.updated.get(target, walk.defined.get(target, 0))  # the update, not a join's placeholder
    owner = fn.user_names.get(mutated, mutated)
    loops = [walk.loops[i] for i in walk.where.get(target, ())]

    def seen_later(name: str) -> bool:
        reads = walk.reads.get(name, [])
        born = walk.defined.get(name, 0)
        late = born < at and any(r > at for r in reads)
        looped = any((born < start or name in carried) and any(start <= r <= stop for r in reads)
                     for start, stop, carried in loops)
        return late or looped

    sharing = walk.sharing.get(target, set())
    for name in sorted(walk.holding.get(target, set()) - sharing):  # sharing's message below
        if name not in fn.user_names and name not in {p.name for p in fn.params}:
            continue  # a temporary lives within its own statement
        if fn.user_names.get(name, name) != owner and seen_later(name):
            other = fn.user_names.get(name, name)
            raise TransformError(
                f"`{other}` holds `{owner}` itself (a list or tuple keeps the object, not a copy), "
                f"so this in-place update would change what `{other}` holds too, and s2sgrad "
                "does not model that", location,
                f"store a copy instead (`{other}.append(list({owner}))`, `{owner}.copy()`), or make "
                f"a new value (`{owner} = {owner} + [...]`)")
    for name in sorted(sharing):
        if fn.user_names.get(name, name) == owner:
            continue
        if name not in fn.user_names and name not in {p.name for p in fn.params}:
            continue  # a temporary lives within its own statement
        if seen_later(name):
            other = fn.user_names.get(name, name)
            refusal = TransformError(
                f"`{owner}` may share its array with `{other}` (an assignment, a slice or a view "
                f"binds both to one array), so this in-place update would change `{other}` too, "
                "and s2sgrad does not model that",
                location,
                f"make a new array instead (`{owner} = {owner} + ...`), or copy first "
                f"(`{owner} = {other}.copy()`)",
            )
            refusal.arrays_only = True  # numbers are immutable: calls passing them may run
            raise refusal
