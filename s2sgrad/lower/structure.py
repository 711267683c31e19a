"""Structuring: a FunctionDef with ``continue``, ``break`` and early ``return`` -> one without them.

The backward sweep replays structured code (branches and loops with one exit), so jumps are
rewritten first, keeping the meaning:

- the statements after an ``if`` whose branch ends in ``continue`` (or ``return``) move into the
  other branch;
- ``break`` sets a flag (``broken``) that guards the rest of the loop (``while`` loops test it in
  their condition, ``for`` loops skip their remaining iterations) and the loop's ``else`` clause;
- early returns assign a result name that the single final ``return`` returns;
- a loop's ``else`` that returns becomes a branch after the loop, on a flag the ``else`` sets;
  a ``return`` inside a loop first becomes a ``break`` that has set a flag and the loop's result
  (``loop_result = v; returned = True; break``), the loop followed by ``if returned: return
  loop_result`` (by ``if returned: break`` in an enclosing loop): an early return in a branch, and
  breaks, which the rules above rewrite.

Functions without jumps come back unchanged (the same node).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..read.names import name_nodes
from .naming import Namer
from ..read.walk import findall


def _line(small: cst.BaseSmallStatement) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([small])


def _stmts(suite: cst.BaseSuite) -> list:
    """A suite's statements, each as a full statement (small statements one per line)."""
    if isinstance(suite, cst.SimpleStatementSuite):
        return [_line(s) for s in suite.body]
    out = []
    for line in suite.body:
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) > 1:
            out.extend(_line(s) for s in line.body)
        else:
            out.append(line)
    return out


def _block(stmts: list) -> cst.IndentedBlock:
    return cst.IndentedBlock(stmts or [_line(cst.Pass())])


def _small(stmt) -> Optional[cst.BaseSmallStatement]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None


def _is_exit(stmt, kinds: tuple) -> bool:
    return isinstance(_small(stmt), kinds)


def _branches(node: cst.If) -> tuple:
    body = _stmts(node.body)
    if isinstance(node.orelse, cst.If):
        orelse = [node.orelse]
    elif node.orelse is not None:
        orelse = _stmts(node.orelse.body)
    else:
        orelse = []
    return body, orelse


def _rebuild_if(node: cst.If, body: list, orelse: list) -> cst.If:
    if not orelse:
        return node.with_changes(body=_block(body), orelse=None)
    if len(orelse) == 1 and isinstance(orelse[0], cst.If) and isinstance(node.orelse, cst.If):
        return node.with_changes(body=_block(body), orelse=orelse[0])
    return node.with_changes(body=_block(body), orelse=cst.Else(_block(orelse)))


def _ends_with(stmts: list, kinds: tuple) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if _is_exit(last, kinds):
        return True
    if isinstance(last, cst.If):
        body, orelse = _branches(last)
        return _ends_with(body, kinds) and _ends_with(orelse, kinds)
    return False


def _has_exit(stmt, kinds: tuple) -> bool:
    """Whether ``stmt`` holds an exit of ``kinds`` for the current loop or function (not inside
    nested loops or definitions)."""
    if _is_exit(stmt, kinds):
        return True
    if isinstance(stmt, cst.If):
        body, orelse = _branches(stmt)
        return any(_has_exit(s, kinds) for s in body + orelse)
    return False


