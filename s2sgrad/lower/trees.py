"""Tree parameters: a ParsedFunction and the structures (``trees.TreeDef``) of some of its
parameters -> the same function taking each such parameter's leaves as parameters of their own,
named after their paths (``params_W1``, ``layers_0_0``, ``model_W``), in flattening order.

A loop over a list or tuple node is written out, one copy of its body per item, where the
structure decides its items (lower/tree_loops.py): each layer of ``for W, b in layers`` then
reads its own leaves. A read the structure decides (``params["W1"]``, ``layers[0][1]``,
``model.W``: literal keys, indices and field names, from a parameter the body never rebinds or
changes) becomes the leaf's name, or the name of the subtree it reaches. Any other use of a tree
(a loop kept as a loop, ``params.items()``, a call passing it on) reads a display of its leaves
built at the top of the
body (``params = {"W1": params_W1, ...}``), one flat display per node, so the core sees only
displays of names. A namedtuple, dataclass or registered node used whole has no display the core
reads: refused where it is used, with what to write instead.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..read.names import name_nodes
from ..read.parse import KeepingTransformer, ParsedFunction
from ..trees import TreeDef
from .naming import Namer
from .tree_loops import Unroller
from ..read.walk import findall

_READ_ONLY_METHODS = frozenset({"items", "values", "keys", "get", "index", "count"})


def _names_in(node: cst.CSTNode, reads_only: bool = False) -> set:
    return {n.value for n in name_nodes(node, reads_only)}


def _root(node: cst.BaseExpression) -> Optional[str]:
    """The name at the bottom of a chain of subscripts and attributes, or None."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _target_roots(node: cst.CSTNode) -> set:
    """The names a target binds or changes: ``a``, ``a`` of ``a[i]`` and ``a.b``, and of each
    element of a tuple or list target."""
    if isinstance(node, (cst.Tuple, cst.List)):
        return set().union(*(_target_roots(e.value) for e in node.elements)) if node.elements else set()
    if isinstance(node, cst.StarredElement):
        return _target_roots(node.value)
    root = _root(node)
    return {root} if root else set()


_TARGETS = m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For() | m.CompFor() | m.Del() | \
    m.NamedExpr()


def _changed_names(body: cst.CSTNode) -> set:
    """The names ``body`` binds or changes in place: assignment, ``for``, ``with`` and ``del``
    targets, walrus targets, ``global``/``nonlocal``, and ``x.m(...)`` for a method ``m`` that is
    not one of the read-only ones."""
    found: set = set()
    for node in findall(body, _TARGETS):
        found |= _target_roots(node.target)
    for node in findall(body, m.AsName()):
        found |= _target_roots(node.name)
    for node in findall(body, m.Global() | m.Nonlocal()):
        found.update(n.name.value for n in node.names)
    for node in findall(body, m.Call(func=m.Attribute())):
        root = _root(node.func.value)
        if root and node.func.attr.value not in _READ_ONLY_METHODS:
            found.add(root)
    return found


def _literal(index: cst.BaseExpression) -> tuple:
    """``(True, value)`` for a literal key or index (``"W1"``, ``0``, ``-1``), else ``(False, None)``."""
    if isinstance(index, (cst.SimpleString, cst.Integer, cst.UnaryOperation, cst.ConcatenatedString)):
        try:
            value = ast.literal_eval(cst.Module([]).code_for_node(index))
        except (ValueError, SyntaxError):
            return False, None
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return True, value
    return False, None


