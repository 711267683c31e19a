"""Generated code for a live function, cached and loaded: (function, wrt, options, mode) -> its
generated code, a record ``{"text", "call", "deps", "wrt"}`` -> the callables it defines.

``code_for`` takes the code from the disk cache (write/cache.py) when the function's module text,
the values the names it reads are bound to, its options, the registered gradients and the s2sgrad
installation are unchanged (and the files of functions it calls from other modules too), so a warm
call does no libcst or black work; otherwise it runs the pipeline and stores the code.
``functions`` executes a code record's text (write/loader.py) with the function's names, kept current
by a Binding (write/binding.py: callers run ``fresh(fn)`` before generated code), and returns its
callables: ``(forward sweep, backward sweep, <f>_grad)`` in reverse mode (``"rev"``), ``(jvp,)`` in forward
mode (``"fwd"``). ``build`` does both. Used by api.py and decorator.py; imports neither.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import linecache
import os
import sys
from collections import OrderedDict
from typing import Any, Callable, Optional

from .version import __version__
from .arguments import MASKED, masked_refusal
from .errors import Location, TransformError
from .read.capture import SourceUnit, caller_location, from_function, is_source_function
from .read.live import (BINDING_KEY, binding_of, fingerprint, names_read, reachable, resolve,
                        specialized_on)
from .registry import registered
from .transformations import TRANSFORMATIONS
from .write import cache
from .write.binding import Binding, Contents, fresh

# Per mode, the keys of a code record's "call" (the generated names of its callables), in call order.
# "rev2": reverse mode, then forward mode over its <f>_grad (compose.py): the gradient with the
# Hessian-vector product, the same in two parts ("" where it does not split: values once, a
# tangent per column), the product alone, and the tangent part for every column at once ("" where
# it has no batched form: differentiate/batching.py).
# "fwd_parts": forward mode, and its jvp in two parts for Jacobians (compose.forward_parts): the
# values once, the tangent part for many tangents at once ("" where it has no batched form).
# "rev_flat": reverse mode of a generated gradient's sweeps inlined into one function where they
# join, else of the function as written (compose.reverse_of_flat): what jacrev differentiates.
CALLS = {"rev": ("fwd", "bwd", "grad"), "rev_flat": ("fwd", "bwd", "grad"), "fwd": ("jvp",),
         "fwd_grad": ("jvp",), "fwd_numbers": ("jvp",),
         "fwd_parts": ("jvp", "jvp_values", "jvp_tangents"),
         "rev2": ("fwd", "bwd", "grad", "jvp", "hvp_values", "hvp_tangent", "hvp",
                  "hvp_tangents")}


@functools.lru_cache(maxsize=1)
def installation_fingerprint() -> str:
    """A hash of s2sgrad's own source files (the package's, nothing beside it: not the repository's
    tests or virtual environment, not the rest of site-packages): an edited (editable) install
    invalidates the cache."""
    root = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for path in package_sources():
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()


def package_sources() -> list:
    """The paths of s2sgrad's own ``.py`` files, in a fixed order."""
    root = os.path.dirname(os.path.abspath(__file__))
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.extend(os.path.join(directory, name) for name in sorted(files) if name.endswith(".py"))
    return found


def registry_fingerprint() -> str:
    """Which gradients are registered (by name and rule function): they change generated code."""
    return ";".join(f"{name}={getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"
                    for name, fn in sorted(registered().items()))


def cache_key(fun: Callable, unit: SourceUnit, wrt: tuple, has_aux: bool = False,
              mode: str = "rev", trees: tuple = (), numbers: tuple = (), shapes: tuple = ()) -> str:
    """What the generated text depends on, hashed: the module text, where the def is, what the
    names the function (and the functions it calls) read are bound to, the options (reverse or
    forward mode, the parameters given numbers, the arrays' shape signature), the registered
    gradients, and the Python and s2sgrad versions."""
    return cache.make_key(
        unit.text, unit.path, unit.module, unit.name, str(unit.def_line), ",".join(unit.params),
        ",".join(wrt),
        f"has_aux={has_aux}", f"mode={mode}", _trees_text(trees), "numbers=" + ",".join(numbers),
        f"shapes={shapes!r}", fingerprint(fun), registry_fingerprint(),
        sys.version.split()[0], __version__, installation_fingerprint())


