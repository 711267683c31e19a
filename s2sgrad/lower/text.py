"""Code text of libcst nodes: a node -> its source text, a statement's text on one line (for
provenance comments), and the transformers that put bracketed code on one line and rename locals
to their SSA names."""

from __future__ import annotations

import libcst as cst

OPENING = "([{"
CLOSING = ")]}"


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def one_line_text(text: str) -> str:
    """A statement's text on one line (for a provenance comment): ``y = (a\n + b)`` -> ``y = (a + b)``.

    Runs of whitespace become one space, and no space is kept just inside a bracket."""
    words = text.split()
    if not words:
        return ""
    out = [words[0]]
    for before, word in zip(words, words[1:]):
        if before[-1] not in OPENING and word[0] not in CLOSING:
            out.append(" ")
        out.append(word)
    return "".join(out)


class OneLine(cst.CSTTransformer):
    """Line breaks (and comments) inside brackets become one space: a statement written over
    several lines stays valid once lowering drops its outer parentheses."""

    def leave_ParenthesizedWhitespace(self, original, updated) -> cst.BaseParenthesizableWhitespace:
        return cst.SimpleWhitespace(" ")


def one_line(node: cst.CSTNode) -> cst.CSTNode:
    """``node`` with the whitespace inside its brackets on one line."""
    return node.visit(OneLine())


class FieldNames:
    """Mixin for a transformer that rewrites Names: it notes the Names that are attribute fields
    (``np.cos``'s ``cos``) or keywords, which ``is_field`` then tells apart from names read."""

    fields: set

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.fields.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.fields.add(id(node.keyword))
        return True

    def is_field(self, name: cst.Name) -> bool:
        return id(name) in self.fields


class Renamer(FieldNames, OneLine):
    """Renames local Names (not attribute fields, not keyword names) through ``mapping``; ``reads``
    lists the new names it wrote, in order, once each (an attribute field or keyword spelled like
    a local, ``np.cos`` beside a local ``cos``, reads nothing)."""

    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping
        self.reads: list = []
        self.fields: set = set()

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.mapping.get(original.value)
        if new is None or self.is_field(original):
            return updated
        if new not in self.reads:
            self.reads.append(new)
        return updated.with_changes(value=new)
