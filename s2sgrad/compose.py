"""Second order, statically: a generated first-order module's text -> the same module with the
forward mode of its ``<f>_grad`` functions added (forward over reverse), formatted.

``<f>_grad_jvp(<f's parameters>, <f>_bar=1.0, *, <x>_dot...)`` returns ``(gradient, Hessian
times the tangents)``: one sweep of the gradient's own code carrying tangents. The text is read
as s2sgrad reads any file (parsed, never run), so the CLI (``s2sgrad emit`` of an
``@differentiable(order=2)`` function) and the decorator share it.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Optional

import black

from .differentiate.batching import batch_statements
from .differentiate.dead import without_dead_code
from .differentiate.fold import line_read_counts
from .differentiate.linearize import linearize
from .errors import TransformError
from .flatten import flat_gradient
from .lower.naming import Namer
from .pipeline import DEFAULT_TABLE, Options, generate, jvp_generated, jvp_program
from .read.capture import from_file
from .read.parse import parse_module
from .write.codegen import (BLACK_MODE, batched_lines, body_text, linearized_lines,
                            tangent_only_lines)


def second_order_text(first: str, path: str, module: str, grads: tuple,
                      arrays: frozenset = frozenset()) -> tuple:
    """``(text, names)``: ``first`` (a generated reverse-mode module at ``path``, importable as
    ``module``) with the forward mode of each ``(<f>_grad name, wrt)`` in ``grads`` appended,
    and per gradient the names ``(<f>_grad_jvp, <f>_grad_jvp_values, <f>_grad_jvp_tangent,
    <f>_grad_hvp, <f>_grad_jvp_tangents)`` (the second and third None where its forward mode
    does not split: differentiate/linearize.py; the last None where the tangent part has no
    batched form: differentiate/batching.py). ``arrays``: the globals known to hold numpy
    arrays."""
    bodies, names = [], []
    taken = Namer(_defined(first))
    for name, wrt in grads:
        program = _forward_over(first, path, module, name, wrt, arrays)
        top = program.functions[0]
        bodies.append(body_text(program))
        params = tuple(p.split("=")[0] for p in top.primal_params)
        alone = replace(top, code=tuple(without_dead_code(
            list(top.code), line_read_counts((top.tangent,)), DEFAULT_TABLE.array_methods(),
            params)))
        taken.reserve(top.name)
        hvp = taken.fresh(f"{name}_hvp")
        bodies.append("\n\n" + "\n".join(tangent_only_lines(alone, hvp)) + "\n")
        split = _split(top)
        if split is None:
            names.extend((top.name, None, None, hvp, None))
            continue
        lin, parts = split
        bodies.append("\n\n" + "\n".join(linearized_lines(top, lin, parts)) + "\n")
        many = _batched(top, lin, parts[2], taken)
        if many is not None:
            bodies.append("\n\n" + "\n".join(many[1]) + "\n")
        names.extend((top.name, *parts[:2], hvp, many and many[0]))
    intro = ("\n\n# Second order: forward mode over the gradients above. Each <f>_grad_jvp returns\n"
             "# the gradient and the Hessian times the tangents (a Hessian-vector product);\n"
             "# <f>_grad_hvp the product alone; <f>_grad_jvp_values and <f>_grad_jvp_tangent\n"
             "# are <f>_grad_jvp in two parts, for Hessians: the values once, then one tangent\n"
             "# per column; <f>_grad_jvp_tangents is part 2 for every column at once.\n")
    # ``first`` is formatted already: black formats what is appended (the same text as
    # formatting the whole: black formats top-level statements one by one; checked on the
    # second-order tests and generated/ when this was written)
    appended = black.format_str(intro.lstrip("\n") + "".join(bodies), mode=BLACK_MODE)
    return first + "\n\n" + appended, tuple(names)


def _defined(text: str) -> set:
    """The names of a module's top-level functions."""
    import libcst as cst

    found = set()
    for stmt in cst.parse_module(text).body:
        if isinstance(stmt, cst.FunctionDef):
            found.add(stmt.name.value)
    return found


def _split(top) -> Optional[tuple]:
    """``(Linearized, (values function, tangent function, values parameter))`` of ``top``."""
    params = tuple(p.split("=")[0] for p in top.primal_params)
    lin = linearize(top, params)
    if lin is None:
        return None
    taken = set(params) | set(top.tangent_params) | set(lin.handed)
    values = "values" if "values" not in taken else f"values_of_{top.name}"
    return lin, (f"{top.name}_values", f"{top.name}_tangent", values)