def _trees_text(trees: tuple) -> str:
    """The structures of tree parameters, as the cache key holds them."""
    return "trees=" + ";".join(f"{param}:{treedef.describe()}" for param, treedef in trees)


def _module_digest(filename: str) -> str:
    linecache.checkcache(filename)
    return hashlib.sha256("".join(linecache.getlines(filename)).encode()).hexdigest()


def _dependencies(fun: Callable, live: dict) -> list:
    """``[module, filename, sha256]`` for each other module whose functions were inlined."""
    own = fun.__code__.co_filename
    found = {(v.__module__, v.__code__.co_filename) for v in live.values()
             if is_source_function(v) and hasattr(v, "__code__")}
    return [[module, f, _module_digest(f)] for module, f in sorted(found) if f != own]


def _usable(code: Optional[dict], mode: str) -> bool:
    """A stored code record of ``mode`` whose text, callables and dependencies are all still valid."""
    if code is None or not isinstance(code.get("text"), str):
        return False
    call, deps = code.get("call"), code.get("deps")
    if not (isinstance(call, dict) and sorted(call) == sorted(CALLS[mode])
            and all(isinstance(v, str) for v in call.values()) and isinstance(deps, list)):
        return False
    return all(isinstance(d, list) and len(d) == 3 and all(isinstance(p, str) for p in d)
               and _module_digest(d[1]) == d[2] for d in deps)


_REFUSAL_FIELDS = ("message", "path", "line", "col", "text", "hint")


def _store_refusal(key: str, fun: Callable, exc: TransformError) -> None:
    """Store the pipeline's refusal of ``key`` (a plain TransformError: what it says and where),
    with the files of every user function ``fun`` reaches in other modules as its dependencies."""
    if type(exc) is not TransformError or exc.location == caller_location() or \
            not hasattr(fun, "__code__"):
        return  # (one located at the caller's call is about that call, not about the code; a
        # function without Python code, a numpy function given directly, is refused again cheaply)
    loc = exc.location
    own = fun.__code__.co_filename
    files = sorted({(getattr(f, "__module__", "") or "", f.__code__.co_filename)
                    for f, _ in reachable(fun) if hasattr(f, "__code__")})
    _keep(key, {"refused": {"message": exc.message, "path": loc.path, "line": loc.line,
                            "col": loc.col, "text": loc.text, "hint": exc.hint,
                            "member_of": exc.member_of, "arrays_only": exc.arrays_only},
                "deps": [[module, f, _module_digest(f)] for module, f in files if f != own]})


def refused(code: Optional[dict]) -> Optional[TransformError]:
    """The TransformError a stored refusal record holds (its dependencies unchanged), else None."""
    if code is None or not isinstance(code.get("refused"), dict):
        return None
    stored, deps = code["refused"], code.get("deps")
    if not (isinstance(deps, list) and all(isinstance(d, list) and len(d) == 3 for d in deps)
            and all(_module_digest(d[1]) == d[2] for d in deps)):
        return None
    try:
        kinds = (str, str, int, int, str, str)
        if not all(isinstance(stored[f], k) for f, k in zip(_REFUSAL_FIELDS, kinds)):
            return None
        exc = TransformError(stored["message"], Location(stored["path"], stored["line"],
                                                         stored["col"], stored["text"]), stored["hint"])
    except (KeyError, TypeError):
        return None
    if isinstance(stored.get("member_of"), str):
        exc.member_of = stored["member_of"]
    exc.arrays_only = stored.get("arrays_only") is True
    return exc


def code_for(fun: Callable, unit: SourceUnit, wrt: tuple, has_aux: bool = False,
              mode: str = "rev", trees: tuple = (), numbers: tuple = (), shapes: tuple = ()) -> dict:
    """The generated text and names for ``fun`` (read as ``unit``) in ``mode``: from the disk
    cache, else from the pipeline (stored). Returns ``{"text", "call", "deps"}``, ``call`` mapping
    each key of ``CALLS[mode]`` to a generated function's name. ``numbers``: parameters the
    code is made for calls passing numbers to (pipeline.Options.numbers); ``shapes``: the array
    parameters' shapes it is made for (Options.shapes)."""
    key = cache_key(fun, unit, wrt, has_aux, mode, trees, numbers, shapes)
    code = _known(key, mode)
    if code is not None:
        refusal = refused(code)
        if refusal is not None:  # the pipeline refused this key before: the same refusal
            raise refusal
        return dict(code)
    try:
        code = _made(fun, unit, wrt, has_aux, mode, trees, numbers, shapes)
    except TransformError as exc:
        _store_refusal(key, fun, exc)
        raise
    _keep(key, code)
    return dict(code)


