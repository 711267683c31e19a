"""Folding single-use temporaries of generated code: code (lines and Nests) -> the same code with
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

import functools
from collections import Counter
from typing import Optional

import libcst as cst
import libcst.matchers as m

from .code import Nest, Restore, calls_in, line_facts, name_reads
from .inline import substitute
from .simplify import simplify

_PURE_OWNERS = ("np", "s2s")
MAX_LINE = 80  # a folded line longer than this stays two lines: one expression per line reads best


@functools.lru_cache(maxsize=4096)
def _parse(line: str) -> Optional[cst.BaseSmallStatement]:
    """A simple one-line statement, or None for comments and compound headers."""
    text = line.strip()
    if not text or text.startswith("#") or text.endswith(":"):
        return None
    module = cst.parse_module(text)
    stmt = module.body[0]
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    return stmt.body[0]


def line_read_counts(expressions) -> Counter:
    """How often each name is read by some expressions (code the caller writes around the code)."""
    total: Counter = Counter()
    for text in expressions:
        total.update(name_reads(cst.parse_expression(text)))
    return total


def _text(item) -> str:
    return item.text if isinstance(item, Restore) else item


def _count(code, reads: Counter, binds: Counter) -> None:
    for item in code:
        if isinstance(item, Nest):
            header_reads, header_binds, _ = line_facts(item.header)
            reads.update(header_reads)
            binds.update(header_binds)
            _count(item.body, reads, binds)
        else:
            line_reads, line_binds, _ = line_facts(_text(item))
            reads.update(line_reads)
            binds.update(line_binds)


def _dotted(node: cst.BaseExpression) -> str:
    """``np.linalg.norm`` for an attribute chain on a name, "" for anything else."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return ""
    parts.append(node.value)
    return ".".join(reversed(parts))


def _pure(node: cst.CSTNode) -> bool:
    """Whether every call in ``node`` is to numpy (not np.random) or s2sgrad's runtime."""
    for call in calls_in(node):
        owner = _dotted(call.func).split(".")
        if len(owner) < 2 or owner[0] not in _PURE_OWNERS or owner[:2] == ["np", "random"]:
            return False
    return True


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
        reader = _parse(block[j])
        if isinstance(reader, cst.AugAssign) and _rebinds(reader, name):
            reader = _as_assignment(reader)  # v = e1; v += e2  ->  v = e1 + e2
        folded = simplify(substitute_statement(reader, {name: value}), scalars)
        text = _code(folded)
        if line_facts(text)[0][name] or len(text) > MAX_LINE:
            i += 1  # read where substitution does not reach (a target), or too long to read
            continue
        block[j] = text
        del block[i]
        reads[name] -= 1
        binds[name] -= 1
        # The reader may fold further now; look again from the line before the one removed.
        i = max(i - 1, 0)
    return block


def _foldable(block: list, i: int, reads: Counter, binds: Counter,
              rebind: bool) -> Optional[tuple]:
    item = block[i]
    if not isinstance(item, str):
        return None
    small = _parse(item)
    facts = line_facts(item)
    if not isinstance(small, cst.Assign) or not facts[2]:
        return None
    name = small.targets[0].target.value
    if not _pure(small.value):
        return None
    # Read and bound once in all; or else the reader must rebind the name (``v = v + e``,
    # ``v += e``), which ends this value's life there.
    rebinding = reads[name] != 1 or binds[name] != 1
    if rebinding and not rebind:
        return None
    needed = set(facts[0]) | {name}
    for j in range(i + 1, len(block)):
        later = block[j]
        if not isinstance(later, str) or later.lstrip().startswith("#"):
            return None
        later_reads, later_binds, plain = line_facts(later)
        if later_reads[name]:
            reader = _parse(later)
            if later_reads[name] != 1 or reader is None:
                return None
            if rebinding and not _rebinds(reader, name):
                return None
            return name, small.value, j
        small_later = _parse(later)
        movable = plain or isinstance(small_later, cst.AugAssign)  # rebinds or updates its target
        if not movable or later_binds & needed or _augmented_base(small_later) & needed \
                or not _pure(small_later):
            return None
    return None


_AUGMENTED = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract,
              cst.MultiplyAssign: cst.Multiply}


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


def _augmented_base(small) -> set:
    """The name an in-place update ``x[i] += ...`` writes into (its target's base)."""
    if not isinstance(small, cst.AugAssign):
        return set()
    target = small.target
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return {target.value} if isinstance(target, cst.Name) else set()


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


def _code(small: cst.BaseSmallStatement) -> str:
    return cst.Module([]).code_for_node(small)
