"""Gradients registered by users: register_gradient(qualified name) -> a Rule of the table whose
``function`` is the user's gradient.

A registered gradient is a Python function ``rule(g, ans, *args, **kwargs)`` returning one adjoint
per positional argument of the primal (a tuple for several, ``None`` for zero). Generated code calls
it by name. Registrations made with the decorator at run time live in this process's registry;
the CLI, which never runs user code, finds ``@register_gradient("name")`` definitions statically.
"""

from __future__ import annotations

from typing import Callable

from .boundary import api_boundary

_REGISTERED: dict = {}  # qualified name -> rule function, in registration order


def registered_rule(name: str, function: str, module: str):
    """The table's rule for a gradient the user registered for ``name``: generated code calls
    ``function`` (found in ``module``) as ``function(g, ans, *args, **kwargs)``. (The pipeline
    calls it; ``import s2sgrad`` loads no libcst.)"""
    from .rules.table import Rule

    return Rule(name, (), (), function=function, module=module,
                reverse_only="a registered gradient is a reverse-mode rule (register_gradient)")


@api_boundary
def register_gradient(name: str) -> Callable:
    """Decorator: use the decorated ``rule(g, ans, *args, **kwargs)`` as the reverse rule of the
    function called ``name`` (its qualified name, e.g. ``"scipy.special.erfcx"`` or
    ``"mymodel.opaque_op"``), for functions with no source or no rule (TF's RegisterGradient)."""
    if not isinstance(name, str) or not name or " " in name:
        from .errors import UsageError

        raise UsageError(f"register_gradient needs a qualified function name, got {name!r}")

    def decorate(rule: Callable) -> Callable:
        _REGISTERED[name] = rule
        return rule

    return decorate


def registered() -> dict:
    """A copy of the run-time registry: qualified name -> rule function."""
    return dict(_REGISTERED)
