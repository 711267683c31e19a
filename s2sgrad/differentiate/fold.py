"""Folding single-use temporaries of generated code: program items -> the same with
each temporary that one later line reads put into that line, and its own line dropped.

The reverse builder names every intermediate value and every adjoint contribution. A name read
once, by a nearby line of the same source statement, reads better as part of that line, and numpy
can then reuse the temporary's buffer in place. A line folds when:

- it is ``name = expr`` with ``name`` assigned nowhere else and read exactly once in all the code
  (``outside`` counts reads the caller makes, e.g. returned residuals);
- the reader comes later in the same block with no comment line between (the same source
  statement), and every line between is a plain ``a = ...`` or an in-place ``a += ...`` that
  rebinds or updates nothing ``expr`` reads;
- ``expr`` and the lines it moves past only call numpy (not ``np.random``) and s2sgrad's runtime,
  so no effect is reordered;
- the folded line stays short (``MAX_LINE``).
Pure: code in, code out.
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..program import Comment, Nest, Simple, name_reads, pure
from ..rules.helpers.inplace import GETITEM_ADD, SETITEM, SETITEM_INTO
from .inline import substitute
from .simplify import negated, simplify

MAX_LINE = 80  # a folded line longer than this stays two lines: one expression per line reads best


def line_read_counts(expressions) -> Counter:
    """How often each name is read by some expressions (code the caller writes around the code)."""
    total: Counter = Counter()
    for text in expressions:
        total.update(name_reads(cst.parse_expression(text)))
    return total


def _count(code, reads: Counter, binds: Counter) -> None:
    for item in code:
        reads.update(item.reads)
        binds.update(item.binds)
        if isinstance(item, Nest):
            _count(item.body, reads, binds)


def fold(code: list, outside: Counter = Counter(), scalars: frozenset = frozenset()) -> list:
    """``code`` with its single-use temporaries folded into their readers (see the module doc).
    ``scalars``: names known to hold one number (simplify does not factor them out of sums)."""
    reads: Counter = Counter(outside)
    binds: Counter = Counter()
    _count(code, reads, binds)
    # Temporaries first, then updates of one name merged (those make lines longer).
    code = _fold_block(list(code), reads, binds, scalars, False)
    return _fold_block(code, reads, binds, scalars, True)


def _fold_block(block: list, reads: Counter, binds: Counter, scalars: frozenset,
                rebind: bool) -> list:
    block = [Nest(item.header, tuple(_fold_block(list(item.body), reads, binds, scalars, rebind)))
             if isinstance(item, Nest) else item for item in block]
    i = 0
    while i < len(block):
        target = _foldable(block, i, reads, binds, rebind)
        if target is None:
            i += 1
            continue
        name, value, j = target
        reader = block[j].node
        if _written_array(reader) == name:  # the array a write writes into stays a name
            i += 1
            continue
        if isinstance(reader, cst.AugAssign) and _rebinds(reader, name):
            reader = _as_assignment(reader)  # v = e1; v += e2  ->  v = e1 + e2
        folded = Simple(simplify(substitute_statement(reader, {name: value}), scalars))
        if folded.reads[name] or len(folded.text) > MAX_LINE:
            i += 1  # read where substitution does not reach (a target), or too long to read
            continue
        block[j] = folded
        del block[i]
        reads[name] -= 1
        binds[name] -= 1
        # The reader may fold further now; look again from the line before the one removed.
        i = max(i - 1, 0)
    return block


def _written_array(small) -> Optional[str]:
    """The name of the array ``x`` an index write ``y = setitem(x, index, value)`` writes into
    (writes_in_place.py tells by that name which array it is, and whether it may write in
    place), else None."""
    value = getattr(small, "value", None)
    if isinstance(small, cst.Assign) and isinstance(value, cst.Call) and value.args and \
            m.matches(value.func, m.Attribute(m.Name("s2s"), m.Name(SETITEM))) and \
            isinstance(value.args[0].value, cst.Name):
        return value.args[0].value.value
    return None


def move_signs(code: list, outside: Counter = Counter(), scalars: frozenset = frozenset()) -> list:
    """``code`` with the signs of negations moved where they cost nothing (exact, as a negation
    is): a temporary bound to the negation or the copy of a name (``t = -u``, ``t = u``) gone
    where every line reading it can read ``-u`` (``u``) with fewer negations in all
    (``a + t * b`` is ``a - u * b``, ``x += t`` is ``x -= u``: _negation_readers); then each
    temporary bound to a negation (``t = -e``), read once in all by an update of the same block
    that it leads (``x += t * y``, ``x[1:] -= t * y``), renamed ``minus_t`` and bound to ``e``,
    the update's sign flipped: one array negation fewer. ``outside``: reads the caller makes;
    ``scalars``: names known to hold one number (a negation is read again only of those)."""
    reads: Counter = Counter(outside)
    binds: Counter = Counter()
    _count(code, reads, binds)

    def block_of(items: list) -> list:
        items = [Nest(item.header, tuple(block_of(list(item.body)))) if isinstance(item, Nest) else item
                 for item in items]
        i = 0
        while i < len(items):
            readers = _negation_readers(items, i, reads, binds, scalars)
            if readers is not None:  # ``t = -u`` read as ``-u``: its sign folded into each reader
                name, source = items[i].assigned, next(iter(items[i].reads))
                reads[source] += reads[name] - 1  # each read of t is one of u now
                for j, node in sorted(readers.items(), reverse=True):
                    if m.matches(node, m.Assign(targets=[m.AssignTarget(m.Name())], value=m.Name())) \
                            and node.targets[0].target.value == node.value.value:
                        del items[j]  # ``u = u``: nothing to do
                        reads[source] -= 1
                        binds[source] -= 1
                    else:
                        items[j] = Simple(node)
                reads[name] = binds[name] = 0
                del items[i]
                if i and isinstance(items[i - 1], Comment) and \
                        (i == len(items) or isinstance(items[i], Comment)):
                    del items[i - 1]  # the source line's comment, its lines all gone
                    i -= 1
                continue
            i += 1
        for i, item in enumerate(items):
            name = item.assigned if isinstance(item, Simple) and item.plain else None
            if name is None or reads[name] != 1 or binds[name] != 1:
                continue
            j = next((k for k in range(i + 1, len(items)) if items[k].reads[name]), None)
            moved = None if j is None or not isinstance(items[j], Simple) else \
                _sign_moved(item.node, items[j].node, name)
            negative = f"minus_{name}"  # what the name holds now: the value's negation
            if moved is not None and not reads[negative] and not binds[negative]:
                items[i] = Simple(moved[0].with_changes(targets=[cst.AssignTarget(cst.Name(negative))]))
                items[j] = Simple(substitute_statement(moved[1], {name: cst.Name(negative)}))
                binds[negative] = reads[negative] = 1
        return items

    return block_of(list(code))


def _minus_count(node: cst.CSTNode) -> int:
    """How many negations ``node`` computes (``-e`` and ``x -= e`` alike are one pass each
    for arrays: a negation costs what the sign of an update costs nothing for)."""
    return len(m.findall(node, m.UnaryOperation(operator=m.Minus())))


def _negation_readers(items: list, i: int, reads: Counter, binds: Counter,
                      scalars: frozenset) -> Optional[dict]:
    """``{index: reader with -u (u) in place of t}`` where ``items[i]`` is ``t = -u`` (or a copy
    ``t = u``; ``u`` a name), every read of ``t`` is in a later line of the block before anything
    rebinds ``u`` (the last reader may: it reads first), and the readers so written compute
    fewer negations than the line and they did (a copy's: none more) (``a + t * b`` is ``a - u *
    b``, ``x += t`` is ``x -= u``); else None. Exact: a negation is. A copy is the same object
    as ``u``, whatever writes into it; a negation is read again later only where ``u`` holds one
    number and the lines up to the last reader write into no array (no index write, no update
    of a name not known to hold a number, no call of a helper writing into its operand)."""
    item = items[i]
    if not isinstance(item, Simple) or not item.plain:
        return None
    name, value = item.assigned, item.node.value
    unsigned = value if isinstance(value, cst.Name) and not value.lpar else negated(value)
    if binds[name] != 1 or not reads[name] or not isinstance(unsigned, cst.Name):
        return None
    source, left, out = unsigned.value, reads[name], {}
    copy = unsigned is value
    if not copy and unsigned.value not in scalars:
        return None
    before = 0 if copy else 1
    for j in range(i + 1, len(items)):
        later = items[j]
        if isinstance(later, Comment):
            continue
        if not isinstance(later, Simple) or isinstance(later.node, cst.Del) and name in later.text:
            return None
        if not copy and _may_write_an_array(later, scalars):
            return None
        count = later.reads[name]
        if count:
            node = simplify(substitute_statement(later.node, {name: value}))
            if isinstance(node, cst.AugAssign) and type(node.operator) in _FLIPPED and \
                    negated(node.value) is not None:
                node = node.with_changes(operator=_FLIPPED[type(node.operator)](),
                                         value=negated(node.value).with_changes(lpar=[], rpar=[]))
            if Simple(node).reads[name]:
                return None  # read where substitution does not reach (an index of a target)
            before += _minus_count(later.node)
            out[j] = node
            left -= count
            if not left:
                after = sum(_minus_count(node) for node in out.values())
                # a negation only moved (``y = t * e`` to ``y = -u * e``) stays where it was
                return out if after < before or after == before and copy else None
        if source in later.binds or source in later.update_base:
            return None
    return None


_WRITING_HELPERS = frozenset({f"s2s.{SETITEM_INTO}", f"s2s.{GETITEM_ADD}"})


def _may_write_an_array(item: Simple, scalars: frozenset) -> bool:
    """Whether ``item`` may write into an array: an index or attribute write, an update of a
    name not known to hold a number, a line of no assignment (``rows.append(...)``), or a call
    of a helper writing into its operand."""
    node = item.node
    if isinstance(node, cst.AugAssign):
        if not isinstance(node.target, cst.Name) or node.target.value not in scalars:
            return True
    elif not isinstance(node, cst.Assign) or \
            any(not isinstance(t.target, (cst.Name, cst.Tuple, cst.List)) for t in node.targets):
        return True
    return any(m.matches(call.func, m.Attribute(m.Name("s2s"), m.Name())) and
               f"s2s.{call.func.attr.value}" in _WRITING_HELPERS for call in m.findall(node, m.Call()))


def _foldable(block: list, i: int, reads: Counter, binds: Counter,
              rebind: bool) -> Optional[tuple]:
    item = block[i]
    if not isinstance(item, Simple) or not item.plain or not pure(item.node.value):
        return None
    name = item.assigned
    # Read and bound once in all; or else the reader must rebind the name (``v = v + e``,
    # ``v += e``), which ends this value's life there.
    rebinding = reads[name] != 1 or binds[name] != 1
    if rebinding and not rebind:
        return None
    needed = set(item.reads) | {name}
    for j in range(i + 1, len(block)):
        later = block[j]
        if not isinstance(later, Simple):
            return None  # a comment (another source statement), a block, a restore
        if later.reads[name]:
            if later.reads[name] != 1 or (rebinding and not _rebinds(later.node, name)):
                return None
            return name, item.node.value, j
        movable = later.plain or isinstance(later.node, cst.AugAssign)  # rebinds or updates its target
        if not movable or later.binds & needed or later.update_base & needed \
                or not pure(later.node):
            return None
    return None


_AUGMENTED = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract,
              cst.MultiplyAssign: cst.Multiply}
_FLIPPED = {cst.AddAssign: cst.SubtractAssign, cst.SubtractAssign: cst.AddAssign}


def _leads(node: cst.BaseExpression, name: str) -> bool:
    """Whether ``node`` is ``name`` or a chain of ``*`` and ``/`` whose first factor is ``name``
    (no parentheses on the way): negating ``name`` negates ``node``."""
    while isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)) \
            and not node.lpar:
        node = node.left
    return isinstance(node, cst.Name) and node.value == name and not node.lpar


def _sign_moved(made: cst.Assign, reader, name: str) -> Optional[tuple]:
    """``(name = e, reader with its sign flipped)`` for ``name = -e`` read once by ``x += name * y``
    or ``x -= name * y`` (the update's sign flipped: ``x -= e * y``, one array negation fewer;
    exact), else None."""
    unsigned = negated(made.value)
    if unsigned is None or not isinstance(reader, cst.AugAssign) or type(reader.operator) not in _FLIPPED \
            or not _leads(reader.value, name):
        return None
    # (an assignment's value needs no parentheses of its own)
    return made.with_changes(value=unsigned.with_changes(lpar=[], rpar=[])), \
        reader.with_changes(operator=_FLIPPED[type(reader.operator)]())


def _rebinds(small, name: str) -> bool:
    """``name = ...`` or ``name += ...`` (a plain name as the whole target)."""
    if isinstance(small, cst.Assign):
        return len(small.targets) == 1 and m.matches(small.targets[0].target, m.Name(name))
    return isinstance(small, cst.AugAssign) and type(small.operator) in _AUGMENTED and \
        m.matches(small.target, m.Name(name))


def _as_assignment(small: cst.AugAssign) -> cst.Assign:
    """``v += e`` as ``v = v + (e)`` (parenthesized where ``e`` binds looser than ``+``)."""
    hole = cst.Name("__s2s_update__")
    value = substitute(cst.BinaryOperation(small.target, _AUGMENTED[type(small.operator)](), hole),
                       {hole.value: small.value})
    return cst.Assign([cst.AssignTarget(small.target)], value)


def substitute_statement(small: cst.BaseSmallStatement, mapping: dict) -> cst.BaseSmallStatement:
    """A simple statement with names replaced in what it reads (its bound names stay)."""
    if isinstance(small, cst.Assign):
        targets = [t if isinstance(t.target, (cst.Name, cst.Tuple, cst.List))
                   else t.with_changes(target=substitute(t.target, mapping)) for t in small.targets]
        return small.with_changes(targets=targets, value=substitute(small.value, mapping))
    if isinstance(small, cst.AugAssign):
        return small.with_changes(value=substitute(small.value, mapping))
    if isinstance(small, (cst.Expr, cst.Return)):
        return small.with_changes(value=substitute(small.value, mapping))
    return small
