"""Parsing (s2sgrad.read.parse): names resolved one top-level statement at a time, against the
other statements reduced to stubs, resolve exactly as libcst resolves them in the whole module."""

import pathlib

import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from s2sgrad.read.parse import parse_module

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = sorted(str(p.relative_to(ROOT)) for p in [
    *ROOT.glob("examples/*.py"), *ROOT.glob("tests/*_inputs.py"), ROOT / "tests/program_gen.py",
    ROOT / "benchmarks/cases.py", ROOT / "s2sgrad/runtime.py", ROOT / "s2sgrad/api.py"])


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
    assert checked > 20