def _batched(top, lin, values: str, taken: Namer) -> Optional[tuple]:
    """``(name, lines)`` of the tangent part of ``top`` for many tangents at once, or None."""
    params = tuple(p.split("=")[0] for p in top.primal_params)
    reserved = frozenset(params) | frozenset(top.tangent_params) | frozenset(lin.handed) | {values}
    batched = batch_statements(lin.tangent, top.tangent, top.tangent_params, DEFAULT_TABLE,
                               reserved | taken.used())
    if batched is None:
        return None
    name = taken.fresh(f"{top.name}_tangents")
    return name, batched_lines(top, lin, name, values, batched)


def _forward_over(first: str, path: str, module: str, name: str, wrt: tuple, arrays: frozenset):
    """The forward-mode Program of ``name`` in ``first``: of its sweeps inlined into one function
    (flatten.py) where they join and forward mode reads that, else of ``name`` as written."""
    flat = flat_gradient(first, name)
    if flat is not None:
        try:
            return _forward_program(flat, path, module, name, wrt, arrays)
        except TransformError:
            pass
    return _forward_program(first, path, module, name, wrt, arrays)


def _forward_program(text: str, path: str, module: str, name: str, wrt: tuple, arrays: frozenset):
    unit = from_file(path, name, _def_line(text, path, name), module, text, arrays)
    return jvp_program(unit, wrt)[2]


def _def_line(text: str, path: str, name: str) -> int:
    """The line of the (last) def of ``name`` in module ``text``."""
    parsed = parse_module(text, path)
    return parsed.positions[parsed.functions[name][-1]].start.line


def forward_parts(unit, wrt: tuple, trees: tuple = (), numbers: tuple = ()) -> tuple:
    """``(Generated, (values name, tangents name))``: the forward-mode module of the function
    ``unit`` names (pipeline.generate_jvp) with its ``<f>_jvp`` split in two appended, the values
    once (``<f>_jvp_values``) and the tangent part for many tangents at once
    (``<f>_jvp_tangents``: a Jacobian's columns, a chunk at a time); both "" where the forward
    mode does not split or its tangent part has no batched form (then nothing is appended)."""
    generated, top = _jvp_of_flat(unit, wrt, trees, numbers)
    split = _split(top)
    if split is None:
        return generated, ("", "")
    lin, parts = split
    taken = Namer(_defined(generated.text))
    many = _batched(top, lin, parts[2], taken)
    if many is None:
        return generated, ("", "")
    values = taken.fresh(parts[0])
    bodies = "\n".join(linearized_lines(top, lin, (values, taken.fresh(parts[1]), parts[2])))
    intro = (f"# {top.name} in two parts, for Jacobians: its value and what its tangent reads, "
             "once;\n# then its tangent for a chunk of unit tangents at a time.\n")
    appended = black.format_str(intro + bodies + "\n\n\n" + "\n".join(many[1]) + "\n",
                                mode=BLACK_MODE)
    return replace(generated, text=generated.text + "\n\n" + appended), (values, many[0])


def _flat_unit(unit, trees: tuple):
    """``unit`` with its function's sweeps inlined into one function (flatten.py) where it is a
    generated ``<f>_grad`` whose sweeps join: the same unit (its live names: the generated
    functions it calls), the text inlined; None otherwise."""
    flat = flat_gradient(unit.text, unit.name) if not trees else None
    if flat is None:
        return None
    return replace(unit, text=flat, def_line=_def_line(flat, unit.path, unit.name),
                   sha256=hashlib.sha256(flat.encode()).hexdigest())


def _jvp_of_flat(unit, wrt: tuple, trees: tuple, numbers: tuple) -> tuple:
    """jvp_generated of ``unit``'s function, of its sweeps inlined into one function where it is
    a generated ``<f>_grad`` whose sweeps join (flatten.py: forward mode then splits and batches
    as it does for a Hessian), else as written."""
    flat_unit = _flat_unit(unit, trees)
    if flat_unit is not None:
        try:
            return jvp_generated(flat_unit, wrt, DEFAULT_TABLE, numbers=numbers)
        except TransformError:
            pass
    return jvp_generated(unit, wrt, DEFAULT_TABLE, trees=trees, numbers=numbers)


def reverse_of_flat(unit, wrt: tuple, trees: tuple, numbers: tuple):
    """The reverse-mode module (pipeline.generate) of ``unit``'s function, of its sweeps inlined
    into one function where it is a generated ``<f>_grad`` whose sweeps join, else as written:
    what jacrev differentiates, whose backward sweep then calls no inner sweep and has the
    batched form of its straight lines (differentiate/batching.batch_backward)."""
    flat_unit = _flat_unit(unit, trees)
    if flat_unit is not None:
        try:
            return generate(flat_unit, Options(wrt=wrt, mode="rev", numbers=numbers))
        except TransformError:
            pass
    return generate(unit, Options(wrt=wrt, mode="rev", trees=trees, numbers=numbers))


__all__ = ["forward_parts", "reverse_of_flat", "second_order_text"]
