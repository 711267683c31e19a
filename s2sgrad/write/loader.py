"""Load: generated module text -> a namespace of callables, with the text registered in linecache.

``inspect.getsource``, tracebacks and pdb show the generated lines. Compiled code is cached by the
text's hash, so a second load of the same text only executes the module body.
"""

from __future__ import annotations

import functools
import hashlib
import linecache
import types
from typing import Any, Mapping, Optional

from ..read.live import GENERATED_PREFIX


def filename_for(text: str, qualname: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{GENERATED_PREFIX}{qualname} {digest}>"


@functools.lru_cache(maxsize=256)
def _compile(text: str, filename: str):
    return compile(text, filename, "exec")


def load(text: str, qualname: str, live_names: Mapping[str, Any],
         namespace: Optional[dict] = None) -> dict:
    """Execute ``text`` as a module whose globals start with ``live_names``: a fresh one, or
    ``namespace`` again (a rebuild): then the functions it held run the new text's code (those
    the new text no longer defines raise), so what was handed out stays current."""
    filename = filename_for(text, qualname)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {} if namespace is None else namespace
    old = {name: value for name, value in namespace.items()
           if isinstance(value, types.FunctionType) and value.__globals__ is namespace}
    namespace.update(live_names)
    namespace["__name__"] = f"s2sgrad_generated.{qualname}"
    namespace["__file__"] = filename
    exec(_compile(text, filename), namespace)
    for name, function in old.items():
        new = namespace.get(name)
        fits = isinstance(new, types.FunctionType) and new.__globals__ is namespace
        source = new if fits else _gone
        function.__code__ = source.__code__
        function.__defaults__, function.__kwdefaults__ = source.__defaults__, source.__kwdefaults__
        if fits:
            function.__doc__ = new.__doc__
            namespace[name] = function
    return namespace


def _gone(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("s2sgrad rebuilt this generated code, which no longer defines this "
                       "function; transform the function again")