# Generated code made or read in this process, by cache key (the most recent _MADE_LIMIT): the same
# key as the disk cache's, so the same code; serves a transform made again when the disk cache
# is off (S2SGRAD_CACHE_DIR empty) or lost its file.
_MADE: "OrderedDict[str, dict]" = OrderedDict()
_MADE_LIMIT = 512


def _known(key: str, mode: str) -> Optional[dict]:
    """The valid code or refusal stored under ``key``: on disk, else made in this process
    (written to disk again); None where there is none or its dependencies changed."""
    for code in (cache.get(key), _MADE.get(key)):
        if _usable(code, mode) or refused(code) is not None:
            if code is not _MADE.get(key):
                _MADE[key] = code
            else:
                cache.put(key, code)
            _MADE.move_to_end(key)
            return code
    return None


def _keep(key: str, code: dict) -> None:
    """Store ``code`` under ``key``: on disk and in this process."""
    cache.put(key, code)
    _MADE[key] = code
    _MADE.move_to_end(key)
    while len(_MADE) > _MADE_LIMIT:
        _MADE.popitem(last=False)


def _made(fun: Callable, unit: SourceUnit, wrt: tuple, has_aux: bool, mode: str,
          trees: tuple, numbers: tuple = (), shapes: tuple = ()) -> dict:
    """code_for's record made by the pipeline (a TransformError where it refuses)."""
    # libcst and black: only on a cache miss
    from .compose import forward_parts, reverse_of_flat, second_order_text
    from .pipeline import Options, generate

    if mode == "fwd_parts":
        generated, parts = forward_parts(unit, wrt, trees, numbers)
    elif mode == "rev_flat":
        generated, parts = reverse_of_flat(unit, wrt, trees, numbers), ()
    else:
        generated, parts = generate(unit, Options(
            wrt=wrt, has_aux=has_aux, mode="rev" if mode == "rev2" else mode, trees=trees,
            numbers=numbers, shapes=shapes)), ()
    text, callables = generated.text, (*generated.callables, *parts)
    if mode == "rev2":
        from .lower.resolve import live_arrays

        text, hvp = second_order_text(text, f"<s2sgrad-generated {unit.name}>", unit.module,
                                      ((generated.names.grad, generated.wrt),), live_arrays(unit.live))
        callables = (*callables, *(name or "" for name in hvp))
    code = {"text": text, "call": dict(zip(CALLS[mode], callables)),
             "deps": _dependencies(fun, dict(generated.live_names)), "wrt": list(generated.wrt)}
    return code


@functools.lru_cache(maxsize=256)
def _names_wanted(text: str) -> tuple:
    """The global names generated module ``text`` reads (compiled once per text)."""
    return tuple(names_read(compile(text, "<s2sgrad>", "exec")))


def namespace_for(fun: Callable, text: str, deps: list) -> tuple:
    """``(values, reads)`` for the names ``text`` reads: ``fun``'s globals and closure now, then
    the globals of the other modules whose functions were inlined (for the constants those
    read), then the registered gradient functions; ``reads``: ``(holder, name)``, the dict or
    cell each of the first two kinds lives in (read again before each run: binding.py)."""
    wanted = _names_wanted(text)
    scopes = [resolve(fun, wanted)]
    for d in deps:
        if d[0] in sys.modules:
            scope = vars(sys.modules[d[0]])
            scopes.append({name: (value, scope) for name, value in scope.items()})
    scopes.append({getattr(fn, "__name__", ""): (fn, None) for fn in registered().values()})
    values: dict = {}
    reads = []
    for scope in scopes:
        for name in wanted:
            if name not in values and name in scope:
                values[name], holder = scope[name]
                if holder is not None:
                    reads.append((holder, name))
    masked = sorted(name for name, value in values.items() if isinstance(value, MASKED))
    if masked:  # numpy's masked semantics are not differentiated: refused as an argument is
        raise masked_refusal(getattr(fun, "__name__", "the function"),
                             f"`{masked[0]}`, a value it reads from its globals or closure,", masked[0])
    return values, tuple(reads)


