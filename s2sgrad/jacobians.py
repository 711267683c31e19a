"""Jacobians and second derivatives: a function (and argnums or primals) -> jacfwd, jacrev,
hessian, hvp.

- ``jacfwd`` and ``jacrev`` call the function's generated Jacobian function (derive.jacobian,
  write/entries.py: one forward-mode sweep per element of the differentiated inputs, or a
  forward and a backward sweep per element of the output), the one a later transformation
  reads too; for pytree arguments one made per structure, its blocks per leaf regrouped here;
- ``hvp`` and ``hessian``: forward mode over the generated reverse-mode code (``jvp`` of
  ``grad``; ``hessian`` is ``jacfwd(grad(f))``: one sweep per tangent direction, no re-run of the
  primal per element), falling back to reverse mode over the generated forward-mode code where
  forward mode cannot read the reverse-mode code.
Every function s2sgrad returns here can be transformed again (``jacfwd(jacrev(f))``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import runtime
from .again import jacobian_again, jacobian_of_trees_only
from .api import grad
from .arguments import argument_check
from .boundary import api_boundary
from .errors import TransformError
from .forward_code import build_jvp, directional, flat_tangents, leaf_wrt
from .parameters import def_location, made_per_call, param_names, positions_of, wrt_names
from .partials import curried, primal_call
from .read.live import entry_of, readable, tree_entry_of
from .returned import again_with_trees, attach, read_again
from .transformations import TRANSFORMATIONS, Transformation
from .tree_arguments import Split, bound_arguments, keyword_only, split_call
from .trees import LEAF, TreeDef, tree_flatten, tree_unflatten
from . import derive

Argnums = Union[int, Sequence[int]]
_ndarray = np.ndarray


@api_boundary
@curried
def jacfwd(fun: Callable, argnums: Argnums = 0) -> Callable:
    """The Jacobian of ``fun`` by forward mode: its generated ``<f>_jacfwd``, one forward sweep
    per element of the ``argnums`` inputs (the generated ``<f>_jacrev`` where forward mode cannot
    read ``fun``). Block shape: ``output.shape + input.shape`` (JAX's conventions for tuples
    and pytrees)."""
    return _jacobian(fun, argnums, ("fwd", "rev"), "s2sgrad.jacfwd")


@api_boundary
@curried
def jacrev(fun: Callable, argnums: Argnums = 0) -> Callable:
    """The Jacobian of ``fun`` by reverse mode: its generated ``<f>_jacrev``, a forward and a
    backward sweep per element of the output (for a pytree output, of each of its leaves, the
    others seeded with zeros). Block shape: ``output.shape + input.shape`` (JAX's conventions
    for tuples and pytrees)."""
    return _jacobian(fun, argnums, ("rev",), "s2sgrad.jacrev")


def _generated_jacobian(fun: Callable, wrt: tuple, single: bool, modes: tuple,
                        trees: tuple = ()) -> tuple:
    """``(text, fn)``: ``fun``'s generated Jacobian function of the first of ``modes`` that can
    write it (derive.jacobian); the first mode's refusal where none can."""
    first: Optional[TransformError] = None
    for mode in modes:
        try:
            text, fn = derive.jacobian(fun, wrt, single, mode, trees=trees)
        except TransformError as refusal:
            first = first or refusal
            continue
        if fn is not None:
            return text, fn
    if first is not None:
        raise first
    raise TransformError(f"the Jacobian of {getattr(fun, '__name__', fun)}: its parameters are of a "
                         "form the generated Jacobian function cannot take (positional-only, "
                         "**kwargs)", def_location(fun),
                         "differentiate a function with plain parameters that calls this one")


def _maker(modes: tuple) -> Callable:
    """``make(fn, wrt)``: the generated Jacobian function of ``fn`` of the first of ``modes`` that
    can write it, blocks per leaf (what again.jacobian_again takes)."""
    return lambda fn, wrt: _generated_jacobian(fn, wrt, False, modes)[1]


