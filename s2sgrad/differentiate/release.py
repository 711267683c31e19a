"""Release: ``del`` lines that free a backward sweep's arrays right after their last read.

Takes the backward's top-level code (program items, already folded), the names
the sweep may release (residuals the forward computed, adjoint temporaries: arrays the sweep owns)
and the returned expressions; returns the code with ``del a, b`` after the top-level statement
that reads ``a`` and ``b`` last, and the names released. Without it every residual stays alive
until the sweep returns, so its peak memory is the whole tape plus the adjoints; with it the peak
is what a person freeing arrays by hand would get.

A name is released only where it is certainly bound (a top-level line read it, or a top-level line
bound it before the compound statement that read it), never inside a block, never right before
the ``return`` (the frame dies there anyway), and never between an ``if`` and its ``else``.
"""

from __future__ import annotations

import libcst as cst

from ..program import ElseHeader, Nest, Simple, code_reads, has_statements


def release(code: list, owned: tuple, kept: frozenset, returns) -> tuple:
    """``(code with del lines, names released)``. ``owned`` are the names bound before the first
    item (the unpacked residuals), in order; ``kept`` names are never released (the caller's
    arguments, scalars, shapes: freeing them frees no memory)."""
    items = list(code)
    final_reads = code_reads(returns)
    bound = list(owned)  # certainly bound names, in binding order
    bound_at: dict = {name: -1 for name in owned}
    last_read: dict = {}
    for index, item in enumerate(items):
        for name in code_reads([item]):
            last_read[name] = index
        if not isinstance(item, Nest):
            for name in sorted(item.binds):
                if name not in bound_at:
                    bound_at[name] = index
                    bound.append(name)
    releases: dict = {}
    for name in bound:
        index = last_read.get(name)
        if index is None or name in kept or name in final_reads:
            continue
        if isinstance(items[index], Nest) and bound_at[name] >= index:
            continue  # first bound inside the block that reads it: maybe never bound
        after = _chain_end(items, index)
        if not has_statements(items[after + 1:]):
            continue  # the sweep returns next: its frame frees the name
        releases.setdefault(after, []).append(name)
    out: list = []
    for index, item in enumerate(items):
        out.append(item)
        if index in releases:
            out.append(_delete(releases[index]))
    released = frozenset(name for names in releases.values() for name in names)
    return out, released


def _chain_end(items: list, index: int) -> int:
    """The last item of the ``if``/``elif``/``else`` chain that ``items[index]`` belongs to."""
    while index + 1 < len(items) and isinstance(items[index + 1], Nest) and \
            isinstance(items[index + 1].header, ElseHeader):
        index += 1
    return index


def _delete(names: list) -> Simple:
    """``del a, b``."""
    targets = [cst.Element(cst.Name(n)) for n in names]
    target = targets[0].value if len(targets) == 1 else cst.Tuple(targets, lpar=[], rpar=[])
    return Simple(cst.Del(target))