def contents(fun: Callable, text: str, deps: list) -> Contents:
    """What loading ``text`` (of ``fun``'s code with ``deps``) takes: values and where they
    live, what it is specialized on, the generated modules it was made from."""
    values, reads = namespace_for(fun, text, deps)
    guards, generated = specialized_on(fun)
    bindings = tuple({id(b): b for b in map(binding_of, generated) if b is not None}.values())
    return Contents(text, values, reads, tuple(guards), bindings)


# (id of fun, the text, what else it was made for) -> the namespace its Binding keeps current:
# a transformation made again (``s2sgrad.grad(f)(x)`` in a loop, ``hvp(f, ...)`` per call)
# reuses the loaded module instead of executing and checking it anew (a Binding reads the user's
# values again before each run: derive.fresh). The namespace holds ``fun`` (its Binding remakes
# from it), so an id is not reused while its entry lives; at most BOUND_MOST are kept.
_BOUND: OrderedDict = OrderedDict()
BOUND_MOST = 256


def _bound(fun: Callable, make: Callable[[], tuple], made_for: Any = ()) -> dict:
    """The namespace of the text ``make()`` gives (with its deps), kept current by a Binding
    that calls ``make`` again to rebuild; the one made before for ``fun``, this text and
    ``made_for`` where it is kept."""
    first = [make()]
    key = (id(fun), first[0][0], made_for)
    namespace = _BOUND.get(key)
    if namespace is not None:
        _BOUND.move_to_end(key)
        namespace[BINDING_KEY].ensure()  # the user's values now, as a new Binding reads them
        return namespace
    namespace = Binding(fun.__qualname__,
                        lambda: contents(fun, *(first.pop() if first else make()))).namespace
    _BOUND[key] = namespace
    if len(_BOUND) > BOUND_MOST:
        _BOUND.popitem(last=False)
    return namespace


def functions(fun: Callable, code: dict, mode: str = "rev",
              remake: Optional[Callable[[], dict]] = None, made_for: Any = ()) -> tuple:
    """Execute a code record's text with ``fun``'s names: its callables, in ``CALLS[mode]`` order;
    ``remake()`` gives the code again when the names' values no longer fit it."""
    pending = [code]

    def make() -> tuple:
        made = pending.pop() if pending else (remake or (lambda: code))()
        if made["call"] != code["call"]:
            raise _refit(sorted(made["call"].values()))
        return made["text"], made["deps"]

    namespace = _bound(fun, make, (mode, made_for))
    return tuple(namespace[code["call"][k]] if code["call"][k] else None for k in CALLS[mode])


def _refit(names: list) -> TransformError:
    """The refusal of a rebuild whose generated functions are not those first handed out."""
    return TransformError(
        "a name the differentiated code reads now holds a value its generated code was not made "
        f"for, and the code generated again defines other functions ({', '.join(map(str, names))})",
        caller_location(), "transform the function again (call s2sgrad.grad etc. once more)")


class Kept:
    """What was made for a function (its generated callables, loaded) and the key of how it was
    made, kept while it still fits: the function object and its code are the same, the binding
    of the generated module still fits the user's values (write/binding.py: the functions,
    callables and modules its text was specialized on, the types of the other values; ensured,
    a refusal raised there as at the first make) and was not rebuilt, and the function's file is
    as it was (an edit is refused until the module is reloaded: read/live.check_current). A
    transformation made again (``s2sgrad.jvp(f, ...)`` or ``grad(f)(x)`` in a loop) then costs a
    dict lookup and that check, not the code records' key. The last ``most`` are kept; an entry
    holds the function, so its id is not reused while it lives."""

    def __init__(self, most: int = 256) -> None:
        self.most = most
        self.entries: OrderedDict = OrderedDict()

    def get(self, fun: Callable, key: tuple) -> Any:
        """What was kept for ``fun`` under ``key`` where it still fits, else None."""
        try:
            found = self.entries.get((id(fun),) + key)
        except TypeError:  # a key of unhashable parts: nothing is kept for it
            return None
        if found is None or found[0] is not fun or found[1] is not getattr(fun, "__code__", None):
            return None
        binding, version, state, made = found[2:]
        binding.ensure()
        if binding.version != version or file_state(fun) != state:
            return None
        self.entries.move_to_end((id(fun),) + key)
        return made

    def keep(self, fun: Callable, key: tuple, made: Any, loaded: Any) -> Any:
        """Keep ``made`` for ``fun`` under ``key`` (``loaded``: a generated function of it,
        whose binding decides whether it still fits); returns ``made``."""
        binding = binding_of(loaded)
        if binding is None:
            return made
        try:
            full = (id(fun),) + key
            hash(full)
        except TypeError:
            return made
        self.entries[full] = (fun, getattr(fun, "__code__", None), binding, binding.version,
                              file_state(fun), made)
        if len(self.entries) > self.most:
            self.entries.popitem(last=False)
        return made