class Structurer:
    """Rewrites one function; holds the namer for the flags and the result name."""

    def __init__(self, fn: cst.FunctionDef, written_as: Optional[dict] = None) -> None:
        self.written_as = written_as if written_as is not None else {}  # ParsedModule.written_as
        self.namer = Namer({n.value for n in name_nodes(fn)})
        self.result: Optional[str] = None
        self.flag: Optional[str] = None  # set by a return inside a loop
        self.loop_result = ""

    # An exit handler turns the exit statement into what replaces it (possibly nothing).
    def absorb(self, stmts: list, kinds: tuple, replace) -> list:
        """``stmts`` with every exit of ``kinds`` replaced, and the statements after a branch that
        exits moved into the branches that do not."""
        out = []
        for i, stmt in enumerate(stmts):
            if _is_exit(stmt, kinds):
                out.extend(replace(stmt))
                return out  # what follows an exit never runs
            if isinstance(stmt, cst.If) and _has_exit(stmt, kinds):
                rest = stmts[i + 1:]
                body, orelse = _branches(stmt)
                new_body = self.absorb(body if _ends_with(body, kinds) else body + rest, kinds, replace)
                new_orelse = self.absorb(orelse if _ends_with(orelse, kinds) else orelse + rest,
                                         kinds, replace)
                out.append(_rebuild_if(stmt, new_body, new_orelse))
                return out
            out.extend(self.visit(stmt))
        return out

    def visit(self, stmt) -> list:
        """``stmt`` with the loops inside it (at any depth of branches) rewritten."""
        if isinstance(stmt, (cst.For, cst.While)):
            new = self.loop(stmt)
            return new if isinstance(new, list) else [new]
        if isinstance(stmt, cst.If):
            body, orelse = _branches(stmt)
            new_body = [x for s in body for x in self.visit(s)]
            new_orelse = [x for s in orelse for x in self.visit(s)]
            return [_rebuild_if(stmt, new_body, new_orelse)]
        return [stmt]

    def loop(self, stmt):
        """Rewrite ``break``/``continue`` of a loop statement (others come back unchanged)."""
        if not isinstance(stmt, (cst.For, cst.While)):
            return stmt
        body = _stmts(stmt.body)
        kinds = (cst.Break, cst.Continue)
        orelse = [x for s in _stmts(stmt.orelse.body) for x in self.visit(s)] \
            if stmt.orelse is not None else []
        if stmt.orelse is not None:  # the loops in a loop's `else` are rewritten too
            stmt = stmt.with_changes(orelse=stmt.orelse.with_changes(body=_block(orelse)))
        if not any(_has_exit(s, kinds) for s in body):
            return stmt.with_changes(body=_block([x for s in body for x in self.visit(s)]))
        has_break = any(_has_exit(s, (cst.Break,)) for s in body)
        flag = self.namer.fresh("broken") if has_break else None

        def replace(exit_stmt):
            if isinstance(_small(exit_stmt), cst.Break):
                return [_line(cst.Assign([cst.AssignTarget(cst.Name(flag))], cst.Name("True")))]
            return []

        new_body = self.absorb(body, kinds, replace)
        if flag is None:
            return [stmt.with_changes(body=_block(new_body))]
        not_flag = cst.UnaryOperation(cst.Not(), cst.Name(flag))
        init = _line(cst.Assign([cst.AssignTarget(cst.Name(flag))], cst.Name("False")))
        new_loop = self.guarded_loop(stmt, new_body, not_flag)
        after = []
        if stmt.orelse is not None:
            after = [cst.If(test=not_flag, body=_block(orelse))]
        return [init, new_loop, *after]

    def guarded_loop(self, stmt, new_body: list, not_flag: cst.BaseExpression):
        """The loop with its body skipped once the break flag is set: a while loop tests the
        flag; a for loop (which goes on binding its targets) binds fresh names in its header and
        hands them to the user's only while the flag is unset, so after a break they keep the
        values they had."""
        if isinstance(stmt, cst.While):
            test = cst.BooleanOperation(stmt.test.with_changes(lpar=[cst.LeftParen()],
                                                               rpar=[cst.RightParen()]),
                                        cst.And(), not_flag)
            return stmt.with_changes(test=test, body=_block(new_body), orelse=None)
        fresh = {n.value: self.namer.fresh(f"{n.value}_next")
                 for n in findall(stmt.target, m.Name())}
        header_target = stmt.target.visit(_Rename(fresh))
        handover = [_line(cst.Assign([cst.AssignTarget(cst.Name(old))], cst.Name(new)))
                    for old, new in fresh.items()]
        guarded = cst.If(test=not_flag, body=_block(handover + new_body))
        return stmt.with_changes(target=header_target, body=_block([guarded]), orelse=None)

    def loop_returns(self, stmts: list, in_loop: bool) -> list:
        """``stmts`` with each ``return`` inside a loop made a flagged ``break`` (module doc);
        ``in_loop``: whether ``stmts`` are a loop's body (at any depth of branches)."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, (cst.For, cst.While)) and _returns_inside(stmt):
                out.extend(self.loop_with_returns(stmt, in_loop))
            elif isinstance(stmt, cst.If) and _returns_inside(stmt, in_loop):
                body, orelse = _branches(stmt)
                out.append(_rebuild_if(stmt, self.loop_returns(body, in_loop),
                                       self.loop_returns(orelse, in_loop)))
            elif in_loop and _is_exit(stmt, (cst.Return,)):
                value = _small(stmt).value or cst.Name("None")
                made = [cst.Assign([cst.AssignTarget(cst.Name(self.returned()))], cst.Name("True")),
                        cst.Assign([cst.AssignTarget(cst.Name(self.loop_result))], value),
                        cst.Break()]
                for small in made:  # their provenance comments quote the user's return
                    self.written_as[small] = self.written_as.get(_small(stmt), _small(stmt))
                out.extend(_line(small) for small in made)
            else:
                out.append(stmt)
        return out

    def loop_with_returns(self, stmt, in_loop: bool) -> list:
        """A loop holding returns -> the statements replacing it: the flags' starts, the loop
        (its returns flagged breaks), the test of the flag after it, its ``else`` (if that
        returns) as a branch after it."""
        out, after = [], []
        if stmt.orelse is not None and findall(stmt.orelse, m.Return()):
            # a return in the loop's else: the else as a branch after the loop, on a flag the
            # else sets (it runs when no break ended the loop)
            done = self.namer.fresh("completed")
            out.append(_line(cst.Assign([cst.AssignTarget(cst.Name(done))], cst.Name("False"))))
            after = self.loop_returns([cst.If(test=cst.Name(done), body=stmt.orelse.body)], in_loop)
            flag_set = _line(cst.Assign([cst.AssignTarget(cst.Name(done))], cst.Name("True")))
            stmt = stmt.with_changes(orelse=cst.Else(_block([flag_set])))
        if not any(_returns_inside(s, True) for s in _stmts(stmt.body)):
            return [*out, stmt, *after]
        if not in_loop:
            out.append(_line(cst.Assign([cst.AssignTarget(cst.Name(self.returned()))],
                                        cst.Name("False"))))
        out.append(stmt.with_changes(body=_block(self.loop_returns(_stmts(stmt.body), True))))
        leave = cst.Break() if in_loop else cst.Return(cst.Name(self.loop_result))
        out.append(cst.If(test=cst.Name(self.returned()), body=_block([_line(leave)])))
        return out + after

    def returned(self) -> str:
        """The flag a return inside a loop sets (one per function), and its result's name."""
        if self.flag is None:
            self.flag = self.namer.fresh("returned")
            self.loop_result = self.namer.fresh("loop_result")
        return self.flag

    def function(self, fn: cst.FunctionDef) -> cst.FunctionDef:
        body = _stmts(fn.body)
        if any(_returns_inside(s) for s in body):
            body = self.loop_returns(body, False)
        flat = [x for stmt in body for x in self.visit(stmt)]
        returns = [s for s in flat[:-1] if _has_exit(s, (cst.Return,))]
        if returns:
            self.result = self.namer.fresh("result")

            def replace(exit_stmt):
                value = _small(exit_stmt).value
                return [_line(cst.Assign([cst.AssignTarget(cst.Name(self.result))], value))]

            flat = self.absorb(flat, (cst.Return,), replace)
            flat.append(_line(cst.Return(cst.Name(self.result))))
        return fn.with_changes(body=_block(flat))


