"""Name nodes of a libcst tree: node -> the Name nodes in it, in source order (one walk of the
tree, read/walk.py; libcst's visitors and matcher search are several times slower)."""

from __future__ import annotations

import libcst as cst

from .walk import children


def name_nodes(node: cst.CSTNode, reads_only: bool = False) -> list:
    """Every Name node under ``node``; with ``reads_only``, not attribute fields (``np.exp``'s
    ``exp``) and not keyword names."""
    found: list = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        if kind is cst.Name:
            found.append(current)
        elif reads_only and (kind is cst.Attribute or kind is cst.Arg):
            stack.append(current.value)  # the field after the dot, a keyword: not names read
        else:
            stack.extend(reversed(children(current)))
    return found