def _jacobian(fun: Callable, argnums: Argnums, modes: tuple, made: str) -> Callable:
    """The function that checks and flattens its arguments and calls ``fun``'s generated
    Jacobian function (for the structures of pytree arguments, one made per structure; the
    blocks per leaf then regrouped into JAX's layout)."""
    original = fun
    if entry_of(original) is None and tree_entry_of(original) is not None:
        return jacobian_of_trees_only(original, argnums, _maker(modes), made)
    fun, made_by_s2sgrad = read_again(fun)
    wrt = wrt_names(fun, argnums)
    positions, single = positions_of(argnums), isinstance(argnums, int)
    text, fn = made_per_call(fun, wrt), None
    try:
        if text is None:
            text, fn = _generated_jacobian(fun, wrt, single, modes)
    except TransformError as refusal:  # raised at a call with arrays there: pytrees may be read
        if refusal.member_of is None:
            raise
        text = refusal
    check = _argument_check(fun, positions, wrt)
    name, params, per_structure = getattr(fun, "__name__", "the function"), param_names(fun), {}

    def jacobian_fun(*args: Any, **kwargs: Any) -> Any:
        split = split_call(fun, name, params, positions, args, kwargs)
        if split is not None:
            if made_by_s2sgrad:
                return jacobian_again(original, split, args, kwargs, single, _maker(modes),
                                      per_structure)
            return _tree_layout(per_tree(split)(*split.args, **dict(split.keywords)), split, single)
        kwargs, keywords = keyword_only(fun, kwargs)
        args = bound_arguments(fun, args, kwargs)
        check(args, {})
        if fn is None:
            raise text
        derive.fresh(fn)
        return fn(*args, **keywords)

    def per_tree(split: Split) -> Callable:
        """The generated Jacobian function for ``split``'s structures (blocks per leaf)."""
        if split.trees not in per_structure:
            per_structure[split.trees] = _generated_jacobian(fun, wrt, False, modes, split.trees)[1]
        derive.fresh(per_structure[split.trees])
        return per_structure[split.trees]

    again = None if made_by_s2sgrad else _tree_entry(fun, positions, single, per_tree)
    return attach(jacobian_fun, fun, text, made=made, entry=fn, tree_entry=again)


def _tree_entry(fun: Callable, positions: tuple, single: bool, per_tree: Callable) -> Callable:
    """read/live.py's TREE_ENTRY_ATTR for the Jacobian of ``fun``: per call with pytree
    arguments, its split, the generated Jacobian function for those structures (``per_tree``)
    and the structure of its value in JAX's layout (``fun``'s value's, read by calling it, each
    leaf a tree of blocks per differentiated argument)."""
    name, params = getattr(fun, "__name__", "the function"), param_names(fun)

    def again(args: tuple, kwargs: dict) -> Optional[tuple]:
        split = split_call(fun, name, params, positions, args, kwargs)
        if split is None or split.select:
            return None
        per_leaf = (split.defs[0] or LEAF) if single else \
            TreeDef("tuple", children=tuple(d or LEAF for d in split.defs))
        return split, per_tree(split), tree_flatten(fun(*args, **kwargs))[1].graft(per_leaf)

    again.fun = fun  # type: ignore[attr-defined]  # whose parameters the calls pass
    return again


def _tree_layout(result: Any, split: Split, single: bool) -> Any:
    """The generated function's result for pytree arguments (the output's structure, each leaf
    a tuple of blocks per differentiated leaf) -> JAX's layout: each such tuple regrouped into
    the arguments' structures (the one argument's for ``single``)."""
    count = split.result_count
    leaves, treedef = tree_flatten(result)

    def per_argument(blocks: list) -> Any:
        grouped = split.regroup(blocks)
        return grouped[0] if single else grouped

    return tree_unflatten(_without_blocks(treedef, count),
                          [per_argument(leaves[i:i + count]) for i in range(0, len(leaves), count)])


def _without_blocks(treedef: TreeDef, count: int) -> TreeDef:
    """``treedef`` with each innermost tuple of ``count`` leaves (the blocks per input) a leaf."""
    if treedef.kind == "tuple" and len(treedef.children) == count and \
            all(child.is_leaf() for child in treedef.children):
        return LEAF
    return replace(treedef, children=tuple(_without_blocks(c, count) for c in treedef.children))


def _argument_check(fun: Callable, positions: tuple, wrt: tuple) -> Callable:
    """api.argument_check for ``fun`` differentiated at ``positions`` (its parameters ``wrt``)."""
    return argument_check(getattr(fun, "__name__", "the function"), param_names(fun), positions, wrt)


def _gradient(fun: Callable, wrt: tuple) -> Callable:
    """``grad(fun)`` with respect to its parameters ``wrt`` (an int argnums for one), whose
    generated ``<f>_grad`` forward mode reads."""
    params = list(param_names(fun))
    positions = tuple(params.index(name) for name in wrt)
    return grad(fun, positions[0] if len(positions) == 1 else positions)