class _Tree:
    """One tree parameter: its structure, the name of each node (by path), and which nodes a
    display must be built for."""

    def __init__(self, param: str, treedef: TreeDef, namer: Namer) -> None:
        self.param = param
        self.names: dict = {}  # path -> name (leaves and inner nodes)
        self.defs: dict = {}  # path -> TreeDef
        self.leaves: list = []  # leaf names, flattening order
        self._name(treedef, (), param, namer, root=True)

    def _name(self, treedef: TreeDef, path: tuple, name: str, namer: Namer, root: bool = False) -> None:
        self.names[path] = name if root else namer.fresh(name)
        self.defs[path] = treedef
        if treedef.is_leaf():
            self.leaves.append(self.names[path])
            return
        for key, child in zip(treedef.child_keys(), treedef.children):
            self._name(child, path + (key,), f"{self.names[path]}_{key}", namer)

    def step(self, path: tuple, node: cst.CSTNode) -> Optional[tuple]:
        """The path one subscript or attribute ``node`` leads to from ``path``, or None."""
        treedef = self.defs[path]
        if isinstance(node, cst.Attribute):
            if treedef.has_fields() and node.attr.value in treedef.child_keys():
                return path + (node.attr.value,)
            return None
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        known, key = _literal(node.slice[0].slice.value)
        if not known:
            return None
        if treedef.kind in ("dict", "keys") and key in treedef.keys:
            return path + (key,)
        if treedef.kind in ("tuple", "list", "namedtuple") and isinstance(key, int) and \
                -len(treedef.children) <= key < len(treedef.children):
            position = key % len(treedef.children)
            return path + (treedef.child_keys()[position],)
        return None

    def display(self, path: tuple) -> cst.BaseExpression:
        """The display of the node at ``path`` from its children's names."""
        treedef = self.defs[path]
        names = [cst.Name(self.names[path + (k,)]) for k in treedef.child_keys()]
        if treedef.kind == "none":
            return cst.Name("None")
        if treedef.kind == "list":
            return cst.List([cst.Element(n) for n in names])
        if treedef.kind == "tuple":
            return cst.Tuple([cst.Element(n) for n in names])
        by_key = dict(zip(treedef.keys, names))
        return cst.Dict([cst.DictElement(cst.parse_expression(repr(k)), by_key[k])
                         for k in treedef.order or treedef.keys])  # in the order it was built

    def displays(self, read: set) -> list:
        """``(name, display)`` for every inner node whose name ``read`` holds and the inner nodes
        below it, children before parents."""
        wanted = {p for p, n in self.names.items() if n in read and not self.defs[p].is_leaf()}
        needed = {p for p in self.defs if not self.defs[p].is_leaf()
                  and any(p[:len(w)] == w for w in wanted)}
        return [(self.names[p], self.display(p)) for p in sorted(needed, key=lambda p: (-len(p), p.__repr__()))]

    def whole(self, read: set) -> list:
        """The paths of nodes read whole (their names in ``read``, or inside one that is) with no
        display the core reads as the value it stands for: a namedtuple, dataclass or registered
        node, a dict subclass, a dict whose keys are not literals."""
        wanted = [p for p, n in self.names.items() if n in read and not self.defs[p].is_leaf()]
        return sorted((p for p in self.defs if not self.defs[p].is_leaf()
                       and any(p[:len(w)] == w for w in wanted) and not _displayable(self.defs[p])),
                      key=repr)


def _displayable(treedef: TreeDef) -> bool:
    """Whether a display of names is the value a node of ``treedef`` stands for (never for a dict
    known by the keys read: it may hold more)."""
    if treedef.kind in ("namedtuple", "dataclass", "custom", "keys") or treedef.node_type is not None:
        return False
    if treedef.kind != "dict":
        return True
    for key in treedef.keys:
        try:
            if ast.literal_eval(repr(key)) != key:
                return False
        except (ValueError, SyntaxError):
            return False
    return True


class _Reads(KeepingTransformer):
    """Replaces each read the structure decides by the name of what it reaches; ``seen`` keeps
    the first source node that reached each inner node, for errors."""

    def __init__(self, pf: ParsedFunction, trees: dict) -> None:
        super().__init__(pf.parsed)
        self.pf = pf
        self.trees = trees
        self.seen: dict = {}

    def resolve(self, node: cst.BaseExpression) -> Optional[tuple]:
        """``(tree, path)`` the chain ``node`` reaches, or None."""
        if isinstance(node, cst.Name):
            tree = self.trees.get(node.value)
            return (tree, ()) if tree is not None else None
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            inner = self.resolve(node.value)
            if inner is None:
                return None
            tree, path = inner
            if tree.defs[path].is_leaf():
                return None
            found = tree.step(path, node)
            return (tree, found) if found is not None else None
        return None

    def _reach(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        found = self.resolve(original)
        if found is None:
            return updated
        tree, path = found
        self.seen.setdefault(tree.names[path], original)
        return cst.Name(tree.names[path]) if path else updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        return self._reach(original, updated)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return self._reach(original, updated)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._reach(original, updated)


def with_tree_parameters(pf: ParsedFunction, trees: tuple) -> tuple:
    """``(pf', leaves)``: ``pf`` taking the leaves of each ``(parameter, TreeDef)`` in ``trees``
    instead of it (the positional parameters before the last tree lose their defaults: callers
    pass those arguments), and per such parameter the names of its leaf parameters."""
    trees = tuple((param, treedef) for param, treedef in trees if treedef.kind != "object")
    if not trees:  # an object argument keeps its parameter (lower/methods.py reads its class)
        return pf, {}
    node = pf.node
    changed = _changed_names(node.body)
    namer = Namer(_names_in(node))
    built = {}
    for param, treedef in trees:
        tree = _Tree(param, treedef, namer)
        built[param] = tree  # rebound or changed in place: every read goes through its display
    forwarding = {p: t for p, t in built.items() if p not in changed}
    reads = _Reads(pf, forwarding)
    body = node.body
    if isinstance(body, cst.IndentedBlock):  # loops over nodes of known length written out
        body = body.with_changes(body=Unroller(pf, reads.resolve, _changed_names).block(body.body))
    body = body.visit(reads)
    read = _names_in(body, reads_only=True)
    prelude = []
    for param, tree in built.items():
        for path in tree.whole(read):
            if tree.defs[path].kind == "keys":
                raise _whole_refusal(pf, body, tree.names[path] if path else param, param)
            what = tree.defs[path].node_type
            kind = what.__name__ if what is not None else "dict with keys that are not literals"
            at = next((reads.seen[tree.names[path[:k]]] for k in range(len(path), -1, -1)
                       if tree.names[path[:k]] in reads.seen), node)  # the use reaching it
            raise pf.error(at, f"`{tree.names[path] if path else param}` is a {kind} (a pytree "
                           "node) used whole where s2sgrad differentiates it: s2sgrad reads such "
                           "an argument's fields and items, not the object",
                           f"read its fields and items here (`{param}.<field>`) and pass those "
                           "on, or pass its arrays as separate arguments")
        for name, display in tree.displays(read):
            prelude.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                                               display)]))
    params = []
    positional = node.params.params
    last = max(i for i, p in enumerate(positional) if p.name.value in built)
    for i, p in enumerate(positional):
        tree = built.get(p.name.value)
        if tree is None:  # a default before the last tree's leaves would end the defaults early
            params.append(p.with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT)
                          if i < last else p)
            continue
        params.extend(cst.Param(cst.Name(leaf)) for leaf in tree.leaves)
    statements = list(body.body)
    first = 1 if statements and _is_docstring(statements[0]) else 0
    body = body.with_changes(body=[*statements[:first], *prelude, *statements[first:]])
    new = node.with_changes(params=node.params.with_changes(params=params), body=body)
    return replace(pf, node=new), {p: tuple(t.leaves) for p, t in built.items()}