def file_state(fun: Callable) -> Optional[tuple]:
    """The size and time of change of the file ``fun``'s code was compiled from, or None."""
    try:
        found = os.stat(fun.__code__.co_filename)
    except (AttributeError, OSError, TypeError):
        return None
    return found.st_size, found.st_mtime_ns


_BUILT = Kept()  # build's results


def build(fun: Callable, wrt: tuple, has_aux: bool = False, mode: str = "rev",
          trees: tuple = (), numbers: tuple = (), shapes: tuple = ()) -> tuple:
    """``(text, callables)`` for the live function ``fun``: code_for, then functions.
    ``trees``: ``(parameter, TreeDef)`` for parameters given pytrees; ``numbers``: parameters
    given numbers; ``shapes``: array parameters' shapes (pipeline.Options)."""
    key = ("build", wrt, has_aux, mode, trees, numbers, shapes)
    found = _BUILT.get(fun, key)
    if found is not None:
        return found
    code = code_for(fun, from_function(fun), wrt, has_aux, mode, trees, numbers, shapes)
    callables = functions(fun, code, mode, lambda: code_for(
        fun, from_function(fun), wrt, has_aux, mode, trees, numbers, shapes),
        (wrt, has_aux, trees, numbers, shapes))
    return _BUILT.keep(fun, key, (code["text"], callables), next((c for c in callables if c), None))


def _entries() -> Any:
    """write/entries.py, imported on first use (it loads libcst and black: a warm start from the
    disk cache never does)."""
    from .write import entries

    return entries


def _entry(name: str, *args: Any, returns: Optional[tuple] = None) -> Optional[tuple]:
    """write/entries.py's ``name(*args)`` (``returns``: api_entry's Returns fields, appended as
    one): the text with a function appended and that function's name, or None. Kept like code
    records, on disk and in this process, keyed by the arguments (a generated module's text, names,
    flags), so a warm start neither imports libcst nor runs black (arguments that are not JSON
    data: made each time, not kept)."""
    try:
        given = json.dumps([name, args, returns], sort_keys=True)
    except (TypeError, ValueError):
        given = None
    key = given and cache.make_key("entry", given, sys.version.split()[0], __version__,
                                   installation_fingerprint())
    for stored in ((_MADE.get(key), cache.get(key)) if key else ()):
        found = stored.get("entry", False) if isinstance(stored, dict) else False
        if found is None or (isinstance(found, list) and len(found) == 2
                             and all(isinstance(part, str) for part in found)):
            _MADE[key] = stored
            _MADE.move_to_end(key)
            return None if found is None else tuple(found)
    write = _entries()
    made = getattr(write, name)(*args, *(() if returns is None else (write.Returns(*returns),)))
    if key:
        _keep(key, {"entry": None if made is None else list(made)})
    return made


def api_function(fun: Callable, wrt: tuple, has_aux: bool, value: bool, single: bool,
                 mode: str = "rev", trees: tuple = ()) -> Optional[Callable]:
    """The generated function computing what grad (``value`` False) or value_and_grad of
    ``fun`` returned (write/entries.py), loaded from ``fun``'s code (of ``mode``, "rev" or
    "rev2"; for the structures ``trees``) with it appended; None where that code's
    ``<f>_grad`` is not of codegen's shape."""

    def made_now() -> tuple:
        code = code_for(fun, from_function(fun), wrt, has_aux, mode, trees)
        leaves = tuple(code.get("wrt", wrt))  # the differentiated parameters, leaves of trees
        return code, _entry("api_entry", code["text"], code["call"]["grad"], fun.__name__, leaves,
                            returns=(value, has_aux, single and len(leaves) == 1))

    return _text_and_loaded(fun, made_now, ("api", wrt, has_aux, value, single, mode, trees))[1]


