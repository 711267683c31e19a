"""``@differentiable``: a function -> the same function, transformed at decoration time, with
``.grad``, ``.value_and_grad`` and ``.source`` attached.

The generated text comes from the disk cache when the function's module text, its options and the
s2sgrad installation are unchanged (and the files of helpers it calls from other modules too), so a
warm import does no libcst or black work. The text is executed on first use of ``.grad`` /
``.value_and_grad``, with the names it reads taken from the function's globals at that moment (so
module-level names defined below the function are seen, as in plain Python).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import linecache
import os
import sys
from typing import Any, Callable, Optional

from . import __version__, runtime
from .api import SOURCE_ATTR
from .boundary import api_boundary
from .errors import Location, TransformError
from .read.capture import MADE_ATTR, SourceUnit, display_path, from_function, is_source_function
from .read.live import fingerprint, names_read, resolve
from .write import cache
from .write.loader import load


@functools.lru_cache(maxsize=1)
def installation_fingerprint() -> str:
    """A hash of s2sgrad's own source files: an edited (editable) install invalidates the cache."""
    root = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return digest.hexdigest()


def _registry_fingerprint() -> str:
    """Which gradients are registered (by name and rule function): they change generated code."""
    from .registry import registered

    return ";".join(f"{name}={getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"
                    for name, fn in sorted(registered().items()))


def cache_key(fun: Callable, unit: SourceUnit, wrt: tuple, has_aux: bool = False,
              mode: str = "rev") -> str:
    """What the generated text depends on, hashed: the module text, where the def is, what the
    names the function (and the functions it calls) read are bound to, the options (reverse or
    forward mode), the registered gradients, and the Python and s2sgrad versions."""
    return cache.make_key(
        unit.text, unit.path, unit.module, unit.name, str(unit.def_line), ",".join(wrt),
        f"has_aux={has_aux}", f"mode={mode}", fingerprint(fun), _registry_fingerprint(),
        sys.version.split()[0], __version__, installation_fingerprint())


def _module_digest(filename: str) -> str:
    linecache.checkcache(filename)
    return hashlib.sha256("".join(linecache.getlines(filename)).encode()).hexdigest()


def _dependencies(fun: Callable, live: dict) -> list:
    """``[module, filename, sha256]`` for each other module whose functions were inlined."""
    own = fun.__code__.co_filename
    found = {(v.__module__, v.__code__.co_filename) for v in live.values()
             if is_source_function(v) and hasattr(v, "__code__")}
    return [[module, f, _module_digest(f)] for module, f in sorted(found) if f != own]


def _fresh(entry: dict) -> bool:
    deps = entry.get("deps")
    if not isinstance(deps, list):
        return False
    return all(isinstance(d, list) and len(d) == 3 and all(isinstance(p, str) for p in d)
               and _module_digest(d[1]) == d[2] for d in deps)


def _valid_call(call: Any) -> bool:
    return (isinstance(call, dict) and sorted(call) == ["bwd", "fwd"]
            and all(isinstance(v, str) for v in call.values()))


def transform(fun: Callable, unit: SourceUnit, wrt: tuple, has_aux: bool = False) -> dict:
    """The generated text and names for ``fun``: from the disk cache, else from the pipeline
    (which stores it). Returns ``{"text", "call": {"fwd", "bwd"}, "deps"}``."""
    key = cache_key(fun, unit, wrt, has_aux)
    entry = cache.get(key)
    if (entry is not None and isinstance(entry.get("text"), str) and _valid_call(entry.get("call"))
            and _fresh(entry)):
        return entry
    from .pipeline import Options, generate  # libcst and black: only on a cache miss

    generated = generate(unit, Options(wrt=wrt, has_aux=has_aux))
    entry = {"text": generated.text, "call": {"fwd": generated.names.fwd, "bwd": generated.names.bwd},
             "deps": _dependencies(fun, dict(generated.live_names))}
    cache.put(key, entry)
    return entry


def transform_jvp(fun: Callable, unit: SourceUnit, wrt: tuple) -> dict:
    """The forward-mode text for ``fun``: from the disk cache, else from the pipeline (which
    stores it). Returns ``{"text", "call": {"jvp"}, "deps"}``."""
    key = cache_key(fun, unit, wrt, mode="fwd")
    entry = cache.get(key)
    if entry is not None and isinstance(entry.get("text"), str) and \
            isinstance(entry.get("call"), dict) and isinstance(entry["call"].get("jvp"), str) and \
            _fresh(entry):
        return entry
    from .pipeline import generate_jvp  # libcst and black: only on a cache miss

    generated = generate_jvp(unit, wrt)
    entry = {"text": generated.text, "call": {"jvp": generated.names.fwd},
             "deps": _dependencies(fun, dict(generated.live_names))}
    cache.put(key, entry)
    return entry