class ScalarCheck:
    """That ``fun`` returns a real scalar (a GradientError else), checked by running it once per
    kind of arguments (their types, shapes and dtypes), not once per Hessian-vector product: the
    gradient's forward mode never sees the value, and would seed a vector output with ones."""

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        self.seen: set = set()

    def __call__(self, args: tuple) -> None:
        key = tuple([(_ndarray, a.shape, a.dtype) if type(a) is _ndarray else
                     (type(a), np.shape(a), getattr(a, "dtype", None)) for a in args])
        if key not in self.seen:
            runtime.check_scalar(self.fun(*args), getattr(self.fun, "__name__", "the function"))
            self.seen.add(key)


class TreeScalarCheck(ScalarCheck):
    """ScalarCheck for pytree arguments: once per structure and kind of leaves."""

    def __call__(self, args: tuple, split: Split) -> None:  # type: ignore[override]
        key = (split.trees, tuple((type(a), np.shape(a), getattr(a, "dtype", None)) for a in split.args))
        if key not in self.seen:
            runtime.check_scalar(self.fun(*args), getattr(self.fun, "__name__", "the function"))
            self.seen.add(key)


class TreeRoutes:
    """Per structure of pytree arguments, what ``make(trees)`` builds for ``fun`` (its
    generated Hessian-vector product by default: hvp_code with the structures), the value checked
    once per structure; ``split(args, kwargs)`` -> ``(Split, made)``, or ``(None, None)`` for a
    call with no pytree there."""

    def __init__(self, fun: Callable, wrt: tuple, positions: tuple, again: bool = False,
                 make: Optional[Callable[[tuple], Any]] = None) -> None:
        self.fun, self.wrt, self.positions, self.again = fun, wrt, positions, again
        self.name, self.params = getattr(fun, "__name__", "the function"), param_names(fun)
        self.make = make or (lambda trees: hvp_code(fun, wrt, False, trees)[1])
        self.routes: dict = {}
        self.check = TreeScalarCheck(fun)

    def split(self, args: tuple, kwargs: dict, positions: Optional[tuple] = None) -> tuple:
        """(``positions``: this call's, where they differ from the construction's: *args.)"""
        split = split_call(self.fun, self.name, self.params, positions or self.positions, args,
                           kwargs)
        if split is None:
            return None, None
        if self.again:  # ``fun`` is generated code s2sgrad returned
            raise again_with_trees(self.name)
        self.check(bound_arguments(self.fun, args, kwargs), split)
        if split.trees not in self.routes:
            self.routes[split.trees] = self.make(split.trees)
        return split, self.routes[split.trees]


@api_boundary
def hvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """The Hessian of scalar ``fun`` at ``primals`` times ``tangents`` (one per primal, each
    shaped like it): a tuple with one entry per primal. Its generated function (hvp_code) is
    what runs. A ``functools.partial`` takes its fixed and bound arguments as constants."""
    fun, args, positions = primal_call(fun, primals)
    fun = readable(fun)
    split = split_call(fun, getattr(fun, "__name__", "the function"), param_names(fun),
                       positions, args, {})
    if split is not None:
        wrt = wrt_names(fun, positions)
        flat = flat_tangents(split, tangents, "hvp")
        made = hvp_code(fun, wrt, False, split.trees)[1]  # (a refusal before running fun)
        TreeScalarCheck(fun)(args, split)
        return split.regroup(run_generated(made, split.args, tangents=flat))
    tangents, wrt = directional(fun, args, positions, tangents, "hvp")
    made = hvp_code(fun, wrt, False)[1]
    ScalarCheck(fun)(args)
    return run_generated(made, args, tangents=tangents)


