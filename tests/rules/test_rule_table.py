"""The rule table's own invariants: templates only leave out runtime-helper arguments whose
defaults the helper shares, so a left-out argument never changes a gradient."""

import inspect

import libcst.matchers as m
import pytest

from s2sgrad import runtime
from s2sgrad.rules import DEFAULT_TABLE
from s2sgrad.rules.table import defvjp, parse_template, validate

RULES = sorted(DEFAULT_TABLE.rules.values(), key=lambda r: r.name)


def _helper_calls(template):
    node = parse_template(template)
    return m.findall(node, m.Call(func=m.Attribute(value=m.Name("s2s"))))


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_helper_defaults_match_rule_defaults(rule):
    defaults = {p.name: p.default for p in getattr(rule, "params", ())}
    for own, template in getattr(rule, "vjps", ()):
        for call in _helper_calls(template):
            helper = getattr(runtime, call.func.attr.value)
            sig = inspect.signature(helper)
            names = list(sig.parameters)
            for position, arg in enumerate(call.args):
                if not m.matches(arg.value, m.Name()) or arg.value.value not in defaults:
                    continue
                if arg.value.value == own:
                    continue  # a template runs only when its own parameter was passed
                rule_default = defaults[arg.value.value]
                if rule_default is None:
                    continue
                target = arg.keyword.value if arg.keyword is not None else names[position]
                helper_default = sig.parameters[target].default
                assert helper_default is not inspect.Parameter.empty, (
                    f"{rule.name}: s2s.{call.func.attr.value}({target}) has no default but the "
                    f"rule leaves it out when the call does")
                assert repr(helper_default) == repr(eval(rule_default)), (
                    f"{rule.name}: s2s.{call.func.attr.value} default {target}={helper_default!r} "
                    f"differs from the rule's {rule_default}")


@pytest.mark.parametrize("name", sorted(DEFAULT_TABLE.rules))
def test_rule_templates_are_valid(name):
    validate(DEFAULT_TABLE.rules[name])


@pytest.mark.parametrize("signature, templates", [
    ("numpy.fake(x)", {"y": "g"}),  # a template for a parameter the rule lacks
    ("numpy.fake(x)", {"x": "g * z"}),  # reads a name it cannot see
    ("numpy.fake(x)", {"x": "s2s.no_such_helper(g)"}),
])
def test_invalid_templates_are_caught(signature, templates):
    with pytest.raises(AssertionError):
        validate(defvjp(signature, **templates))


def test_every_runtime_helper_has_a_rule_or_a_reason():
    # generated code calls them, and s2sgrad reads generated code again (grad of grad)
    from s2sgrad.rules import helpers

    names = {f"s2sgrad.runtime.{n}": n for n in runtime.__all__}
    covered = set(DEFAULT_TABLE.rules) | set(DEFAULT_TABLE.nondiff)
    missing = sorted(n for q, n in names.items() if q not in covered and n not in helpers.NO_RULE)
    assert not missing, f"runtime helpers with neither a rule, a zero derivative nor a reason: {missing}"
    stale = sorted(n for n in helpers.NO_RULE if n not in runtime.__all__ or f"s2sgrad.runtime.{n}" in covered)
    assert not stale, f"NO_RULE names a helper that is not one or that has a rule: {stale}"