def jacobian_function(fun: Callable, wrt: tuple, single: bool, mode: str = "fwd",
                      outputs: Optional[int] = None, trees: tuple = ()) -> Optional[Callable]:
    """The generated function computing what jacfwd (``mode`` "fwd") or jacrev ("rev") of
    ``fun`` returns (write/entries.py), loaded from ``fun``'s code of that mode (for the
    structures ``trees``: one block per leaf, never ``single``) with it appended; None where it
    cannot be written. ``outputs``: how many items ``fun``'s tuple value has, where its
    generated code does not show it."""
    return jacobian(fun, wrt, single, mode, outputs, trees)[1]


def jacobian(fun: Callable, wrt: tuple, single: bool, mode: str = "fwd",
             outputs: Optional[int] = None, trees: tuple = ()) -> tuple:
    """``(text, function)`` as jacobian_function: the module's text with the Jacobian function
    appended (the code's text and None where it cannot be written)."""

    def made_now() -> tuple:
        code = code_for(fun, from_function(fun), wrt,
                        mode="fwd_parts" if mode == "fwd" else "rev_flat", trees=trees)
        leaves = tuple(code.get("wrt", wrt))  # the differentiated parameters, leaves of trees
        if mode == "rev":
            return code, _entry("reverse_jacobian_entry", code["text"], code["call"]["grad"],
                                fun.__name__, leaves, single, outputs)
        params = tuple(inspect.signature(functions(fun, code, "fwd_parts")[0]).parameters)
        return code, _entry("jacobian_entry", code["text"], code["call"]["jvp"], fun.__name__,
                            leaves, params[len(params) - len(leaves):], single, outputs,
                            (code["call"]["jvp_values"], code["call"]["jvp_tangents"]))

    return _text_and_loaded(fun, made_now, ("jacobian", wrt, single, mode, outputs, trees))


def hvp_function(fun: Callable, wrt: tuple, single: bool, trees: tuple = (),
                 code: Optional[dict] = None) -> tuple:
    """``(text, function)``: the generated Hessian-vector product of scalar ``fun`` with respect
    to ``wrt`` (``<f>_hvp(*args, tangents)``: forward mode over its gradient, write/entries.py),
    loaded from ``fun``'s second-order code (``code`` where the caller has it; for the
    structures ``trees``: a tuple of leaf tangents, never ``single``) with it appended; the
    function None where there is no such product."""
    given = [code] if code is not None else []

    def made_now() -> tuple:
        code = given.pop() if given else code_for(fun, from_function(fun), wrt, mode="rev2",
                                                    trees=trees)
        hvp_name = code["call"]["hvp"]
        if not hvp_name:
            return code, None
        return code, _entry("hvp_entry", code["text"], hvp_name, fun.__name__,
                            tuple(code.get("wrt", wrt)), single and not trees)

    return _text_and_loaded(fun, made_now, ("hvp", wrt, single, trees) if code is None else ())


def hessian_function(fun: Callable, wrt: tuple, single: bool, trees: tuple = (),
                     code: Optional[dict] = None) -> tuple:
    """``(text, function)``: the generated function computing the Hessian of scalar ``fun`` with
    respect to ``wrt`` (forward mode over its gradient, the values once: write/entries.py), loaded
    from ``fun``'s second-order code (``code`` where the caller has it; for the structures
    ``trees``: blocks per pair of leaves, never ``single``) with it appended; the function None
    where it cannot be written."""
    given = [code] if code is not None else []

    def made_now() -> tuple:
        code = given.pop() if given else code_for(fun, from_function(fun), wrt, mode="rev2",
                                                    trees=trees)
        leaves = tuple(code.get("wrt", wrt))
        return code, _entry("hessian_entry", code["text"], code["call"], fun.__name__,
                            leaves, single and not trees)

    return _text_and_loaded(fun, made_now, ("hessian", wrt, single, trees) if code is None else ())


