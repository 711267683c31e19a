"""Codegen: a Program (Vjp- or JvpFunctions, wrappers, header and imports) -> formatted Python
source text.

The text is assembled line by line, checked by parsing it (Python's ast), then formatted with black
(pinned major version, fixed target), so the same input gives the same bytes on every Python.
"""

from __future__ import annotations

import ast
import os

from dataclasses import dataclass

import black

from ..version import __version__
from ..program import render as render_code
from ..differentiate.forward import JvpFunction
from ..differentiate.reverse import VjpFunction
from ..lower.naming import Namer

BLACK_MODE = black.Mode(
    target_versions={black.TargetVersion.PY310},
    line_length=88,
)

INDENT = "    "


@dataclass(frozen=True)
class GradWrapper:
    """A ``<f>_grad`` function: the gradient of ``source_name`` with respect to ``wrt``."""

    name: str
    source_name: str
    fwd_name: str
    bwd_name: str
    params_code: str
    call_args: str
    seed: str
    wrt: tuple
    keyed: tuple = ()  # Keyed: dict parameters read by literal keys (the CLI), whole at the call


@dataclass(frozen=True)
class Keyed:
    """A parameter ``name`` taking a dict that the sweeps take as its leaves (``leaves``, one
    parameter each, read at ``paths``, tuples of keys); ``signature``: the function's own
    parameters, as the ``<f>_grad`` taking the dict is called."""

    name: str
    paths: tuple
    leaves: tuple
    signature: str


@dataclass(frozen=True)
class Program:
    """Everything one generated module holds."""

    functions: tuple  # VjpFunction or JvpFunction, top-level first, helpers after, in discovery order
    wrappers: tuple  # GradWrapper
    imports: tuple  # import lines the generated code needs (numpy, runtime, user globals)
    header: tuple  # comment lines


def function_lines(fn: VjpFunction) -> list:
    """The source lines of one forward sweep and its backward sweep."""
    wrt = ", ".join(fn.wrt) if fn.wrt else "nothing"
    res = fn.residuals_param
    lines = [f"def {fn.fwd_name}({fn.params_code}):"]
    lines.append(f'{INDENT}"""Forward sweep of {fn.source_name}: its value, and the residuals '
                 f'{fn.bwd_name} needs."""')
    lines.extend(render_code(fn.forward, INDENT))
    items = ", ".join(fn.residuals) + ("," if len(fn.residuals) == 1 else "")
    lines.append(f"{INDENT}return {fn.result_code}, ({items})")
    lines.extend(["", ""])
    seed_default = "=1.0" if fn.top_level else ""
    lines.append(f"def {fn.bwd_name}({res}, {fn.seed}{seed_default}):")
    lines.append(f'{INDENT}"""Backward sweep of {fn.source_name}: the adjoints of {wrt}."""')
    if fn.residuals:
        names = fn.residual_targets or fn.residuals
        target = ", ".join(names) + ("," if len(names) == 1 else "")
        lines.append(f"{INDENT}{target} = {res}")
        if fn.releases_residuals:
            lines.append(f"{INDENT}del {res}  # each residual is freed after its last use")
    lines.extend(render_code(fn.backward, INDENT))
    returns = ", ".join(fn.returns) + ("," if len(fn.returns) == 1 else "")
    lines.append(f"{INDENT}return ({returns})")
    return lines


def jvp_lines(fn: JvpFunction) -> list:
    """The source lines of one forward-mode function."""
    along = ", ".join(fn.params_code.split(", ")[-len(fn.wrt):]) if fn.wrt else "nothing"
    lines = [f"def {fn.name}({fn.params_code}):"]
    lines.append(f'{INDENT}"""Forward mode of {fn.source_name}: its value, and its tangent along '
                 f'{along}."""')
    lines.extend(render_code(fn.code, INDENT))
    lines.append(f"{INDENT}return {fn.value}, {fn.tangent}")
    return lines


def tangent_only_lines(fn: JvpFunction, name: str) -> list:
    """The source lines of ``fn`` returning its tangent alone, under ``name`` (``fn.code``
    already without what only its value read: differentiate/dead.py)."""
    lines = [f"def {name}({fn.params_code}):",
             f'{INDENT}"""{fn.name}\'s tangent alone: what its value alone needs is left out."""']
    lines.extend(render_code(fn.code, INDENT))
    lines.append(f"{INDENT}return {fn.tangent}")
    return lines


def linearized_lines(fn: JvpFunction, lin, names: tuple) -> list:
    """The source lines of ``fn`` split in two (differentiate/linearize.py): ``names`` are
    ``(primal part, tangent part, the tangent part's parameter for the handed values)``."""
    primal_name, tangent_name, values = names
    along = ", ".join(fn.tangent_params)
    handed = ", ".join(lin.handed) + ("," if len(lin.handed) == 1 else "")
    lines = [f"def {primal_name}({', '.join(fn.primal_params)}):",
             f'{INDENT}"""{fn.name}, part 1: its value and what its tangent reads (once)."""']
    lines.extend(render_code(lin.primal, INDENT))
    lines.append(f"{INDENT}return {fn.value}, ({handed})")
    lines.extend(["", ""])
    lines.append(f"def {tangent_name}({values}, {along}):")
    lines.append(f'{INDENT}"""{fn.name}, part 2: its tangent along {along}, from part 1."""')
    if lin.handed:
        lines.append(f"{INDENT}{handed} = {values}")
    lines.extend(render_code(lin.tangent, INDENT))
    lines.append(f"{INDENT}return {fn.tangent}")
    return lines


