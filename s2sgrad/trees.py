"""Pytrees, as JAX defines them: a value -> its leaves and a ``TreeDef`` (its structure), and back.

Containers are nodes: tuples, lists, dicts (children by sorted key), namedtuples, dataclass
instances (children by field, in declaration order), ``None`` (a node with no children) and the
types given to ``register_pytree``; anything else is a leaf (an array, a number, a string...).
A TreeDef is hashable and says itself (``describe``) the same way in every process, so the
structure of an argument is part of what generated code is specialized on, and of its cache key.
Imports nothing of s2sgrad's: the API flattens and unflattens with it, the lowering reads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

_ndarray = np.ndarray
_LEAF_TYPES = frozenset({_ndarray, float, int, complex, np.float64, np.float32, bool, str})

# type -> (flatten(value) -> (children, aux), unflatten(aux, children) -> value)
_REGISTERED: dict = {}


def register_pytree(node_type: type, flatten: Callable, unflatten: Callable) -> type:
    """Make instances of ``node_type`` pytree nodes: ``flatten(value)`` returns
    ``(children, aux)`` (children a sequence, ``aux`` hashable static data) and
    ``unflatten(aux, children)`` rebuilds a value. Returns ``node_type`` (usable as a decorator
    through ``functools.partial``)."""
    if not isinstance(node_type, type):
        raise TypeError(f"register_pytree takes a class, not {node_type!r}")
    if node_type in (tuple, list, dict, type(None)):
        raise TypeError(f"{node_type.__name__} is a pytree node already")
    _REGISTERED[node_type] = (flatten, unflatten)
    return node_type


def _type_name(node_type: Optional[type]) -> str:
    if node_type is None:
        return ""
    return f"{node_type.__module__}.{node_type.__qualname__}"


@dataclass(frozen=True)
class TreeDef:
    """The structure of a pytree. ``kind``: ``"leaf"``, ``"none"``, ``"tuple"``, ``"list"``,
    ``"dict"``, ``"namedtuple"``, ``"dataclass"`` or ``"custom"``, or ``"keys"``: a dict known only
    by the literal keys a function's code reads (the CLI, which has no call to look at), or
    ``"object"``: an argument that is not differentiated, of a class whose methods the generated
    code reads (``node_type``; no leaves: the parameter stays as it is); ``node_type``: the class of a
    namedtuple, dataclass or registered node (a dict subclass too); ``keys``: a dict's keys (sorted),
    the fields of a namedtuple or dataclass, a registered node's aux data; ``children``: one
    TreeDef per child; ``attrs``: for a registered node, the attribute of the object each child
    is (found by identity when it was flattened: code reads ``box.v`` as that child), else ()."""

    kind: str
    node_type: Optional[type] = None
    keys: Any = ()
    children: tuple = ()
    attrs: tuple = ()
    # for a dict whose keys were inserted in another order than sorted: its keys in the order
    # they were inserted (the order it runs through them: code reading it whole rebuilds it so)
    order: tuple = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)

    def is_leaf(self) -> bool:
        return self.kind == "leaf"

    def child_keys(self) -> tuple:
        """The key of each child as a path step: a dict key, a field name, or a position."""
        if self.kind in ("dict", "keys", "namedtuple", "dataclass"):
            return tuple(self.keys)
        if self.attrs:
            return self.attrs
        return tuple(range(len(self.children)))

    def has_fields(self) -> bool:
        """Whether code reads this node's children as attributes (``model.W``)."""
        return self.kind in ("namedtuple", "dataclass") or bool(self.attrs)

    def paths(self) -> tuple:
        """The path (tuple of child keys from the root) of each leaf, in flattening order."""
        if self.kind == "leaf":
            return ((),)
        out = []
        for key, child in zip(self.child_keys(), self.children):
            out.extend((key, *path) for path in child.paths())
        return tuple(out)

    def path_texts(self, name: str) -> tuple:
        """How messages name each leaf of an argument ``name`` of this structure, in flattening
        order: ``params['W1']``, ``layers[0][1]``, ``model.W``."""
        if self.kind == "leaf":
            return (name,)
        out = []
        for key, child in zip(self.child_keys(), self.children):
            step = f".{key}" if self.has_fields() else f"[{key!r}]"
            out.extend(child.path_texts(name + step))
        return tuple(out)

    def graft(self, sub: "TreeDef") -> "TreeDef":
        """This structure with each leaf replaced by the structure ``sub``."""
        if self.kind == "leaf":
            return sub
        return TreeDef(self.kind, self.node_type, self.keys,
                       tuple(child.graft(sub) for child in self.children), self.attrs, self.order)

    def describe(self) -> str:
        """The structure as text, equal in every process for equal structures (cache keys)."""
        if self.kind == "leaf":
            return "*"
        inner = ",".join(child.describe() for child in self.children)
        if self.kind == "custom":
            return f"custom:{_type_name(self.node_type)}{self.keys!r}{self.attrs!r}({inner})"
        if self.kind in ("dict", "keys", "namedtuple", "dataclass", "object"):
            order = f"<{self.order!r}" if self.order else ""
            return f"{self.kind}:{_type_name(self.node_type)}{self.keys!r}{order}({inner})"
        return f"{self.kind}({inner})"


LEAF = TreeDef("leaf")


