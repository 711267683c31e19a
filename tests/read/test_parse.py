"""Parsing (s2sgrad.read.parse): names resolved one top-level statement at a time, against the
other statements reduced to stubs, resolve exactly as libcst resolves them in the whole module."""

import pathlib

import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from s2sgrad.read.parse import parse_module

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = sorted(str(p.relative_to(ROOT)) for p in [
    *ROOT.glob("examples/*.py"), *ROOT.glob("tests/inputs/*_inputs.py"), ROOT / "tests/property/program_gen.py",
    ROOT / "benchmarks/cases.py", *ROOT.glob("s2sgrad/runtime/*.py"), ROOT / "s2sgrad/api.py"])


@pytest.mark.slow  # resolves whole modules (~45 s): the slow tier, in CI too
@pytest.mark.parametrize("path", MODULES)
def test_lazy_names_match_whole_module_resolution(path):
    text = (ROOT / path).read_text()
    parsed = parse_module(text, path)
    by_code = {}  # compare by position: the two parses have different node objects
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    resolved = wrapper.resolve_many([QualifiedNameProvider, PositionProvider])
    for node, names in resolved[QualifiedNameProvider].items():
        got = names() if callable(names) else names
        if isinstance(node, (cst.Name, cst.Attribute)) and got:
            pos = resolved[PositionProvider][node]
            by_code[(pos.start, pos.end, type(node).__name__)] = \
                {q.name for q in got}
    checked = 0
    for node in m.findall(parsed.module, m.Name() | m.Attribute()):
        pos = parsed.positions.get(node)
        key = (pos.start, pos.end, type(node).__name__)
        if key not in by_code:
            continue
        got = parsed.qualnames.get(node) or frozenset()
        assert {q.name for q in got} == by_code[key], (path, key, cst.Module([]).code_for_node(node))
        checked += 1
    assert checked > 20 or checked >= len(by_code) > 5  # a small module: every name it has


@pytest.mark.parametrize("path", MODULES)
def test_positions_per_statement_match_whole_module_positions(path):
    text = (ROOT / path).read_text()
    parsed = parse_module(text + "\n", path)  # a text of its own: a fresh, unresolved parse
    whole = MetadataWrapper(parsed.module, unsafe_skip_copy=True).resolve(PositionProvider)
    checked = 0
    for stmt in reversed(parsed.module.body):  # last statements first: lazy lookups in any order
        for node in _all_nodes(stmt):
            assert parsed.positions[node] == whole[node], (path, cst.Module([]).code_for_node(node))
            checked += 1
    assert checked > 100


def _all_nodes(root):
    found = []

    class Every(cst.CSTVisitor):
        def on_visit(self, node):
            found.append(node)
            return True

    root.visit(Every())
    return found


ODD_LAYOUTS = {
    "crlf": "import numpy as np\r\n\r\n# c\r\ndef f(x):\r\n    return x\r\n\r\n\r\n@dec\r\n# between\r\n"
            "@dec2(\r\n  1)\r\n\r\ndef g(y):\r\n    return y\r\n",
    "decorator_continued": "x = 1\n@\\\ndec\ndef f(x):\n    return x\n",
    "form_feed": "x = 1\n\x0c\ndef f(x):\n    return x\n",
    "semicolons_and_comments": "a = 1; b = 2\n\n# c\nclass C:\n    pass\n    # inner\n# outer\nif a:\n"
                               "    b = 3\nelse:\n    b = 4\nasync def h():\n    pass\n",
    "statement_continued": "a = \\\n  1\nb = (1,\n 2)\ndef f():\n    return a\n",
}


@pytest.mark.parametrize("name", sorted(ODD_LAYOUTS))
def test_positions_per_statement_in_odd_layouts_match_whole_module_positions(name):
    """CRLF lines, a continued decorator line, a form feed, semicolons, comments after a block:
    the lines counted before each statement put every node where libcst's whole-module pass
    does."""
    parsed = parse_module(ODD_LAYOUTS[name], name)
    whole = MetadataWrapper(parsed.module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = [node for stmt in reversed(parsed.module.body) for node in _all_nodes(stmt)]
    assert nodes and all(parsed.positions[node] == whole[node] for node in nodes if node in whole)
