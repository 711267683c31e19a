"""What a temporary is named after: an operand, an expression kept verbatim or a subscript -> a
short description (``h_times_w``, ``x_shape``, ``A_1_neg1``) for Namer.temp."""

from __future__ import annotations

from typing import Any

import libcst as cst

from .ir import Const, Var
from .text import code


def short(op: Any) -> str:
    """An operand in a few characters: its name, its constant's code, or ``items`` (a display)."""
    if isinstance(op, Var):
        return op.name
    if isinstance(op, Const):
        return describe_verbatim(op.node)
    return "items"


def describe_verbatim(node: cst.CSTNode) -> str:
    text = code(node)
    text = text.replace(".", "_").replace("-", "neg").replace(":", "_")
    return text


def describe_slice(sub: cst.Subscript) -> str:
    parts = []
    for el in sub.slice:
        text = code(el.slice).replace(" ", "")
        parts.append(text.replace(":", "_").replace("-", "neg") or "all")
    return "_".join(parts)
