"""Names joined in pairs -> the groups they form (union-find): growth.py's and
writes_in_place.py's sets of versions of one list or array, joined by steps and copies."""

from __future__ import annotations

from typing import Iterable


def joined_groups(links: Iterable[tuple], marked: set) -> list:
    """The sets of names ``links`` (pairs of names) join, those holding a name of ``marked``."""
    parent: dict = {}

    def find(a):
        parent.setdefault(a, a)
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in links:
        parent[find(a)] = find(b)
    members: dict = {}
    for name in list(parent):
        members.setdefault(find(name), set()).add(name)
    return [group for group in members.values() if group & marked]


__all__ = ["joined_groups"]