@api_boundary
@curried
def hessian(fun: Callable, argnums: Argnums = 0) -> Callable:
    """The Hessian of scalar ``fun``: for an int ``argnums``, an array of shape ``x.shape +
    x.shape`` (a float for a float ``x``); for a tuple, a tuple of tuples of blocks ``[i][j]`` of
    shape ``x_i.shape + x_j.shape``. Its generated function (hessian_code) is what runs."""
    fun, made_by_s2sgrad = read_again(fun)
    wrt = wrt_names(fun, argnums)
    positions = positions_of(argnums)
    single = isinstance(argnums, int)
    text, made = made_per_call(fun, wrt), None  # *args: the code is made per call (TreeRoutes)
    try:
        if text is None:
            text, made = hessian_code(fun, wrt, single)
    except TransformError as refusal:  # raised at a call with arrays there: pytrees may be read
        if refusal.member_of is None:
            raise
        text, made = refusal, None
    check, scalar = _argument_check(fun, positions, wrt), ScalarCheck(fun)
    routes = TreeRoutes(fun, wrt, positions, again=made_by_s2sgrad,
                        make=lambda trees: hessian_code(fun, wrt, False, trees)[1])

    def hessian_fun(*args: Any, **kwargs: Any) -> Any:
        split, per_leaves = routes.split(args, kwargs)
        if split is not None:
            return tree_blocks(split, run_generated(per_leaves, split.args), single)
        args = bound_arguments(fun, args, kwargs)
        check(args, {})
        if made is None:
            raise text
        scalar(args)
        return float_for_float(run_generated(made, args), args, positions, single)

    return attach(hessian_fun, fun, text, made="s2sgrad.hessian", entry=made)


def run_generated(made: Callable, args: tuple, **keywords: Any) -> Any:
    """The generated function ``made`` run at ``args`` (and ``keywords``), its module made
    current."""
    derive.fresh(made)
    return made(*args, **keywords)


def float_for_float(blocks: Any, args: tuple, positions: tuple, single: bool) -> Any:
    """One block of a number argument as a float (blocks of a tuple ``argnums`` as they are)."""
    return float(blocks) if single and np.ndim(args[positions[0]]) == 0 else blocks


def hessian_code(fun: Callable, wrt: tuple, single: bool, trees: tuple = ()) -> tuple:
    """``(text, function)``: the generated function computing the Hessian of scalar ``fun`` with
    respect to its parameters ``wrt`` (for the structures ``trees``: blocks per pair of leaves),
    the first of _HESSIAN_WAYS that can be written; a located error when none can."""
    return _first_way(_HESSIAN_WAYS, fun, wrt, single, trees)


def hvp_code(fun: Callable, wrt: tuple, single: bool, trees: tuple = ()) -> tuple:
    """``(text, function)``: the generated Hessian-vector product of scalar ``fun`` with respect
    to its parameters ``wrt``, ``function(*args, tangents=...)`` (one tangent for ``single``,
    else a tuple of one per name of ``wrt``, or per leaf of ``trees``; the product alike), the
    first of _HVP_WAYS that can be written; a located error when none can."""
    return _first_way(_HVP_WAYS, fun, wrt, single, trees)


def _first_way(ways: tuple, fun: Callable, wrt: tuple, single: bool, trees: tuple) -> tuple:
    """What the first of ``ways`` that can be written makes for ``fun``; a located error when
    none can."""
    fun = readable(fun)
    name = getattr(fun, "__name__", "the function")
    first: Optional[TransformError] = None
    for way in ways:
        try:
            made = way(fun, wrt, single, trees)
        except TransformError as exc:
            first = first or exc
            continue
        if made is not None:
            return made
    if first is not None and first.member_of is not None:
        raise first
    raise TransformError(
        f"second derivatives of {name}: its generated code uses something s2sgrad cannot "
        f"differentiate again{f' ({first.message})' if first is not None else ''}",
        def_location(fun), "use s2sgrad.grad of a function that returns the first derivative "
        "you need, or differences of gradients") from first


def _over_gradient(make: Callable, what: str, fun: Callable, wrt: tuple, single: bool,
                   trees: tuple) -> Optional[tuple]:
    """Forward mode over the generated gradient: ``make`` (derive.hessian_function,
    derive.hvp_function) appends the function computing ``what`` to the second-order module."""
    text, made = make(fun, wrt, single, trees)
    if made is None:
        return None
    return (f"# {what.format(fun.__name__)}: forward mode (the functions after 'Second order') over "
            f"its reverse-mode code (those before), joined by {made.__name__} at the end.\n" + text), made