def batched_lines(fn: JvpFunction, lin, name: str, values: str, batched: tuple) -> list:
    """The source lines of the tangent part of ``fn`` (differentiate/linearize.py) carrying many
    tangents at once under ``name``: ``batched`` is its ``(items, returned code)``
    (differentiate/batching.py), ``values`` the parameter for the handed values."""
    along = ", ".join(fn.tangent_params)
    handed = ", ".join(lin.handed) + ("," if len(lin.handed) == 1 else "")
    lines = [f"def {name}({values}, {along}):",
             f'{INDENT}"""{fn.name}, part 2 for many tangents at once: row k of {along} is',
             f"{INDENT}tangent k, and row k of what it returns is that tangent's; rows are",
             f'{INDENT}carried through together (s2sgrad.runtime.batching)."""']
    if lin.handed:
        lines.append(f"{INDENT}{handed} = {values}")
    lines.extend(render_code(batched[0], INDENT))
    lines.append(f"{INDENT}return {batched[1]}")
    return lines


def grad_wrapper(name: str, params: tuple, reserved: frozenset, top: VjpFunction,
                 grad_name: str, kwonly: tuple = ()) -> GradWrapper:
    """The ``<f>_grad`` wrapper of ``top``, the sweeps of ``name`` (parameter names ``params``,
    those in ``kwonly`` passed on by keyword; ``reserved``: the names it reads, which its seed
    parameter must not shadow)."""
    seed = Namer(reserved | {grad_name, top.fwd_name, top.bwd_name}).fresh(f"{name}_bar")
    call = ", ".join(f"{p}={p}" if p in kwonly else p for p in params)
    return GradWrapper(grad_name, name, top.fwd_name, top.bwd_name, top.params_code, call, seed,
                       top.wrt)


def wrapper_lines(w: GradWrapper) -> list:
    if w.keyed:
        return _keyed_wrapper_lines(w)
    wrt = ", ".join(w.wrt)
    params = f"{w.params_code}, {w.seed}=1.0" if w.params_code else f"{w.seed}=1.0"
    lines = [f"def {w.name}({params}):"]
    lines.append(f'{INDENT}"""Gradient of {w.source_name} with respect to {wrt}."""')
    index = "[0]" if len(w.wrt) == 1 else ""
    # The residuals go straight to the backward sweep, which frees each after its last use.
    lines.append(f"{INDENT}return {w.bwd_name}({w.fwd_name}({w.call_args})[1], {w.seed}){index}")
    return lines


def _keyed_wrapper_lines(w: GradWrapper) -> list:
    """``<f>_grad`` taking dicts where the sweeps take their leaves: each leaf read by its keys
    for the call, the gradients gathered into dicts of the arguments' keys (zeros for keys the
    code does not read: ``s2s.keyed_gradient``)."""
    by_leaf = {leaf: (k.name, path) for k in w.keyed for leaf, path in zip(k.leaves, k.paths)}
    args = []
    for arg in w.call_args.split(", ") if w.call_args else []:
        if arg in by_leaf:
            name, path = by_leaf[arg]
            arg = name + "".join(f"[{key!r}]" for key in path)
        args.append(arg)
    local = "grads"
    while local == w.seed or any(local == a.split("=")[0] for a in args):
        local += "_"
    groups, wrt, at = [], [], 0
    for name in w.wrt:
        owner = next((k for k in w.keyed if name in k.leaves), None)
        if owner is None:
            groups.append(f"{local}[{at}]")
            wrt.append(name)
            at += 1
        elif owner.leaves[0] == name:
            count = len(owner.leaves)
            groups.append(f"s2s.keyed_gradient({owner.name}, {owner.paths!r}, {local}[{at}:{at + count}], {owner.name!r})")
            wrt.append(owner.name)
            at += count
    signature = w.keyed[0].signature
    params = f"{signature}, {w.seed}=1.0" if signature else f"{w.seed}=1.0"
    returned = groups[0] if len(groups) == 1 else "(" + ", ".join(groups) + ",)"
    return [f"def {w.name}({params}):",
            f'{INDENT}"""Gradient of {w.source_name} with respect to {", ".join(wrt)} (dicts '
            'read by their keys)."""',
            f"{INDENT}{local} = {w.bwd_name}({w.fwd_name}({', '.join(args)})[1], {w.seed})",
            f"{INDENT}return {returned}"]


def body_text(program: Program) -> str:
    """The generated functions as (unformatted) source, without header or imports."""
    lines: list = []
    for fn in program.functions:
        lines.extend(["", ""])
        lines.extend(jvp_lines(fn) if isinstance(fn, JvpFunction) else function_lines(fn))
    for w in program.wrappers:
        lines.extend(["", ""])
        lines.extend(wrapper_lines(w))
    return "\n".join(lines) + "\n"


def render(program: Program, body: str) -> str:
    """The formatted module text: header, imports, then ``body`` (from body_text)."""
    text = "\n".join(program.header + program.imports) + "\n" + body
    ast.parse(text)  # a generated module that does not parse is a bug: fail here, loudly
    return black.format_str(text, mode=BLACK_MODE)


def header_lines(source: str, qualnames: tuple, digest: str, command: str) -> tuple:
    """The generated-file header: tool version, source, regenerate command, content hash. A
    source outside the working directory is named by its file name (no absolute path)."""
    if os.path.isabs(source):
        source = os.path.basename(source)
    return (
        f"# Generated by s2sgrad {__version__}; do not edit: regenerate with `{command}`.",
        f"# source: {source}:{','.join(qualnames)}",
        f"# sha256: {digest}",
        "import numpy as np",
        "from s2sgrad import runtime as s2s",
    )
