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


class Renamer(OneLine):
    """Renames local Names (not attribute fields, not keyword names) through ``mapping``; ``reads``
    lists the new names it wrote, in order, once each."""

    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping
        self.reads: list = []

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.mapping.get(original.value)
        if new is None:
            return updated
        if new not in self.reads:
            self.reads.append(new)
        return updated.with_changes(value=new)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)
