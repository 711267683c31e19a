"""User rules: the rule table -> the same plus the gradients users registered, found at run time
(this process's registry) and statically (``@register_gradient("name")`` definitions in the
modules of the functions being transformed)."""

from __future__ import annotations

from .. import registry
from ..read.project import registered_in_source
from ..registry import registered_rule
from .table import RuleTable


def with_user_rules(table: RuleTable, functions: tuple) -> tuple:
    """``table`` plus the gradients users registered: at run time (this process's registry) and,
    statically, ``@register_gradient("name")`` definitions in the modules of ``functions``.
    Returns the table and the run-time rule functions generated code must be given by name."""
    rules, live = {}, {}
    for name, fn in sorted(registry.registered().items()):
        function = getattr(fn, "__name__", "rule")
        rules[name] = registered_rule(name, function, getattr(fn, "__module__", ""))
        live[function] = fn
    for name, function, module in registered_in_source(functions):
        rules.setdefault(name, registered_rule(name, function, module))
    if not rules:
        return table, live
    return table.with_rules(tuple(rules[k] for k in sorted(rules))), live
