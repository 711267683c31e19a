"""What s2sgrad says about a primitive it has no derivative for: a function with no rule (and
what the rule table offers instead), an attribute or method numpy arrays do not have (one of the
user's own objects, which s2sgrad does not follow), or a method of a user object called by name."""

from __future__ import annotations

import types
from typing import Any, Callable, Optional

import libcst as cst
import numpy as np

from ..errors import Location, TransformError
from ..lower.ir import Stmt, Var, operand_vars
from ..rules.table import RuleTable

_FOLLOW = ("s2sgrad reads the methods of your classes defined in this function's file, called on a "
           "global, on an object built here, or on an argument (a differentiated dataclass, or one "
           "not differentiated, given at a call; for the command line, which never runs the "
           "file, annotate that argument with its class: `model: LinearModel`); otherwise "
           "move the method's body into a module-level `def` that takes the arrays (the method "
           "can call it), and call that here")


def _owner(stmt: Stmt) -> str:
    owner = stmt.prim.args[0] if stmt.prim.args else None
    return owner.name if isinstance(owner, Var) else "the object"


def object_member(stmt: Stmt) -> Optional[TransformError]:
    """The refusal of ``owner.name`` or ``owner.name(...)`` when numpy arrays have no ``name``
    (``owner`` is then one of the user's objects), else None; ``member_of`` names ``owner``:
    the API raises it at a call, where a pytree argument or an argument of one of the file's
    classes there is read instead (tree_arguments.py)."""
    op = stmt.prim.op
    if not op.startswith("ndarray.") or hasattr(np.ndarray, op.split(".", 1)[1]):
        return None
    member, owner = op.split(".", 1)[1], _owner(stmt)
    loc = stmt.prim.location or stmt.origin.location
    if isinstance(stmt.expr, cst.Call):
        err = TransformError(
            f"`{owner}.{member}(...)` calls a method numpy arrays do not have, with values that "
            f"carry a derivative; s2sgrad cannot read this method (its object's class is not "
            f"known here, or not defined in this file)", loc, _FOLLOW)
    else:
        err = TransformError(
            f"`{owner}.{member}` reads an attribute numpy arrays do not have from `{owner}`, which "
            "carries a derivative; s2sgrad differentiates arrays and floats, not objects", loc,
            f"pass `{member}` as an argument of its own and differentiate with respect to it; for "
            "a method, s2sgrad.grad(obj.method) differentiates its explicit arguments, with the "
            "object's attributes as constants")
    err.member_of = owner  # raised at a call: a pytree or an object of the file's classes there is read
    return err


def called_value(stmt: Stmt, active: Callable[[str], bool]) -> Optional[TransformError]:
    """The refusal of ``fn(...)`` where ``fn`` is a variable (what it calls is not known by
    name), worded for whether ``fn`` itself carries a derivative (a pullback, a closure)."""
    called = stmt.prim.called_value
    if called is None:
        return None
    callee, loc = stmt.prim.callee, stmt.prim.location or stmt.origin.location
    if any(active(n) for n in operand_vars(called)):
        return TransformError(
            f"`{callee}(...)` calls `{callee}`, a value this function computes from values that "
            "carry a derivative; s2sgrad cannot see what calling it computes, so it cannot "
            "differentiate through it", loc,
            "call a function by its name (a `def` s2sgrad can read) with the values as "
            "arguments; s2sgrad differentiates the pullback of `out, pullback = "
            "s2sgrad.vjp(f, x)` where it is only called, in the function that made it")
    return TransformError(
        f"`{callee}(...)` calls the value of the variable `{callee}` with arguments that carry a "
        "derivative; s2sgrad knows what a call computes from the function named at the call",
        loc, "call the function by its name (`np.cos(x)`, or a `def` s2sgrad can read)")


def no_rule(stmt: Stmt, table: RuleTable, active: Callable[[str], bool]) -> TransformError:
    """The refusal of a primitive with neither a rule nor source s2sgrad can read (``active``:
    whether a name carries a derivative)."""
    found = object_member(stmt) or called_value(stmt, active)
    if found is not None:
        return found
    name = stmt.prim.op
    what = f"the method `.{name.split('.', 1)[1]}`" if name.startswith("ndarray.") else f"`{name}`"
    alternative = table.suggest(name)
    register = f"give it a rule with s2sgrad.register_gradient({name!r})"
    if name.startswith(("s2sgrad.", "builtins.")) and alternative:
        hint = alternative  # s2sgrad's own transformations take no registered rule
    else:
        hint = f"{alternative}; or {register}" if alternative else \
            f"{register}, or rewrite the expression with supported numpy functions"
    head, _, member = name.partition(".")
    if "." in name and all(not key.startswith(head + ".") for key in table.rules):
        hint = (f"if `{head}` is one of your objects: s2sgrad reads a method only where it knows "
                f"the object's class (the command line reads the file and never runs it: it knows "
                f"the class of an object built in the function); {_FOLLOW}. Otherwise {hint}")
        if "." not in member and hasattr(np.ndarray, member):
            hint = (f"if `{head}` is a numpy array s2sgrad could not see (the command line "
                    f"reads the file and never runs it): call `np.{member}({head}, ...)` "
                    f"instead, or use the decorator or s2sgrad.grad, which see the value. "
                    f"{hint[0].upper()}{hint[1:]}")
    return TransformError(f"no derivative rule for {what}, and it has no Python source s2sgrad "
                          "can read", stmt.prim.location or stmt.origin.location, hint)


def refuse_user_method(callee: str, value: Any, location: Optional[Location]) -> None:
    """Refuse ``model.loss(x)`` when ``model.loss`` is a method of a user object, and
    ``Model(W, b)`` when ``Model`` is a class of the user's (an object built from values that
    carry a derivative)."""
    if isinstance(value, type) and value.__module__.split(".")[0] not in \
            {"numpy", "builtins", "s2sgrad", "scipy", "collections", "typing"}:
        raise TransformError(
            f"`{callee}(...)` builds an object of your class `{value.__qualname__}` from values "
            "that carry a derivative; s2sgrad differentiates arrays and floats, and does not "
            "follow objects built inside a differentiated function",
            location or Location("<unknown>", 0, 0, ""),
            "s2sgrad reads an object built here where its class is defined in this file and its "
            "`__init__` only stores attributes, and the object is only read (its attributes, "
            "methods and properties); otherwise keep the arrays in names of their own and call a "
            "module-level function with them, or build the object in the caller and pass it in (a "
            "dataclass or registered pytree argument is differentiated by its array fields)")
    if not (isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType)):
        return
    cls = type(value.__self__)
    if cls.__module__.split(".")[0] in {"numpy", "builtins", "s2sgrad", "scipy"}:
        return
    raise TransformError(
        f"`{callee}` is a method of `{cls.__qualname__}` (your class) that s2sgrad cannot read "
        "here: its class is not defined in this file, or the method was replaced at run time",
        location or Location("<unknown>", 0, 0, ""),
        f"{_FOLLOW}; or differentiate the method itself with s2sgrad.grad({callee}), which "
        "treats the object's attributes as constants")
