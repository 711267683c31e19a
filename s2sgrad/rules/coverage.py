"""The coverage table, generated from the rule table: a RuleTable -> a Markdown page
(docs/coverage.md) with a row per function a user's code calls (numpy, scipy, ndarray members,
Python's operators and builtins; not s2sgrad's own runtime helpers): its reverse mode (a rule),
its forward mode (the rule's tangent, or by transposition of the reverse rule where the rule is
reverse-only, with the rule's stated reason), and the functions with a zero derivative or refused
with what to write instead. ``python -m s2sgrad.rules.coverage`` prints it; a test checks that
docs/coverage.md is what it prints."""

from __future__ import annotations

from .table import RuleTable, spoken

# How forward mode gets a rule's tangent (Rule.tangent_route), as the table says it.
_FORWARD = {"own": "its tangent rule", "joint": "joint tangent (linear in all its inputs)",
            "linear": "linear: the function of the tangents",
            "elementwise": "from its elementwise derivative"}

# Namespaces of s2sgrad's own names (runtime helpers, generated-code constructs): not listed.
_OWN = ("s2sgrad.", "s2s.", "list.", "dict.", "tuple.")


def user_facing(name: str) -> bool:
    """Whether ``name`` is a function a user's code calls (not one of s2sgrad's own)."""
    return not name.startswith(_OWN)


def forward_mode(table: RuleTable, name: str) -> str:
    """How forward mode differentiates ``name``: its tangent route, or transposition of the
    reverse rule with the rule's reason; "" where ``name`` has no rule."""
    rule = table.get(name) or table.indexed_call(name)
    if rule is None:
        return ""
    if rule.tangent_route:
        return _FORWARD[rule.tangent_route]
    why = rule.reverse_only or "no tangent rule"
    return f"by transposing the reverse rule ({why})"


def coverage_markdown(table: RuleTable) -> str:
    """The coverage page for ``table``."""
    rules = sorted(name for name in table.rules if user_facing(name))
    indexed = sorted(rule.indexed for rule in table.rules.values() if rule.indexed)
    lines = ["# Coverage", "",
             "Generated from s2sgrad's rule table by `python -m s2sgrad.rules.coverage` (a test checks",
             "this page against it). Every function listed has a reverse-mode rule, so `grad`, `vjp`",
             "and `jacrev` differentiate it; the forward-mode column says how `jvp`, `jacfwd` and",
             "`hessian` (forward over reverse) get its tangent. Second and higher order go through the",
             "same rules: the runtime helpers the rules call have rules of their own.", "",
             f"## Functions with a rule ({len(rules) + len(indexed)})", "",
             "| function | forward mode |", "|---|---|"]
    lines += [f"| `{spoken(name)}` | {forward_mode(table, name)} |" for name in rules]
    lines += [f"| `{spoken(name)}[...]` | {forward_mode(table, name)} |" for name in indexed]
    zero = sorted(name for name in table.nondiff if user_facing(name) and "." in name)
    lines += ["", f"## Functions with a zero derivative ({len(zero)})", "",
              "Piecewise-constant results, shapes, comparisons, integer and boolean results:",
              "differentiated code treats them as constants.", "",
              ", ".join(f"`{spoken(name)}`" for name in zero)]
    refused = sorted(name for name in table.instead if user_facing(name))
    lines += ["", f"## Refused, with what to write instead ({len(refused)})", "",
              "| function | what to write instead |", "|---|---|"]
    lines += [f"| `{spoken(name)}` | {table.instead[name].replace('|', '/')} |" for name in refused]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from . import DEFAULT_TABLE

    print(coverage_markdown(DEFAULT_TABLE), end="")