def tangent_gradient_hessian(jvp_fn: Callable, wrt: tuple, tangents: tuple, single: bool,
                             source_name: str) -> tuple:
    """``(text, function)``: the generated Hessian of the function whose generated forward mode is
    ``jvp_fn`` (tangent parameters ``tangents`` of ``wrt``), by reverse mode over it
    (write/entries.py), loaded; the function None where it cannot be written."""

    def made_now() -> tuple:
        code = code_for(jvp_fn, from_function(jvp_fn), wrt)
        return code, _entry("tangent_gradient_hessian_entry", code["text"], code["call"]["grad"],
                            source_name, wrt, tangents, single)

    return _text_and_loaded(jvp_fn, made_now,
                            ("tangent hessian", wrt, tangents, single, source_name))


def tangent_gradient_hvp(jvp_fn: Callable, wrt: tuple, tangents: tuple, single: bool,
                         source_name: str) -> tuple:
    """``(text, function)``: the generated Hessian-vector product of the function whose generated
    forward mode is ``jvp_fn`` (tangent parameters ``tangents`` of ``wrt``), by reverse mode over
    it (write/entries.py), loaded; the function None where it cannot be written."""

    def made_now() -> tuple:
        code = code_for(jvp_fn, from_function(jvp_fn), wrt)
        return code, _entry("tangent_gradient_hvp_entry", code["text"], code["call"]["grad"],
                            source_name, wrt, tangents, single)

    return _text_and_loaded(jvp_fn, made_now, ("tangent hvp", wrt, tangents, single,
                                               source_name))


def gradient_hvp(gradient: Callable, wrt: tuple, single: bool, source_name: str) -> tuple:
    """``(text, function)``: the generated Hessian-vector product of the function whose generated
    gradient is ``gradient`` (its parameters ``wrt`` differentiated), by reverse mode over that
    gradient seeded with the tangents (write/entries.py), loaded; the function None where it
    cannot be written."""

    def made_now() -> tuple:
        code = code_for(gradient, from_function(gradient), wrt)
        return code, _entry("gradient_hvp_entry", code["text"], code["call"]["grad"],
                            source_name, wrt, single)

    return _text_and_loaded(gradient, made_now, ("gradient hvp", wrt, single, source_name))


def _text_and_loaded(fun: Callable, made_now: Callable[[], tuple], key: tuple = ()) -> tuple:
    """``(text, function)``: _loaded's function and the text it comes from (kept under ``key``
    where one is given: Kept)."""
    found = _BUILT.get(fun, key) if key else None
    if found is not None:
        return found
    shown: list = []
    loaded = _loaded(fun, made_now, shown)
    return _BUILT.keep(fun, key, (shown[0], loaded), loaded) if key else (shown[0], loaded)


def _loaded(fun: Callable, made_now: Callable[[], tuple],
            shown: Optional[list] = None) -> Optional[Callable]:
    """The function ``made = (text, name)`` names, loaded with ``fun``'s names, where
    ``made_now()`` gives ``(code, made)`` (again for a rebuild); None for None. ``shown``
    gets the text (the code's where ``made`` is None)."""
    code, made = made_now()
    if shown is not None:
        shown.append(code["text"] if made is None else made[0])
    if made is None:
        return None
    pending = [(made[0], code["deps"])]

    def make() -> tuple:
        if pending:
            return pending.pop()
        code_now, made_again = made_now()
        if made_again is None or made_again[1] != made[1]:
            raise _refit([made[1]])
        return made_again[0], code_now["deps"]

    return _bound(fun, make, made[1])[made[1]]


__all__ = ["CALLS", "Kept", "api_function", "build", "contents", "fresh", "gradient_hvp", "hessian_function", "tangent_gradient_hessian", "tangent_gradient_hvp", "hvp_function", "jacobian", "jacobian_function", "cache_key", "code_for", "functions", "installation_fingerprint",
           "namespace_for", "registry_fingerprint"]


def _gradients(fn: Callable, wrt: tuple) -> Optional[Callable]:
    """The generated function returning ``fn``'s gradients with respect to ``wrt`` as a tuple,
    seeded (a vjp's pullback, read inside a differentiated function)."""
    return api_function(fn, wrt, False, False, False)


def _forward(fn: Callable, wrt: tuple) -> Callable:
    """``fn``'s generated forward mode with respect to ``wrt``."""
    return build(fn, wrt, mode="fwd")[1][0]


TRANSFORMATIONS.derive_with(_gradients, _forward)