def _node(value: Any) -> Optional[tuple]:
    """``(kind, node_type, keys, children[, attrs[, order]])`` for a pytree node, None for a
    leaf."""
    kind_of = type(value)
    if kind_of in _LEAF_TYPES:
        return None
    if value is None:
        return ("none", None, (), ())
    registered = _REGISTERED.get(kind_of)
    if registered is not None:
        children, aux = registered[0](value)
        return ("custom", kind_of, aux, tuple(children), _attributes(value, tuple(children)))
    if isinstance(value, tuple) and hasattr(kind_of, "_fields"):
        return ("namedtuple", kind_of, tuple(kind_of._fields), tuple(value))
    if kind_of is tuple:
        return ("tuple", None, (), value)
    if kind_of is list:
        return ("list", None, (), tuple(value))
    if isinstance(value, dict):
        keys = _sorted_keys(value)
        inserted = tuple(value)
        return ("dict", None if kind_of is dict else kind_of, keys, tuple(value[k] for k in keys),
                (), inserted if inserted != keys else ())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value))
        return ("dataclass", kind_of, names, tuple(getattr(value, n) for n in names))
    return None


def _sorted_keys(mapping: dict) -> tuple:
    """A dict's keys in flattening order: sorted, or (keys of types that do not compare) by type
    name, then by their text."""
    try:
        return tuple(sorted(mapping))
    except TypeError:
        return tuple(sorted(mapping, key=lambda k: (type(k).__name__, repr(k))))


def tree_flatten(value: Any) -> tuple:
    """``(leaves, treedef)``: the leaves of ``value`` in order (dicts by sorted key) and its
    structure."""
    leaves: list = []
    return leaves, _flatten(value, leaves)


def _flatten(value: Any, leaves: list) -> TreeDef:
    node = _node(value)
    if node is None:
        leaves.append(value)
        return LEAF
    kind, node_type, keys, children = node[:4]
    return TreeDef(kind, node_type, keys, tuple(_flatten(c, leaves) for c in children),
                   node[4] if len(node) > 4 else (), node[5] if len(node) > 5 else ())


def _attributes(value: Any, children: tuple) -> tuple:
    """The attribute of ``value`` each child is (the same object), or () unless every child is
    exactly one attribute."""
    try:
        fields = vars(value)
    except TypeError:  # no __dict__ (slots)
        fields = {name: getattr(value, name) for name in getattr(type(value), "__slots__", ())
                  if hasattr(value, name)}
    found = []
    for child in children:
        names = [name for name, field in fields.items() if field is child]
        if len(names) != 1:
            return ()
        found.append(names[0])
    return tuple(found) if len(set(found)) == len(found) else ()


def tree_unflatten(treedef: TreeDef, leaves: Any) -> Any:
    """The value of structure ``treedef`` with ``leaves`` (in flattening order) at its leaves."""
    items = iter(leaves)
    out = _build(treedef, items)
    if next(items, _END) is not _END:
        raise ValueError(f"too many leaves for a tree of {treedef.num_leaves}")
    return out


_END = object()


def _build(treedef: TreeDef, items: Any) -> Any:
    kind = treedef.kind
    if kind == "leaf":
        value = next(items, _END)
        if value is _END:
            raise ValueError("too few leaves for the tree")
        return value
    children = [_build(child, items) for child in treedef.children]
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        made = dict(zip(treedef.keys, children))
        if treedef.order:  # in the order its keys were inserted
            made = {key: made[key] for key in treedef.order}
        return made if treedef.node_type is None else treedef.node_type(made)
    if kind == "namedtuple":
        return treedef.node_type(*children)
    if kind == "dataclass":
        return treedef.node_type(**dict(zip(treedef.keys, children)))
    return _REGISTERED[treedef.node_type][1](treedef.keys, children)


_KEYED_LEAVES = frozenset({float, int, np.float64, np.float32})


def structure_key(value: Any, leaves: list) -> Any:
    """A key of ``value``'s structure and of what its leaves are (an array's shape, a number's
    type), appending its leaves to ``leaves`` in flattening order; None (``leaves`` then partly
    filled) for a value holding anything but lists, tuples, dicts of string keys, arrays and
    numbers. One pass and no TreeDef: what a call with pytree arguments is recorded by."""
    kind = type(value)
    if kind is _ndarray:
        leaves.append(value)
        return value.shape
    if kind in _KEYED_LEAVES:
        leaves.append(value)
        return kind
    if kind is list or kind is tuple:
        keys = []
        for child in value:
            key = structure_key(child, leaves)
            if key is None:
                return None
            keys.append(key)
        return kind, tuple(keys)
    if kind is dict and all(type(k) is str for k in value):
        names = sorted(value)
        keys = []
        for name in names:
            key = structure_key(value[name], leaves)
            if key is None:
                return None
            keys.append(key)
        return dict, tuple(keys), tuple(names), tuple(value)  # (the order of insertion last)
    return None


def from_structure_key(key: Any, items: Any) -> Any:
    """The value of the structure ``key`` (structure_key's) with the leaves ``items`` (an
    iterator, in flattening order)."""
    if type(key) is tuple and key and (key[0] is list or key[0] is tuple or key[0] is dict):
        children = [from_structure_key(child, items) for child in key[1]]
        if key[0] is list:
            return children
        if key[0] is tuple:
            return tuple(children)
        made = dict(zip(key[2], children))
        return {name: made[name] for name in key[3]}
    return next(items)


def is_leaf_value(value: Any) -> bool:
    """Whether ``value`` is a leaf (no container s2sgrad flattens)."""
    return _node(value) is None


__all__ = ["LEAF", "TreeDef", "from_structure_key", "is_leaf_value", "register_pytree",
           "structure_key", "tree_flatten", "tree_unflatten"]