def _over_forward_mode(make: Callable, what: str, fun: Callable, wrt: tuple, single: bool,
                       trees: tuple) -> Optional[tuple]:
    """Reverse mode over the generated forward mode, where the gradient cannot be read again:
    ``make`` (derive.tangent_gradient_hessian, derive.tangent_gradient_hvp) writes the function
    computing ``what`` from the jvp function's gradient."""
    jvp_text, jvp_fn, tangents = build_jvp(fun, wrt, trees)
    text, made = make(jvp_fn, leaf_wrt(fun, wrt, trees, "fwd"), tangents, single and not trees,
                      fun.__name__)
    if made is None:
        return None
    return (f"# {what.format(fun.__name__)}: reverse mode (the second module) over its forward-mode "
            "code (the first).\n" + jvp_text + "\n\n" + text), made


def _product_reverse_over_gradient(fun: Callable, wrt: tuple, single: bool,
                                   trees: tuple) -> Optional[tuple]:
    """Reverse mode over the generated gradient, seeded with the tangents: the route for code
    forward mode cannot read (a custom_gradient defined inside a grad_fn)."""
    gradient, leaves = _generated_gradient(fun, wrt, trees)
    text, made = derive.gradient_hvp(gradient, leaves, single and not trees, fun.__name__)
    if made is None:
        return None
    return (f"# The Hessian of {fun.__name__} times tangents (s2sgrad.hvp): reverse mode over "
            "its generated gradient.\n" + text), made


def _jacobian_of_gradient(fun: Callable, wrt: tuple, single: bool, trees: tuple) -> Optional[tuple]:
    """jacfwd, else jacrev, of the generated gradient: where forward mode reads neither."""
    gradient, leaves = _generated_gradient(fun, wrt, trees)
    alone = single and not trees
    first: Optional[TransformError] = None
    for mode in ("fwd", "rev"):
        try:
            text, made = derive.jacobian(gradient, leaves, alone, mode, None if alone else len(leaves))
        except TransformError as exc:
            first = first or exc
            continue
        if made is not None:
            return (f"# The Hessian of {fun.__name__}: {'jacfwd' if mode == 'fwd' else 'jacrev'} of "
                    "its generated gradient.\n" + text), made
    if first is not None:
        raise first
    return None


def _generated_gradient(fun: Callable, wrt: tuple, trees: tuple) -> tuple:
    """``(function, its parameters differentiated again)``: ``fun``'s generated gradient with
    respect to ``wrt`` (of the leaves of ``trees``, seeded: ``<f>_grad``)."""
    if trees:
        return derive.build(fun, wrt, trees=trees)[1][2], leaf_wrt(fun, wrt, trees, "rev")
    return readable(_gradient(fun, wrt)), wrt


# The ways a Hessian function and a Hessian-vector product are written, in the order tried.
_HESSIAN = "The Hessian of {} (s2sgrad.hessian)"
_HVP = "The Hessian of {} times tangents (s2sgrad.hvp)"
_HESSIAN_WAYS = (partial(_over_gradient, derive.hessian_function, _HESSIAN),
                 partial(_over_forward_mode, derive.tangent_gradient_hessian, _HESSIAN),
                 _jacobian_of_gradient)
_HVP_WAYS = (partial(_over_gradient, derive.hvp_function, _HVP),
             partial(_over_forward_mode, derive.tangent_gradient_hvp, _HVP),
             _product_reverse_over_gradient)


for _record in (Transformation("hessian", hessian), Transformation("jacfwd", jacfwd),
                Transformation("jacrev", jacrev), Transformation("hvp", hvp, curried=False)):
    TRANSFORMATIONS.add(_record)


def tree_blocks(split: Split, blocks: Any, single: bool) -> Any:
    """Blocks ``[a][b]`` per pair of differentiated leaves -> JAX's layout: per argument (one for
    ``single``), a tree of its structure whose leaves hold, per argument, a tree of blocks."""
    blocks = split.selected_blocks(blocks)  # (a call into *args: those asked for)
    chunks = split.chunks(list(range(len(split.leaf_positions))))

    def grouped(j: int, items: list) -> Any:
        treedef = split.defs[j]
        return items[0] if treedef is None else tree_unflatten(treedef, items)

    per_argument = []
    for i, rows in enumerate(chunks):
        inner = []
        for a in rows:
            across = tuple(grouped(j, [blocks[a][b] for b in cols]) for j, cols in enumerate(chunks))
            inner.append(across[0] if single else across)
        per_argument.append(grouped(i, inner))
    return per_argument[0] if single else tuple(per_argument)


__all__ = ["bound_arguments", "float_for_float", "hessian", "hessian_code", "hvp", "hvp_code", "run_generated", "jacfwd", "jacrev"]
