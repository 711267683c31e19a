"""The coverage page (docs/coverage.md) is what the rule table generates, and it covers every
function of autograd's list (tests/rules/numpy_rules_target.txt) in both modes or refuses it with
what to write instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from s2sgrad.rules import DEFAULT_TABLE
from s2sgrad.rules.coverage import coverage_markdown, forward_mode

ROOT = Path(__file__).resolve().parents[2]
TARGETS = Path(__file__).with_name("numpy_rules_target.txt")
# autograd's names for Python's operators, as the rule table names them
OPERATORS = {"op:%": "operator.mod", "op:*": "operator.mul", "op:**": "operator.pow",
             "op:+": "operator.add", "op:-": "operator.sub", "op:/": "operator.truediv",
             "op:@": "operator.matmul", "op:abs()": "builtins.abs", "op:unary -": "operator.neg",
             "op:x[idx]": "operator.getitem"}


def _targets() -> list:
    names = [line.split("\t")[0] for line in TARGETS.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    # augmented assignments lower to the binary operators above
    return [n for n in names if not n.startswith("op:augassign")]


def _qualified(name: str) -> str:
    if name in OPERATORS:
        return OPERATORS[name]
    return "numpy." + name[len("np."):] if name.startswith("np.") else name


def test_the_page_is_what_the_rule_table_generates():
    page = (ROOT / "docs" / "coverage.md").read_text()
    assert page == coverage_markdown(DEFAULT_TABLE), (
        "docs/coverage.md is stale: python -m s2sgrad.rules.coverage > docs/coverage.md")


@pytest.mark.parametrize("name", _targets())
def test_every_function_autograd_differentiates_is_covered_or_refused_with_advice(name):
    qualified = _qualified(name)
    if qualified in DEFAULT_TABLE.instead:  # refused on purpose: the advice is on the page
        assert len(DEFAULT_TABLE.instead[qualified]) > 40
        return
    assert DEFAULT_TABLE.get(qualified) or DEFAULT_TABLE.indexed_call(qualified), \
        f"{name}: no rule and no stated refusal"
    assert forward_mode(DEFAULT_TABLE, qualified)
