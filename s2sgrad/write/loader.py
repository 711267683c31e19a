"""Load: generated module text -> a namespace of callables, with the text registered in linecache.

``inspect.getsource``, tracebacks and pdb show the generated lines. Compiled code is cached by the
text's hash, so a second load of the same text only executes the module body.
"""

from __future__ import annotations

import functools
import hashlib
import linecache
from typing import Any, Mapping

from ..read.live import GENERATED_PREFIX


def filename_for(text: str, qualname: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{GENERATED_PREFIX}{qualname} {digest}>"


@functools.lru_cache(maxsize=256)
def _compile(text: str, filename: str):
    return compile(text, filename, "exec")


def load(text: str, qualname: str, live_names: Mapping[str, Any]) -> dict:
    """Execute ``text`` as a fresh module whose globals start with ``live_names``."""
    filename = filename_for(text, qualname)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace: dict = dict(live_names)
    namespace["__name__"] = f"s2sgrad_generated.{qualname}"
    namespace["__file__"] = filename
    exec(_compile(text, filename), namespace)
    return namespace
