"""Fence: ParsedFunction -> the same function, or a located TransformError for what s2sgrad refuses.

Every refusal names what was found, where, and what to write instead.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from .parse import ParsedFunction
from .walk import findall

# (matcher, message, hint) for constructs refused anywhere in the body.
_REFUSED = (
    (m.Try(), "try/except is not supported in a differentiated function",
     "move the error handling to the caller, outside the differentiated function"),
    (m.With(asynchronous=m.Asynchronous()), "`async with` cannot be differentiated",
     "use a plain `with` block"),
    (m.With(items=[m.ZeroOrMore(), m.WithItem(asname=m.AsName(name=~m.Name())), m.ZeroOrMore()]),
     "`with` blocks are not supported in a differentiated function when they unpack what they "
     "bind (`as (a, b)`)", "bind one name (`as name`) and read its parts in the body"),
    (m.Yield() | m.Await(), "generators and coroutines cannot be differentiated",
     "return a value (e.g. an array or a tuple) instead of yielding"),
    (m.Global(), "`global` statements are not supported in a differentiated function",
     "pass the value in as an argument and return the new value"),
    (m.Nonlocal(), "`nonlocal` statements are not supported in a differentiated function",
     "pass the value in as an argument and return the new value"),
    (m.ClassDef(), "class definitions are not supported inside a differentiated function",
     "define the class at module level"),
    (m.Lambda(), "a lambda is supported in a differentiated function where it is bound to a "
     "name (or held by a list, tuple or dict of them) and called, called where it is written, or "
     "given to a function of this file; not passed to a function of another module or chosen by "
     "a condition",
     "bind it to a name (`act = lambda z: ...`) and call it here, or define a module-level "
     "function with `def` and call it"),
    (m.ListComp() | m.GeneratorExp() | m.DictComp() | m.SetComp(),  # the others were rewritten as loops (lower/comprehensions.py)
     "a comprehension evaluated only sometimes (in a lambda, a conditional expression's branch, "
     "after `and`/`or`, in an `elif` or `while` test) is not supported in a differentiated function",
     "build the list with a loop before the statement, or assign the comprehension to a name first"),
    (m.NamedExpr(), "assignment expressions (:=) are not supported",
     "assign the value in its own statement"),
    (m.Del(target=~(m.Name() | m.Tuple(elements=[m.ZeroOrMore(m.Element(value=m.Name()))]))),
     "`del` of an element or an attribute is not supported in a differentiated function",
     "build a new value without it instead (`del name` is fine)"),
    (m.Raise(), "`raise` is not supported in a differentiated function yet",
     "validate the inputs in the caller"),
    (m.Break() | m.Continue(), "this `break`/`continue` cannot be restructured",
     "use a `while` loop whose condition says when to stop, or an `if` around the rest of the body"),
    (m.Match(), "`match` statements are not supported", "use numpy expressions instead"),
    (m.Import() | m.ImportFrom(), "imports inside a differentiated function are not supported",
     "import at module level"),
    (m.FunctionDef(), "nested function definitions are not supported yet",
     "define the helper at module level; s2sgrad differentiates calls to it"),
    (m.Dict(elements=[m.ZeroOrMore(), m.StarredDictElement(), m.ZeroOrMore()]),
     "`**` in a dict display is not supported in a differentiated function",
     "list the keys and values explicitly"),
)


_ANY_REFUSED = m.OneOf(*(matcher for matcher, _, _ in _REFUSED))


def _star_params(fn: cst.FunctionDef) -> bool:
    p = fn.params
    return isinstance(p.star_arg, cst.Param) or p.star_kwarg is not None


def fence(pf: ParsedFunction) -> ParsedFunction:
    """Raise TransformError at the first construct outside the supported subset."""
    _check_signature(pf)
    _check_refused(pf)
    _check_body(pf)
    return pf


def _check_signature(pf: ParsedFunction) -> None:
    fn = pf.node
    if fn.asynchronous is not None:
        raise pf.error(fn, f"async function {fn.name.value} cannot be differentiated",
                       "write a plain `def` function")
    if isinstance(fn.params.star_arg, cst.Param):  # left where no call gave it a structure
        star = fn.params.star_arg.name.value
        raise pf.error(fn.params.star_arg, f"{fn.name.value} takes *{star}: s2sgrad makes the "
                       "code of the function it differentiates per call, for the arrays passed "
                       "there (s2sgrad.grad, @differentiable); here no call says how many (a "
                       "function called from it, or the command line, which never runs the file)",
                       "list the parameters, or pass the arrays as one tuple")
    if _star_params(fn):
        raise pf.error(fn.params.star_kwarg, f"{fn.name.value} takes **kwargs, which s2sgrad "
                       "cannot differentiate", "list the parameters explicitly")
    if fn.params.posonly_params:
        raise pf.error(fn.params.posonly_params[0], "positional-only parameters are not supported",
                       "remove the `/` from the signature")


def _check_refused(pf: ParsedFunction) -> None:
    """The first refused construct in source order, with the message of the rule it breaks."""
    fn = pf.node
    found = []
    for node in findall(fn.body, _ANY_REFUSED):  # one pass, then say which rule it breaks
        for matcher, message, hint in _REFUSED:
            if m.matches(node, matcher):
                found.append((pf.location(node), message, hint, node))
                break
    if found:
        found.sort(key=lambda item: (item[0].line, item[0].col))
        loc, message, hint, node = found[0]
        raise pf.error(node, message, hint)


def _check_body(pf: ParsedFunction) -> None:
    fn = pf.node
    for node in findall(fn.body, m.Return()):
        if node is not _last_statement(fn):
            raise pf.error(node, "a `return` inside a `with` block is not supported (returns in "
                           "loops and branches are)",
                           "assign the value to a name inside the block and return it after the block")
    for node in findall(fn.body, m.For()):
        if node.asynchronous is not None:
            raise pf.error(node, "`async for` cannot be differentiated", "use a plain `for` loop")
    for node in findall(fn.body, m.Assign() | m.AugAssign() | m.AnnAssign()):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            _check_target(pf, target)
    for node in findall(fn.body, m.Call()):
        for arg in node.args:
            if arg.star:
                raise pf.error(arg, "star-arguments (*args, **kwargs) in calls are not supported",
                               "pass the arguments one by one")
    for node in findall(fn.body, m.StarredElement()):
        raise pf.error(node, "starred elements are not supported", "list the elements explicitly")


def _check_target(pf: ParsedFunction, target: cst.BaseExpression) -> None:
    if isinstance(target, cst.Name):
        return
    if isinstance(target, (cst.Tuple, cst.List)):
        for el in target.elements:
            if isinstance(el, cst.StarredElement) or not isinstance(el.value, (cst.Name, cst.Tuple, cst.List)):
                raise pf.error(el, "only names (and tuples of names) can be unpacked into",
                               "unpack into names, then use them")
            if not isinstance(el.value, cst.Name):
                _check_target(pf, el.value)
        return
    if isinstance(target, cst.Subscript):
        if isinstance(target.value, cst.Name):
            return
        raise pf.error(target, "only a local array can be written by index (`y[i] = ...`)",
                       "write into a local name, e.g. `y = y.copy(); y[i] = ...`")
    raise pf.error(target, "assignment to an attribute is not supported in a differentiated function",
                   "assign to a local name and return it")


def _last_statement(fn: cst.FunctionDef):
    body = fn.body
    last = body.body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return last.body[-1]
    if isinstance(body, cst.SimpleStatementSuite):
        return body.body[-1]
    return last
