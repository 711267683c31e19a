"""Local functions: a ParsedFunction -> the same function with each call of a function it defines
(a nested ``def``, or a ``lambda`` bound to a name) replaced by that function's body.

    act = lambda z: np.log1p(np.exp(z))
    def predict(inp):
        return np.tanh(inp @ W)
    y = predict(act(h))

becomes

    act_result = np.log1p(np.exp(h))
    y = np.tanh(act_result @ W)

which the core already reads, so every mode gets it (reverse, forward, and the orders after them
read the generated code, which has no local functions). The body is written before the statement
holding the call (where the call is evaluated once: a simple statement, an ``if`` test, a ``for``
loop's iterable; comprehensions were written as loops before, lower/comprehensions.py), with:

- its parameters bound to the call's arguments (a parameter the body never rebinds, given a name,
  reads that name; defaults that are not literals are evaluated where the ``def`` runs, as Python
  does);
- its own names (what it assigns) renamed to fresh names; the names it reads from the enclosing
  function stay, read where the call runs: Python's closures read a name's value at the call too;
- its early returns structured first (lower/structure.py), so its one ``return`` at its end gives
  the call's value; a body with no ``return`` gives ``None``.

Calls inside the body are inlined the same way (a local function passed to another one and called
there too); one that calls itself is refused. A module-level ``def`` of the same file given a local
function (``apply(act, z)`` with ``def apply(f, z): return f(z)``) is inlined at that call the same
way (for a live function, where the function its name holds is that def), so the local function's
call in it is inlined too. A module-level ``def`` of the same file called with plain values is
inlined the same way where lower/callees.py finds it straight-line, small and plain (not
decorated, no registered gradient, reading no name the caller binds); any other stays a call.
Inlined lines quote the function's lines as written (its docstring left out).

A local function may return a local function (a factory: ``act = make_act(0.5)``, then
``act(z)``): the factory's body is inlined where it is called, its parameters bound to fresh names
(the made function reads the values it was made with, as Python's closure cells hold them), and the
name it is assigned to notes the function made there, bound once; so does a name assigned a local
function (``first = act``). A list, tuple or dict display of local functions (names or lambdas) is
noted as a table, each entry called by a constant key (``layers[0](h)``, ``acts["soft"](z)``). A
local function used in any other way (returned by the differentiated function, stored beside other
values, a table iterated or read by a computed key, passed to a function of another file, called
where it runs only sometimes) is refused at that use, with a hint.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..read.names import name_nodes
from ..read.paths import display_path
from ..read.parse import KeepingTransformer, ParsedFunction, ParsedModule
from .comprehensions import HoistingWriter, QuotingRename, is_atom
from .local_scope import (_constant_key, _defaults, _literal, _literal_key, _params, _scope, _statements,
                          check_other_uses, check_reads_unbound)
from .naming import Namer
from .structure import structure
from ..read.walk import findall
from ..errors import TransformError
from .callees import globals_read, inlinable_def, reads_unbound

_LAMBDA_BINDING = m.SimpleStatementLine(
    body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Lambda())])

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())])


@dataclass(frozen=True)
class _Local:
    """A local function: its definition (a lambda as the def of its body) and, per parameter,
    the expression giving its default (a literal, or the name it was evaluated into)."""

    node: cst.FunctionDef
    defaults: dict


def inline_local_functions(pf: ParsedFunction) -> ParsedFunction:
    """``pf`` with the calls of its local functions (and of the callees lower/callees.py lets it
    inline) inlined (``pf`` itself when there are none), or a located TransformError for a use of
    one that cannot be."""
    called = {call.func.value for call in findall(pf.node.body, m.Call(func=m.Name()))}
    if not findall(pf.node.body, m.FunctionDef() | m.Lambda()) and \
            not any(inlinable_def(pf, name) for name in sorted(called)):
        return pf
    _check_bound_once(pf)
    inliner = _Inliner(pf, Namer({n.value for n in name_nodes(pf.node)}))
    body = inliner.block(pf.node.body)
    check_other_uses(pf, body, inliner.defined, inliner.tables)
    node = pf.node.with_changes(body=body)
    pf.parsed.adopt(node, pf.node)
    return replace(pf, node=node)


def _check_bound_once(pf: ParsedFunction) -> None:
    """Refuse a local function whose name is bound again in the function (or is a parameter):
    which function a call reaches would depend on the path taken."""
    scope = _scope(pf.node.body)
    lambdas = {id(line.body[0].targets[0]) for line in findall(pf.node.body, _LAMBDA_BINDING)}
    functions = {name for name, node in scope.bound
                 if isinstance(node, cst.FunctionDef) or id(node) in lambdas}
    params = {p.name.value for p in _params(pf.node.params)}
    seen: set = set()
    for name, node in scope.bound:
        if name not in functions:
            continue
        if name in seen or name in params:
            raise pf.error(node, f"the local function `{name}` is bound more than once in "
                           f"{pf.name}; s2sgrad inlines each call of a local function, so its name "
                           "must name one function", "give each function a name of its own")
        seen.add(name)


class _Inliner(HoistingWriter):
    """Inlines the calls of local functions, statement by statement; ``defined``: the local
    functions seen so far, by (fresh) name."""

    def __init__(self, pf: ParsedFunction, namer: Namer) -> None:
        super().__init__(pf.parsed, namer)
        self.pf = pf
        self.defined: dict = {}
        self.active: list = []  # the functions being inlined, innermost last (recursion)
        self.caller_names = {name for name, _ in _scope(pf.node.body).bound} | \
            {p.name.value for p in _params(pf.node.params)}
        # how often each name is bound (parameters once): a name holding a local function must
        # be bound once; the names of inlined bodies are counted as they are renamed
        self.bindings = Counter(name for name, _ in _scope(pf.node.body).bound)
        self.bindings.update(p.name.value for p in _params(pf.node.params))
        self.tables: dict = {}  # a list, tuple or dict of local functions: name -> {key: function}
        self.callees: dict = {}  # name -> the module-level def a call of it may inline, or None
        self.evaluating: list = []  # the statements (or tests) whose calls are being inlined

    def statement(self, stmt: cst.BaseStatement) -> list:
        if isinstance(stmt, cst.FunctionDef):
            return self.define(stmt, stmt)
        if isinstance(stmt, cst.While) and not findall(stmt.body, m.Continue()) and \
                any(self.wanted_call(call) for call in findall(stmt.test, m.Call())):
            return self.while_test(stmt)
        if m.matches(stmt, _LAMBDA_BINDING):
            assign = stmt.body[0]
            fn = _as_def(self.parsed, assign.targets[0].target, assign.value)
            return self.define(fn, assign.value)
        out: list = []
        for line in super().statement(stmt):
            held = self.holding(line)
            out.extend([line] if held is None else held)
        return out

    def holding(self, line: cst.BaseStatement) -> Optional[list]:
        """For ``name = value`` where ``value`` is a local function (its name, an entry of a
        table read by a constant key, what a call returned once inlined) or a list, tuple or dict
        display of them: the statements standing for it (the function or the table noted under
        ``name``, nothing written; a lambda's defaults evaluated); None for any other line."""
        if not m.matches(line, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])):
            return None
        assign = line.body[0]
        target, value = assign.targets[0].target.value, assign.value
        local = self.function_at(value)
        entries = None if local is not None else self.table_entries(value)
        if local is None and entries is None:
            return None
        if self.bindings[target] != 1:
            raise self.pf.error(line, f"`{target}` holds a local function here and is bound more "
                                "than once: s2sgrad inlines each call of a local function, so the "
                                "name must hold one function", "give each function a name of its own")
        if local is not None:
            self.defined[target] = local
            return []
        before: list = []
        table: dict = {}
        for key, element in entries:
            if isinstance(element, cst.Lambda):
                named = isinstance(key, int) or key.isidentifier()
                name = self.namer.fresh(f"{target}_{key}" if named else target)
                before.extend(self.define(_as_def(self.parsed, cst.Name(name), element), element))
                table[key] = self.defined[name]
            else:
                table[key] = self.defined[element.value]
        if not isinstance(value, cst.Dict):  # a list or tuple: read from its end too
            table.update({key - len(entries): table[key] for key, _ in entries})
        self.tables[target] = table
        return before

    def function_at(self, value: cst.BaseExpression) -> Optional[_Local]:
        """The local function ``value`` names (a name, or a table's entry by a constant key)."""
        if isinstance(value, cst.Name):
            return self.defined.get(value.value)
        key = _constant_key(value)
        if key is None or value.value.value not in self.tables:
            return None
        table = self.tables[value.value.value]
        if key not in table:
            keys = [key for key in table if not isinstance(key, int) or key >= 0]
            raise self.pf.error(value, f"`{value.value.value}` holds local functions under the "
                                f"keys {', '.join(map(repr, keys))} only", "check the key")
        return table[key]

    def table_entries(self, value: cst.BaseExpression) -> Optional[list]:
        """``[(key, name or lambda)]`` of a list, tuple or dict display (constant keys) whose
        every element is a local function's name or a lambda; None for any other value."""
        if isinstance(value, (cst.List, cst.Tuple)):
            if any(not isinstance(e, cst.Element) for e in value.elements):
                return None
            pairs = list(enumerate(e.value for e in value.elements))
        elif isinstance(value, cst.Dict):
            if any(not isinstance(e, cst.DictElement) or _literal_key(e.key) is None for e in value.elements):
                return None
            pairs = [(_literal_key(e.key), e.value) for e in value.elements]
        else:
            return None
        functions = [v for _, v in pairs if isinstance(v, cst.Lambda) or
                     (isinstance(v, cst.Name) and v.value in self.defined)]
        return pairs if pairs and len(functions) == len(pairs) else None

    def define(self, fn: cst.FunctionDef, source: cst.CSTNode) -> list:
        """Note a local function; the statements evaluating its defaults where it is defined."""
        if fn.decorators:
            raise self.pf.error(fn.decorators[0], "a decorated local function cannot be inlined",
                                "define it at module level")
        if fn.asynchronous is not None:
            raise self.pf.error(fn, "an async local function cannot be differentiated",
                                "write a plain `def`")
        star = fn.params.star_arg if isinstance(fn.params.star_arg, cst.Param) else fn.params.star_kwarg
        if star is not None:
            raise self.pf.error(star, f"the local function `{fn.name.value}` takes *args or "
                                "**kwargs, which s2sgrad does not inline yet",
                                "list its parameters explicitly")
        defaults: dict = {}
        before: list = []
        for param, default in _defaults(fn.params).items():
            if _literal(default):
                defaults[param] = default
                continue
            name = self.namer.fresh(f"{fn.name.value}_{param}")
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], default)])
            self.parsed.adopt(line.body[0], source)
            self.parsed.adopt(line, source)
            before.extend(self.statement(line))  # a call in a default is inlined too
            defaults[param] = cst.Name(name)
        self.defined[fn.name.value] = _Local(fn, defaults)
        return before

    def wanted(self, stmt: cst.SimpleStatementLine) -> bool:
        return any(self.wanted_call(call) for call in findall(stmt, m.Call()))

    def wanted_call(self, call: cst.Call) -> bool:
        """Whether ``call`` is inlined (a local function's, or a callee's given one)."""
        return isinstance(call.func, cst.Lambda) or \
            (isinstance(call.func, cst.Name) and call.func.value in self.defined) or \
            (_constant_key(call.func) is not None and call.func.value.value in self.tables) or \
            self.passes_local(call) or self.callee_def(call) is not None

    def while_test(self, stmt: cst.While) -> list:
        """``while test(...): body`` calling a local function in its test, as ``going =
        test(...)`` before the loop and at the end of its body, and ``while going:`` (its calls
        inlined at both; a body with ``continue`` is left for the refusal)."""
        name = self.namer.fresh("going")

        def evaluation() -> cst.SimpleStatementLine:
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], stmt.test)])
            self.parsed.adopt(line.body[0], stmt.test)
            self.parsed.adopt(line, stmt.test)
            self.parsed.written_as[line] = self.parsed.written_as[line.body[0]] = stmt.test
            return line

        body = self.block(stmt.body)
        body = body.with_changes(body=[*body.body, *self.statement(evaluation())])
        loop = stmt.with_changes(test=cst.Name(name), body=body,
                                 orelse=self.orelse(stmt.orelse))
        self.parsed.adopt(loop, stmt)
        self.parsed.adopt(loop.test, stmt.test)
        self.parsed.written_as[loop] = self.parsed.written_as.get(stmt, stmt)
        return [*self.statement(evaluation()), loop]

    def passes_local(self, call: cst.Call) -> bool:
        """Whether ``call`` passes a local function to a function that is not local."""
        return isinstance(call.func, cst.Name) and call.func.value not in self.defined and \
            any(isinstance(arg.value, cst.Name) and arg.value.value in self.defined for arg in call.args)

    def callee_def(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The module-level ``def`` of this file that ``call`` (by a name the caller does not
        bind) may inline, as far as the def alone decides (lower/callees.py), else None."""
        if not isinstance(call.func, cst.Name) or call.func.value in self.caller_names or \
                call.func.value in self.defined or any(arg.star for arg in call.args):
            return None
        name = call.func.value
        if name not in self.callees:
            self.callees[name] = inlinable_def(self.pf, name)
        return self.callees[name]

    def module_callee(self, call: cst.Call) -> Optional[_Local]:
        """The module-level function ``call`` calls, to inline here (lower/callees.py: not one
        being inlined, reading no name the caller binds, its arguments matching its parameters);
        None where the call stays a call. The globals it reads are reserved, so no fresh name
        hides them."""
        fn = self.callee_def(call)
        if fn is None or call.func.value in self.active or \
                not reads_unbound(fn, self.caller_names | set(self.bindings)):
            return None
        local = _Local(fn, _defaults(fn.params))
        try:
            self.arguments(call, call.func.value, local)
        except TransformError:
            return None  # the call as written fails where it runs
        for read in sorted(globals_read(fn)):
            self.namer.reserve(read)  # a global it reads: no fresh name hides it
        return local

    def module_helper(self, call: cst.Call) -> Optional[_Local]:
        """The module-level ``def`` of this file that ``call`` (passing it a local function)
        calls, as a local function to inline there; None where it is not one s2sgrad reads (of
        another file, decorated, replaced at run time, with defaults that are not literals)."""
        name = call.func.value
        if name in self.caller_names:
            return None
        node = next((stmt for stmt in self.parsed.module.body
                     if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name), None)
        if node is None or node.decorators or node.asynchronous is not None or \
                any(not _literal(d) for d in _defaults(node.params).values()):
            return None
        live = self.pf.unit.live
        if live is not None:
            code = getattr(live.get(name), "__code__", None)
            where = self.parsed.positions.get(node)
            if code is None or where is None or code.co_firstlineno != where.start.line or \
                    display_path(code.co_filename) != self.pf.unit.path:
                return None
        check_reads_unbound(self.pf, node, set(), self.caller_names, call,
                            f"`{name}`, given a local function here,")
        return _Local(node, _defaults(node.params))

    def hoisted(self, node: cst.CSTNode) -> tuple:
        replacer = _ReplaceCalls(self)
        self.evaluating.append(node)
        try:
            new = node.visit(replacer)
        finally:
            self.evaluating.pop()
        return replacer.before, new

    def inline(self, call: cst.Call, name: str, local: _Local) -> tuple:
        """``(statements, value)``: the body of ``local`` for this call, and the call's value."""
        if name in self.active:
            raise self.pf.error(call, f"the local function `{name}` calls itself: s2sgrad inlines "
                                "local functions and cannot inline a recursive one",
                                "write the recursion as a loop")
        for statement in findall(local.node.body, m.Nonlocal() | m.Global()):
            raise self.pf.error(statement, f"the local function `{name}` writes names of the "
                                "enclosing function (`nonlocal`) or globals: s2sgrad does not "
                                "inline such a function", "return the new value and assign it in "
                                "the enclosing function")
        values = self.arguments(call, name, local)
        fn = structure(local.node, self.parsed.written_as)  # one return, at its end
        body, final = self.single_exit(fn, name)
        scope = _scope(fn.body)
        # a function the body defines may outlive the call (returned): it must read the
        # parameters' values at this call, not the names the caller may bind again
        snapshot = bool(findall(fn.body, m.FunctionDef() | m.Lambda()))
        before, renames = self.parameters(call, fn, values, {bound for bound, _ in scope.bound},
                                          snapshot)
        self.bindings.update(renames.get(bound, bound) for bound, _ in scope.bound)
        rename = QuotingRename(self.parsed, renames)
        statements = [stmt.visit(rename) for stmt in body]
        value: cst.BaseExpression = cst.Name("None")
        if final is not None and final.value is not None:
            value = final.value.visit(rename)
            if not isinstance(value, cst.Name):
                result = self.namer.fresh(f"{name}_result")
                line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(result))], value)])
                self.parsed.adopt(line.body[0], final)
                self.parsed.adopt(line, final)
                quoted = self.parsed.written_as.get(final, final)  # the user's return (or lambda)
                self.parsed.written_as[line] = self.parsed.written_as[line.body[0]] = quoted
                statements.append(line)
                value = cst.Name(result)
        self.parsed.adopt(value, call)
        self.active.append(name)
        try:
            before.extend(new for stmt in statements for new in self.statement(stmt))
        finally:
            self.active.pop()
        return before, value

    def single_exit(self, fn: cst.FunctionDef, name: str) -> tuple:
        """``(statements, final return or None)`` of a structured local function: the statements
        before its one ``return``, at its end, its docstring left out (a located refusal of any
        other return)."""
        body = _statements(fn.body)
        if body and m.matches(body[0], _DOCSTRING):
            body = body[1:]  # a docstring does nothing where the body is inlined
        last = body[-1] if body else None
        final = last.body[0] if isinstance(last, cst.SimpleStatementLine) and \
            isinstance(last.body[0], cst.Return) else None
        for ret in _scope(fn.body).returns:
            if ret is not final:
                raise self.pf.error(ret, f"this `return` of the local function `{name}` cannot be "
                                    "inlined (a return inside a `with` block)",
                                    "assign the value to a name and return it at the end")
        return (body[:-1] if final is not None else body), final

    def parameters(self, call: cst.Call, fn: cst.FunctionDef, values: list, rebound: set,
                   snapshot: bool = False) -> tuple:
        """``(statements binding the parameters, renames)`` for inlining ``fn`` at ``call``: a
        parameter the body never rebinds, given a name that ``fn`` does not name, reads that name
        (unless ``snapshot``), given a literal number or string, is that literal (a node in
        ``renames``); any other is a fresh name bound to its argument; each name ``fn`` binds is
        a fresh one."""
        appears = {n.value for n in name_nodes(fn)}
        renames: dict = {}
        before: list = []
        for param, value in values:
            if isinstance(value, cst.Name) and param not in rebound and not snapshot and \
                    (value.value == param or value.value not in appears):
                renames[param] = value.value  # read the caller's name itself
                continue
            if is_atom(value) and param not in rebound and not snapshot and \
                    not findall(fn.body, m.Attribute(value=m.Name(param)) | m.Del()):
                renames[param] = value  # a literal, written where the parameter is read
                continue
            renames[param] = self.namer.fresh(param)
            self.bindings[renames[param]] += 1
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(renames[param]))],
                                                       value)])
            self.parsed.adopt(line.body[0], call)
            self.parsed.adopt(line, call)
            if self.evaluating:  # quotes the statement (or test) holding the call
                quoted = self.parsed.written_as.get(self.evaluating[-1], self.evaluating[-1])
                self.parsed.written_as[line] = self.parsed.written_as[line.body[0]] = quoted
            held = self.holding(line)  # a local function given: noted under the parameter
            before.extend([line] if held is None else held)
        params = {p.name.value for p in _params(fn.params)}
        for bound in sorted(rebound - params):
            renames[bound] = self.namer.fresh(bound)
        return before, renames

    def arguments(self, call: cst.Call, name: str, local: _Local) -> list:
        """``[(parameter, expression)]``: what each parameter of ``local`` is bound to at ``call``."""
        params = local.node.params
        positional = [*params.posonly_params, *params.params]
        by_keyword = [p.name.value for p in (*params.params, *params.kwonly_params)]
        values: dict = {}
        given = [arg for arg in call.args if arg.keyword is None]
        for arg in call.args:
            if arg.star:
                raise self.pf.error(arg, f"star-arguments in a call of the local function `{name}` "
                                    "are not supported", "pass the arguments one by one")
        if len(given) > len(positional):
            raise self.pf.error(call, f"the local function `{name}` takes {len(positional)} "
                                f"positional argument(s), {len(given)} given", "check the call")
        for param, arg in zip(positional, given):
            values[param.name.value] = arg.value
        for arg in call.args:
            if arg.keyword is None:
                continue
            keyword = arg.keyword.value
            if keyword not in by_keyword or keyword in values:
                raise self.pf.error(arg, f"the local function `{name}` has no parameter `{keyword}` "
                                    "left to give", "check the call")
            values[keyword] = arg.value
        out = []
        for param in _params(params):
            key = param.name.value
            if key not in values and key not in local.defaults:
                raise self.pf.error(call, f"this call of the local function `{name}` gives no "
                                    f"value to its parameter `{key}`", "check the call")
            out.append((key, values.get(key, local.defaults.get(key))))
        return out


