"""``*args`` of arrays: a ParsedFunction whose ``*args`` parameter a call gave a structure (the
tuple of the arguments passed there, ``Options.trees``) -> the same taking that tuple as a
positional parameter after the others,

    def f(a, *xs, scale=2.0)   ->   def f(a, xs, *, scale=2.0)

which lower/trees.py then replaces by the tuple's leaves (``xs_0, xs_1, ...``), so the
generated functions take the arguments by position, as the call passed them, and the body reads
``xs`` as the tuple it is (a display of the leaves built at its top).
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from ..read.parse import ParsedFunction


def star_name(pf: ParsedFunction):
    """The name of ``pf``'s ``*args`` parameter, or None."""
    star = pf.node.params.star_arg
    return star.name.value if isinstance(star, cst.Param) else None


def star_as_parameter(pf: ParsedFunction, trees: tuple) -> ParsedFunction:
    """``pf`` with its ``*args`` parameter positional when ``trees`` names it (else ``pf``)."""
    name = star_name(pf)
    if name is None or name not in {param for param, _ in trees}:
        return pf
    params = pf.node.params
    star = params.star_arg
    param = cst.Param(name=cst.Name(name))
    pf.parsed.adopt(param, star)
    pf.parsed.adopt(param.name, star.name)
    new = params.with_changes(params=[*params.params, param],
                              star_arg=cst.ParamStar() if params.kwonly_params else cst.MaybeSentinel.DEFAULT)
    node = pf.node.with_changes(params=new)
    pf.parsed.adopt(node, pf.node)
    return replace(pf, node=node)
