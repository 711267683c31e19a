"""Name nodes of a libcst tree: node -> the Name nodes in it, in source order (one visitor pass;
libcst's matcher search is several times slower on the same tree)."""

from __future__ import annotations

import libcst as cst


class _Names(cst.CSTVisitor):
    def __init__(self, reads_only: bool) -> None:
        super().__init__()
        self.reads_only = reads_only
        self.found: list = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if not self.reads_only:
            return True
        node.value.visit(self)  # the field name after the dot is not a name
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        if not self.reads_only:
            return True
        node.value.visit(self)  # a keyword is not a name
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.found.append(node)


def name_nodes(node: cst.CSTNode, reads_only: bool = False) -> list:
    """Every Name node under ``node``; with ``reads_only``, not attribute fields (``np.exp``'s
    ``exp``) and not keyword names."""
    visitor = _Names(reads_only)
    node.visit(visitor)
    return visitor.found
