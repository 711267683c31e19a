"""The spellings of one computation generate the same numpy work (issue 28).

For every kernel of benchmarks/kernels.py, each spelling's generated gradient code (the forward
and backward sweeps, in the mode value_and_grad runs for the kernel's arguments, made for their
shapes) is parsed with
ast and its calls are counted by qualified name: inside loop bodies for the loop kernels (the work
per step), in the whole code otherwise. The counts are compared between spellings after naming
equivalent spellings of one operation alike (``@``, ``np.dot``, ``np.matmul``, ``.dot`` and the
runtime helpers named after them; ``math.sin`` and ``np.sin``; ``x.sum()`` and ``np.sum(x)``).
Calls on local values other than numpy's array methods (a tape's ``append``) count by method name.

A structural check of the generated code, not a timing. Where spellings generate different work
today, the case is a known finding, marked xfail(strict=True) with what differs: when the code
generation is made spelling-independent, the mark must go.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "benchmarks" / "kernels.py").exists())
sys.path.insert(0, str(ROOT / "benchmarks"))

import kernels  # noqa: E402

from s2sgrad import TransformError  # noqa: E402
from s2sgrad.pipeline import Options, generate_for_function  # noqa: E402
from s2sgrad.calls import TreeBuilds  # noqa: E402
from s2sgrad.specialize import numbers_passed, shape_signature  # noqa: E402
from s2sgrad.tree_arguments import split_call  # noqa: E402

MODULES = {"np", "numpy", "math", "s2s"}
ARRAY_METHODS = {"sum", "max", "min", "mean", "dot", "copy", "reshape", "transpose", "var", "std",
                 "prod", "cumsum", "astype", "clip", "ravel", "flatten", "squeeze"}
MATH_AS_NUMPY = {"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "sinh", "cosh", "log1p",
                 "expm1", "atan"}


def _dotted(node):
    """``a.b.c`` as a string, or None when the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def canonical(name: str) -> str:
    """One name for equivalent spellings of one operation."""
    if name.startswith("numpy."):
        name = "np." + name[len("numpy."):]
    head, _, rest = name.partition(".")
    if head == "math" and rest in MATH_AS_NUMPY:
        name = "np." + rest
    if name.startswith("."):  # an array method
        if name[1:] in ARRAY_METHODS:
            name = "np." + name[1:]
    # np.dot / np.matmul / .dot / @, and the runtime helpers named after them (dot_vjp_a, ...)
    return re.sub(r"(?<![a-z])dot(?![a-z])", "matmul", name)


def call_name(call: ast.Call) -> str:
    dotted = _dotted(call.func)
    if dotted is None:
        # a method of a value computed in place (``(a * b).sum()``): numpy's, by its name
        if isinstance(call.func, ast.Attribute) and call.func.attr in ARRAY_METHODS:
            return canonical("." + call.func.attr)
        return "<expr>"
    head = dotted.split(".")[0]
    if "." not in dotted or head in MODULES:
        return canonical(dotted)
    return canonical("." + dotted.rsplit(".", 1)[1])


# Steps of equal work in place (O(the part written) into storage the sweep owns), named alike: a
# row written into an owned array and an item appended to an owned list; the adjoint of an append
# popped from the adjoint list (``split_last``) and the adjoint of a row write (the part read,
# ``setitem_value_vjp``, then zeroed in place, ``setitem_into``).
SAME_WORK = {"s2s.setitem_into": (".append",),
             "s2s.split_last": ("s2s.setitem_value_vjp", ".append")}
# An index write made plain numpy (code made for a call's shapes: ``out[t] = acc``, ``g[1:] += h``)
# is the helper's work (``setitem_into``, ``getitem_add``) without its checks; so is the written
# value's adjoint read as a copy of its part (``g[t].copy()``: ``setitem_value_vjp``).
PLAIN_WRITES = {ast.Assign: "s2s.setitem_into", ast.AugAssign: "s2s.getitem_add"}
PART_COPY = "s2s.setitem_value_vjp"


def operations(nodes) -> Counter:
    """Calls by canonical name, ``@`` as ``np.matmul``, and plain index writes as their
    helpers, under ``nodes``."""
    counts = Counter()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Call):
                called = PART_COPY if isinstance(node.func, ast.Attribute) and node.func.attr == "copy" \
                    and isinstance(node.func.value, ast.Subscript) and not node.args else call_name(node)
                for name in SAME_WORK.get(called, (called,)):
                    counts[name] += 1
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                counts["np.matmul"] += 1
            elif type(node) in PLAIN_WRITES and isinstance(
                    node.targets[0] if isinstance(node, ast.Assign) else node.target, ast.Subscript):
                for name in SAME_WORK.get(PLAIN_WRITES[type(node)], (PLAIN_WRITES[type(node)],)):
                    counts[name] += 1
    return counts