def _as_def(parsed: ParsedModule, name: cst.Name, lam: cst.Lambda) -> cst.FunctionDef:
    """A lambda as the def of its body (located at the lambda)."""
    ret = cst.Return(lam.body)
    line = cst.SimpleStatementLine([ret])
    fn = cst.FunctionDef(name=cst.Name(name.value), params=lam.params, body=cst.IndentedBlock([line]))
    for node in (ret, line, fn, fn.name):
        parsed.adopt(node, lam)
    parsed.written_as[ret] = lam  # what the statement giving its value quotes
    return fn


class _ReplaceCalls(KeepingTransformer):
    """Replaces the calls of local functions an expression evaluates at once by their values,
    collecting the inlined bodies (``before``), innermost and leftmost first."""

    def __init__(self, writer: _Inliner) -> None:
        super().__init__(writer.parsed)
        self.writer = writer
        self.before: list = []
        self.anonymous = 0

    def visit_Lambda(self, node) -> bool:
        return False  # its body runs when it is called

    def visit_IfExp(self, node) -> bool:
        return False  # its branches run only sometimes; its test always (leave_IfExp)

    def visit_BooleanOperation(self, node) -> bool:
        return False  # its right side runs only sometimes; its left always

    def leave_IfExp(self, original, updated):
        return updated.with_changes(test=original.test.visit(self))

    def leave_BooleanOperation(self, original, updated):
        return updated.with_changes(left=original.left.visit(self))

    def visit_Call(self, node) -> bool:
        return not isinstance(node.func, cst.Lambda)  # (lambda z: ...)(x): its args in leave_Call

    def leave_Call(self, original, updated):
        writer = self.writer
        writer.parsed.adopt(updated, original)  # located at the user's call (refusals included)
        if isinstance(updated.func, cst.Lambda):
            updated = updated.with_changes(args=[arg.visit(self) for arg in updated.args])
            name = writer.namer.fresh("anonymous")
            fn = _as_def(writer.parsed, cst.Name(name), updated.func)
            local = _Local(fn, {p: d for p, d in _defaults(fn.params).items()})
            for default in local.defaults.values():
                if not _literal(default):
                    raise writer.pf.error(default, "a lambda called where it is written takes "
                                          "literal defaults only", "pass the value as an argument")
        elif isinstance(updated.func, cst.Name) and updated.func.value in writer.defined:
            name = updated.func.value
            local = writer.defined[name]
        elif _constant_key(updated.func) is not None and updated.func.value.value in writer.tables:
            local = writer.function_at(updated.func)
            name = local.node.name.value
        else:  # a function of this file, given a local function or inlined as a callee
            local = writer.module_helper(updated) if writer.passes_local(updated) else \
                writer.module_callee(updated)
            if local is None:
                return updated
            name = updated.func.value
        statements, value = writer.inline(updated, name, local)
        self.before.extend(statements)
        return value