def _whole_refusal(pf: ParsedFunction, body: cst.CSTNode, name: str, param: str) -> Exception:
    """The refusal of a dict known by its keys (``keys_read``) used whole: at the first use of
    ``name`` left in the transformed ``body`` (an unchanged node of the user's code)."""
    uses = [n for n in findall(body, m.Name(name)) if pf.parsed.positions.get(n) is not None]
    return pf.error(uses[0] if uses else pf.node,
                    f"`{name}` is used whole: the generated gradient file reads the dict argument "
                    f"`{param}` by the literal keys the code reads (`{param}[\"W\"]`), and a "
                    "whole use would need all its keys, which are known only at a call",
                    "read each array by its literal key, or call s2sgrad.grad (or the "
                    "decorator's attributes), which read the whole structure at the call")


def keys_read(pf: ParsedFunction, param: str) -> Optional[TreeDef]:
    """The structure of parameter ``param`` as the code reads it, for a function called nowhere
    yet (the CLI): a dict (kind ``"keys"``) of the literal string keys read from it
    (``params["W1"]``), nested where those are read by string keys in turn, its leaves the values
    read; None when no literal string key is read from it (an array)."""
    paths: set = set()
    for node in findall(pf.node.body, m.Subscript()):
        path = _string_path(node, param)
        if path:
            paths.add(path)
    if not paths:
        return None
    return _keys_tree(paths, ())


# Methods of a dict that an array does not have: a parameter called with one is a dict.
_DICT_METHODS = frozenset({"items", "keys", "values", "get", "setdefault", "update", "pop"})


def dict_method_call(pf: ParsedFunction, param: str) -> Optional[cst.Call]:
    """The first call of a dict's own method on parameter ``param`` (``params.items()``), which
    says it is a dict whose keys the code does not spell out; None where there is none."""
    for node in findall(pf.node.body, m.Call(func=m.Attribute(value=m.Name(param)))):
        if node.func.attr.value in _DICT_METHODS:
            return node
    return None


def _string_path(node: cst.BaseExpression, param: str) -> tuple:
    """The string keys of the chain ``param["a"]["b"]`` that ``node`` ends (``("a", "b")``), its
    first keys only up to the first step that is not a literal string; () for another chain."""
    steps: list = []
    while isinstance(node, cst.Subscript):
        known, key = (False, None)
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            known, key = _literal(node.slice[0].slice.value)
        steps.append(key if known and isinstance(key, str) else None)
        node = node.value
    if not (isinstance(node, cst.Name) and node.value == param):
        return ()
    steps.reverse()
    first = steps.index(None) if None in steps else len(steps)
    return tuple(steps[:first])


def _keys_tree(paths: set, at: tuple) -> TreeDef:
    """The node at ``at`` of the dict the read ``paths`` reach: a leaf where none goes below."""
    below = sorted({p[len(at)] for p in paths if len(p) > len(at) and p[:len(at)] == at})
    if not below:
        return TreeDef("leaf")
    return TreeDef("keys", None, tuple(below), tuple(_keys_tree(paths, at + (k,)) for k in below))


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString,
                                                                               cst.ConcatenatedString))


__all__ = ["keys_read", "with_tree_parameters"]