def generated_functions(kernel, primal):
    """The generated sweeps (ast.FunctionDef) of ``primal`` in the kernel's mode, made for the
    kernel's arguments (for those that are numbers, and for the arrays' shape signature:
    specialize.py), as value_and_grad runs them from their second call on."""
    params = primal.__code__.co_varnames[: primal.__code__.co_argcount]
    wrt = tuple(params[i] for i in kernel.argnums)
    args = kernel.make(np.random.default_rng(0), None)
    split = split_call(primal, primal.__name__, params, kernel.argnums, args, {})
    if split is not None:  # pytrees: the code made for their structures and leaves' shapes
        module = ast.parse(TreeBuilds(primal, wrt).specialized_text(split))
        names = {f"{primal.__name__}_fwd", f"{primal.__name__}_bwd"}
        return [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name in names]
    numbers = numbers_passed(params, args, {})
    shapes = shape_signature(params, args) if kernel.mode == "rev" else ()
    generated = generate_for_function(primal, Options(wrt=wrt, mode=kernel.mode, numbers=numbers,
                                                      shapes=shapes))
    module = ast.parse(generated.text)
    names = ({generated.names.fwd, generated.names.bwd} if kernel.mode == "rev"
             else {n.name for n in module.body if isinstance(n, ast.FunctionDef)})
    return [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name in names]


def work(kernel, primal) -> Counter:
    """Per loop step (loop kernels: the bodies of the generated loops) or per call (others)."""
    functions = generated_functions(kernel, primal)
    if not kernel.loop:
        return operations(functions)
    loops = [node for fn in functions for node in ast.walk(fn)
             if isinstance(node, (ast.For, ast.While))]
    return operations([stmt for loop in loops for stmt in loop.body])


def differences(a: Counter, b: Counter) -> str:
    keys = sorted(set(a) | set(b))
    return ", ".join(f"{k}: {a[k]} vs {b[k]}" for k in keys if a[k] != b[k])


# Where the generated work differs between spellings today (issue 28's findings; see
# benchmarks/README.md), marked xfail(strict=True) with what differs. Key: (kernel, spelling
# compared with the kernel's first spelling). None today (session 17 closed the last four).
KNOWN: dict = {}

REFUSED: dict = {}  # (kernel, spelling) -> why s2sgrad refuses it (none today)


def _cases():
    seen = set()
    for kernel in kernels.KERNELS:
        first = kernel.spellings[0][0]
        for name, fn in kernel.spellings[1:]:
            if fn in seen or name in kernels.DISTINCT:
                continue
            seen.add(fn)
            marks = []
            if (kernel.name, name) in REFUSED:
                marks.append(pytest.mark.xfail(strict=True, raises=TransformError,
                                               reason=REFUSED[(kernel.name, name)]))
            elif (kernel.name, name) in KNOWN:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[(kernel.name, name)]))
            yield pytest.param(kernel.name, first, name, marks=marks, id=f"{kernel.name}-{name}")


@pytest.mark.parametrize("kernel_name, first, other", list(_cases()))
def test_spellings_generate_the_same_calls(kernel_name, first, other):
    kernel = kernels.BY_NAME[kernel_name]
    want = work(kernel, kernels.spelling(kernel_name, first))
    got = work(kernel, kernels.spelling(kernel_name, other))
    assert got == want, f"{other} vs {first}: {differences(got, want)}"


def test_every_kernel_has_two_spellings_and_the_set_has_25():
    assert len(kernels.KERNELS) >= 25
    for kernel in kernels.KERNELS:
        assert len(kernel.spellings) >= 2, kernel.name


def test_canonical_names_equate_spellings_of_one_operation():
    tree = ast.parse("np.dot(h, W); h.dot(W); h @ W; np.matmul(h, W); math.sin(x); np.sin(x);"
                     "x.sum(); np.sum(x); s2s.dot_vjp_a(g, h, W); s2s.matmul_vjp_a(g, h, W);"
                     "tape.append(x); out[t] = x; g[1:] += h; s2s.getitem_add(g, h, x, t)")
    counts = operations(tree.body)
    assert counts == Counter({"np.matmul": 4, "np.sin": 2, "np.sum": 2, "s2s.matmul_vjp_a": 2,
                              ".append": 2, "s2s.getitem_add": 2})
