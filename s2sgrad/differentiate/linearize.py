"""Linearization: a forward-mode function (JvpFunction) -> its primal part and its tangent part, or
None where its code does not split.

A Hessian built from Hessian-vector products runs one forward-mode sweep per column; every sweep
computes the same primal values again. Split, the primal part runs once and hands the values the
tangent lines read to the tangent part, which alone runs per column (JAX's ``linearize``). The
split is by data flow over the program IR: a statement that reads a tangent (or a value computed
from one) belongs to the tangent part, every other statement to the primal part. It is exact only
for straight-line code of single assignments (each name bound once, no in-place updates, no calls
made for their effect, no blocks), where moving a statement earlier cannot change what it reads;
anything else is refused and the caller keeps the whole sweep per column.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from ..program import Comment, Simple, name_reads
from .dead import names_only
from .forward import JvpFunction


@dataclass(frozen=True)
class Linearized:
    """The two parts of one JvpFunction."""

    primal: tuple  # program items that read no tangent
    tangent: tuple  # program items that do, in their order
    handed: tuple  # names the tangent part reads that the primal part (or a parameter) binds


def _single_assignment(item) -> bool:
    return isinstance(item, Comment) or (
        isinstance(item, Simple) and isinstance(item.node, cst.Assign) and
        all(names_only(t.target) for t in item.node.targets))


def _tidy(items: list) -> tuple:
    """Items without comments that head nothing (their statements went to the other part)."""
    out = []
    for i, item in enumerate(items):
        following = items[i + 1] if i + 1 < len(items) else None
        if isinstance(item, Comment) and (following is None or isinstance(following, Comment)):
            continue
        out.append(item)
    return tuple(out)


def linearize(fn: JvpFunction, params: tuple) -> Optional[Linearized]:
    """The primal and tangent parts of ``fn`` (``params``: its primal parameters' names), or None."""
    code = list(fn.code)
    if not all(_single_assignment(item) for item in code):
        return None
    binds = Counter(name for item in code for name in item.binds)
    if any(count > 1 for count in binds.values()) or set(binds) & set(params):
        return None
    varying = set(fn.tangent_params)
    primal, tangent = [], []
    for item in code:
        if isinstance(item, Comment):
            primal.append(item)
            tangent.append(item)
        elif set(item.reads) & varying:
            tangent.append(item)
            varying |= item.binds
        else:
            primal.append(item)
    value_reads = name_reads(cst.parse_expression(fn.value))
    if set(value_reads) & varying:
        return None
    reads = set(name_reads(cst.parse_expression(fn.tangent)))
    for item in tangent:
        reads |= set(item.reads)
    handed = tuple(sorted((reads - varying) & (set(binds) | set(params))))
    return Linearized(_tidy(primal), _tidy(tangent), handed)
