"""What a function's code binds and reads, before lowering: a FunctionDef, a suite or any node ->
its statements, the names it reads, the names it assigns."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..read.names import name_nodes
from ..read.walk import children, findall


def read_names(node: cst.CSTNode) -> list:
    """Names ``node`` reads, in order: not attribute fields (``np.exp``'s ``exp``), not keywords."""
    return [n.value for n in name_nodes(node, reads_only=True)]


def statements_of(block: cst.BaseSuite) -> list:
    """The statements of a suite: small statements split out, compound ones kept whole."""
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    out = []
    for line in block.body:
        if isinstance(line, cst.SimpleStatementLine):
            out.extend(line.body)
        else:
            out.append(line)
    return out


def targets_in(node: cst.CSTNode) -> set:
    """Names assigned anywhere in ``node`` (assignments and loop targets)."""
    names = set()
    for found in findall(node, m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For()):
        target = found.target
        if isinstance(target, (cst.Name, cst.Tuple, cst.List)):
            names |= {n.value for n in findall(target, m.Name())}
    return names


def targets_outside(root: cst.CSTNode, skipped: cst.CSTNode) -> set:
    """Names assigned anywhere in ``root`` but inside ``skipped`` (as targets_in reads them)."""
    names: set = set()
    stack = [root]
    while stack:
        current = stack.pop()
        if current is skipped:
            continue
        if isinstance(current, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)) and \
                isinstance(current.target, (cst.Name, cst.Tuple, cst.List)):
            names |= {n.value for n in findall(current.target, m.Name())}
        stack.extend(children(current))
    return names


def _parameter_names(fn: cst.FunctionDef) -> set:
    names = {p.name.value for p in list(fn.params.params) + list(fn.params.kwonly_params)}
    if fn.params.star_arg and isinstance(fn.params.star_arg, cst.Param):
        names.add(fn.params.star_arg.name.value)
    if fn.params.star_kwarg:
        names.add(fn.params.star_kwarg.name.value)
    return names


def assigned_names(fn: cst.FunctionDef) -> frozenset:
    """The function's local names: parameters, assignment targets (names, tuples and lists of
    names) and loop targets."""
    names = _parameter_names(fn)
    for node in findall(fn.body, m.AssignTarget() | m.AugAssign() | m.AnnAssign()):
        tgt = node.target
        for n in findall(tgt, m.Name()):
            if isinstance(tgt, cst.Name) or m.matches(tgt, m.Tuple() | m.List()):
                names.add(n.value)
    for node in findall(fn.body, m.For()):
        for n in findall(node.target, m.Name()):
            names.add(n.value)
    return frozenset(names)


def all_names(fn: cst.FunctionDef) -> set:
    """Every name the function binds or reads (attribute fields like ``np.mean``'s ``mean`` and
    keyword names are not names: temporaries may take them)."""
    return set(read_names(fn))
