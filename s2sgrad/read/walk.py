"""Read-only walks of a libcst tree, without libcst's visitor machinery (several times faster:
no visitor dispatch, no node rebuilt per visit).

``walk(node)`` yields ``node`` and every node under it in the order a libcst visitor sees them
(preorder, children in source order), leaving out layout: whitespace, comments, newlines and
punctuation (parentheses, commas, colons...), which no question asked of code looks at.
``findall(node, matcher)`` is ``libcst.matchers.findall`` on that walk: the same nodes in the
same order. The order of a node type's children is read once from its own
``_visit_and_replace_children`` (the fields it visits, in the order it visits them).
"""

from __future__ import annotations

import inspect
import re
from typing import Callable, Iterator, Optional

import libcst as cst
import libcst.matchers as m

_VISITED_FIELD = re.compile(r"visit_\w+\(\s*self\s*,\s*\"(\w+)\"")

# Layout: nodes with nothing a question about code reads (and everything under them).
_LAYOUT = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline,
           cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
           cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Colon,
           cst.Semicolon, cst.Dot, cst.AssignEqual)

_FIELDS: dict = {}  # type -> the fields its visit reads, in order (None: not a node, or layout)


def _fields(kind: type) -> Optional[tuple]:
    """The fields of node type ``kind`` a libcst visit descends into, in its order; None for
    what is not a node or is layout (not walked)."""
    try:
        return _FIELDS[kind]
    except KeyError:
        pass
    if not issubclass(kind, cst.CSTNode) or issubclass(kind, _LAYOUT):
        found = None
    else:
        source = inspect.getsource(kind._visit_and_replace_children)
        found = tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))
    _FIELDS[kind] = found
    return found


def is_layout(node: cst.CSTNode) -> bool:
    """Whether ``node`` is layout (whitespace, a comment, punctuation): never walked."""
    return _fields(type(node)) is None


def children(node: cst.CSTNode) -> list:
    """``node``'s children that are not layout, in visit order."""
    out = []
    for name in _fields(type(node)) or ():
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(item for item in value if _fields(type(item)) is not None)
        elif _fields(kind) is not None:
            out.append(value)
    return out


def walk(node: cst.CSTNode, enter: Optional[Callable[[cst.CSTNode], bool]] = None) -> Iterator:
    """``node`` and the nodes under it, preorder in source order, without layout; ``enter(n)``
    False: ``n`` is yielded but not what is under it."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if enter is None or enter(current):
            stack.extend(reversed(children(current)))


def _node_types(matcher: object) -> Optional[tuple]:
    """The node types ``matcher`` can match (a node matcher, or ``|`` of them); None when it
    cannot tell (every node is tried)."""
    if isinstance(matcher, m.OneOf):
        kinds: tuple = ()
        for option in matcher.options:
            found = _node_types(option)
            if found is None:
                return None
            kinds += found
        return kinds
    kind = getattr(cst, type(matcher).__name__, None)
    if isinstance(kind, type) and issubclass(kind, cst.CSTNode) and \
            type(matcher).__module__.startswith("libcst.matchers"):
        return (kind,)
    return None


def findall(node: cst.CSTNode, matcher: object) -> list:
    """``libcst.matchers.findall(node, matcher)``: the nodes under ``node`` (itself included)
    that ``matcher`` matches, in visit order (libcst's own search where the matcher may match
    layout, or it cannot tell which node types it matches)."""
    kinds = _node_types(matcher)
    if kinds is None or any(issubclass(kind, _LAYOUT) for kind in kinds):
        return m.findall(node, matcher)
    return [n for n in walk(node) if (kinds is None or isinstance(n, kinds)) and m.matches(n, matcher)]
