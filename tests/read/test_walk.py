"""read/walk.py: the fast read-only walk sees what libcst's visitors see, in the same order."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest

from s2sgrad.program import calls_in
from s2sgrad.read.names import name_nodes
from s2sgrad.read.walk import _LAYOUT, findall, walk

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "generated").glob("*.py"),
                  *(ROOT / "s2sgrad" / "lower" / f"{name}.py" for name in ("closures", "methods")),
                  ROOT / "tests" / "property" / "program_gen.py"])


class _Preorder(cst.CSTVisitor):
    """libcst's own visit order, layout (and what is under it) left out."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, _LAYOUT):
            return False
        self.seen.append(node)
        return True


class _Names(cst.CSTVisitor):
    """name_nodes as it was written with a libcst visitor."""

    def __init__(self, reads_only: bool) -> None:
        super().__init__()
        self.reads_only = reads_only
        self.found: list = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.reads_only:
            node.value.visit(self)
        return not self.reads_only

    def visit_Arg(self, node: cst.Arg) -> bool:
        if self.reads_only:
            node.value.visit(self)
        return not self.reads_only

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)


MATCHERS = (m.Call(), m.Name(), m.Name("np"), m.AssignTarget() | m.AugAssign() | m.For(),
            m.Call(func=m.Name()), m.Call(func=m.Attribute(attr=m.Name("append"))), m.Return(),
            m.FunctionDef() | m.Lambda(), m.Arg(keyword=m.Name("axis")), m.Comma(),
            m.MatchIfTrue(lambda node: isinstance(node, cst.Integer)))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_walk_and_findall_match_libcst(path):
    module = cst.parse_module(path.read_text())
    expected = _Preorder()
    module.visit(expected)
    assert [id(n) for n in walk(module)] == [id(n) for n in expected.seen]
    for matcher in MATCHERS:
        assert [id(n) for n in findall(module, matcher)] == \
            [id(n) for n in m.findall(module, matcher)], matcher
    for reads_only in (False, True):
        names = _Names(reads_only)
        module.visit(names)
        assert [id(n) for n in name_nodes(module, reads_only)] == [id(n) for n in names.found]
    assert [id(n) for n in calls_in(module)] == [id(n) for n in m.findall(module, m.Call())]
    assert len(expected.seen) > 50


def test_walk_skips_what_enter_refuses():
    module = cst.parse_module("def f(x):\n    return g(h(x))\n")
    outer = [n for n in walk(module, enter=lambda n: not isinstance(n, cst.Call))
             if isinstance(n, cst.Call)]
    assert [cst.Module([]).code_for_node(c) for c in outer] == ["g(h(x))"]


@pytest.mark.parametrize("name", ["closure_inputs.py", "class_inputs.py"])
def test_qualified_names_match_libcst_provider(name):
    """read/parse.QualifiedNames (scopes asked per node, on demand) gives what libcst's
    QualifiedNameProvider gives, for every node of every top-level statement."""
    from libcst.metadata import MetadataWrapper, QualifiedNameProvider

    from s2sgrad.read.parse import _stub, parse_module

    path = ROOT / "tests" / "inputs" / name
    parsed = parse_module(path.read_text(), str(path))
    checked = 0
    for index, statement in enumerate(parsed.module.body):
        body = [s if i == index else _stub(s) for i, s in enumerate(parsed.module.body)]
        wrapper = MetadataWrapper(parsed.module.with_changes(body=body), unsafe_skip_copy=True)
        inside = _Preorder()
        statement.visit(inside)
        own = {id(n) for n in inside.seen}
        for node, value in wrapper.resolve(QualifiedNameProvider).items():
            if id(node) in own:
                got = value() if callable(value) else value
                assert parsed.qualnames.get(node) == (frozenset(got) if got else None)
                checked += bool(got)
    assert checked > 100