def load_jvp(fun: Callable, entry: dict) -> Callable:
    """Execute a forward-mode transform's text with ``fun``'s names: its ``<name>_jvp``."""
    namespace = load(entry["text"], fun.__qualname__, namespace_for(fun, entry["text"], entry["deps"]))
    return namespace[entry["call"]["jvp"]]


def load_entry(fun: Callable, entry: dict) -> tuple:
    """Execute a transform's text with ``fun``'s names: its (forward, backward) functions."""
    namespace = load(entry["text"], fun.__qualname__, namespace_for(fun, entry["text"], entry["deps"]))
    return namespace[entry["call"]["fwd"]], namespace[entry["call"]["bwd"]]


def namespace_for(fun: Callable, text: str, deps: list) -> dict:
    """Values for the names ``text`` reads: ``fun``'s globals and closure now, then the globals of
    the other modules whose functions were inlined (for the constants those read), then the
    registered gradient functions."""
    from .registry import registered

    wanted = names_read(compile(text, "<s2sgrad>", "exec"))
    scopes = [resolve(fun, wanted)]
    scopes.extend(vars(sys.modules[d[0]]) for d in deps if d[0] in sys.modules)
    scopes.append({getattr(fn, "__name__", ""): fn for fn in registered().values()})
    out: dict = {}
    for scope in scopes:
        for name in wanted:
            if name not in out and name in scope:
                out[name] = scope[name]
    return out


class _Loaded:
    """The generated code, executed on first use: ``self(args, kwargs)`` -> ``(value, grads)``."""

    def __init__(self, fun: Callable, entry: dict) -> None:
        self.fun = fun
        self.entry = entry
        self.text = entry["text"]
        self.sweeps: Optional[tuple] = None

    def __call__(self, args: tuple, kwargs: dict) -> tuple:
        if self.sweeps is None:
            self.sweeps = load_entry(self.fun, self.entry)
        fwd, bwd = self.sweeps
        value, residuals = fwd(*args, **kwargs)
        runtime.check_scalar(value, self.fun.__name__)
        handover = [residuals]
        del residuals
        return value, bwd(handover.pop(), 1.0)  # the backward holds the only reference, frees early


def _default_wrt(fun: Callable) -> tuple:
    params = tuple(inspect.signature(fun).parameters)
    if not params:
        code = fun.__code__
        lines = linecache.getlines(code.co_filename)
        quoted = lines[code.co_firstlineno - 1] if len(lines) >= code.co_firstlineno else ""
        raise TransformError(f"{fun.__name__} has no parameter to differentiate with respect to",
                             Location(display_path(code.co_filename), code.co_firstlineno, 1, quoted),
                             "give it a parameter, or name one with wrt=")
    return (params[0],)


def _attach(fun: Callable, wrt: tuple, text: str, sweeps: _Loaded) -> Callable:
    single = len(wrt) == 1
    name = fun.__name__

    def value_and_grad(*args: Any, **kwargs: Any) -> tuple:
        value, grads = sweeps(args, kwargs)
        return value, (grads[0] if single else tuple(grads))

    def grad(*args: Any, **kwargs: Any) -> Any:
        return value_and_grad(*args, **kwargs)[1]

    for helper, what in ((grad, "gradient"), (value_and_grad, "value and gradient")):
        helper.__name__ = f"{name}.{helper.__name__}"
        helper.__qualname__ = f"{fun.__qualname__}.{helper.__name__.rsplit('.', 1)[1]}"
        helper.__module__ = fun.__module__
        helper.__doc__ = f"The {what} of {name} with respect to {', '.join(wrt)}."
        setattr(helper, SOURCE_ATTR, text)
        setattr(helper, MADE_ATTR, f"{helper.__name__} (made by @s2sgrad.differentiable)")
    fun.grad = grad
    fun.value_and_grad = value_and_grad
    fun.source = text
    setattr(fun, SOURCE_ATTR, text)
    return fun


@api_boundary
def differentiable(fun: Optional[Callable] = None, *, wrt: Optional[tuple] = None) -> Any:
    """Mark ``fun`` for ``s2sgrad emit`` and transform it now.

    ``fun`` keeps computing its value; ``fun.grad(*args)`` returns the gradient with respect to
    ``wrt`` (parameter names; default the first parameter): one array, or a tuple in ``wrt`` order.
    ``fun.value_and_grad`` returns ``(value, grad)``; ``fun.source`` is the generated code.
    A function s2sgrad cannot differentiate raises a located TransformError here, at import.
    """
    if fun is None:
        return functools.partial(differentiable, wrt=wrt)
    names = (wrt,) if isinstance(wrt, str) else (tuple(wrt) if wrt is not None else None)
    unit = from_function(fun)
    names = names if names else _default_wrt(fun)
    entry = transform(fun, unit, names)
    return _attach(fun, names, entry["text"], _Loaded(fun, entry))