class _Rename(cst.CSTTransformer):
    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.mapping.get(original.value, original.value))


def _returns_inside(stmt, in_loop: bool = False) -> bool:
    """Whether ``stmt`` (a loop, or a branch holding one) holds a ``return`` inside a loop, where
    the rewrite reaches it (branches and loops, not ``with`` blocks); ``in_loop``: whether
    ``stmt`` itself is inside one."""
    if in_loop and _is_exit(stmt, (cst.Return,)):
        return True
    if isinstance(stmt, (cst.For, cst.While)):  # a return in its else clause too (any depth)
        return any(_returns_inside(s, True) for s in _stmts(stmt.body)) or \
            (stmt.orelse is not None and bool(findall(stmt.orelse, m.Return())))
    if isinstance(stmt, cst.If):
        body, orelse = _branches(stmt)
        return any(_returns_inside(s, in_loop) for s in body + orelse)
    return False


def _needs_structuring(fn: cst.FunctionDef) -> bool:
    if findall(fn.body, m.Break() | m.Continue()):
        return True
    if any(_returns_inside(s) for s in _stmts(fn.body)):
        return True
    body = _stmts(fn.body)
    return any(_has_exit(s, (cst.Return,)) for s in body[:-1])


def structure(fn: cst.FunctionDef, written_as: Optional[dict] = None) -> cst.FunctionDef:
    """``fn`` without ``break``, ``continue`` or early returns (``fn`` itself when it has none);
    ``written_as`` (ParsedModule.written_as) learns which user statement each statement that
    replaces a return inside a loop stands for."""
    if not _needs_structuring(fn):
        return fn
    return Structurer(fn, written_as).function(fn)
