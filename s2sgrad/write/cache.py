"""Disk cache of generated code: a key (sha256 of what the text depends on) -> a JSON record (dict).

Location: ``$S2SGRAD_CACHE_DIR`` when set (an empty value turns the cache off), else a per-user
cache directory. Writers write a temporary file in the same directory and ``os.replace`` it, so
several processes may write at once and a reader never sees half an record. A record that does not
parse or does not carry its own key is ignored (a miss), and the next write replaces it. Failing to
read or write the cache never fails the caller. Imports only the standard library.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from typing import Optional

FORMAT = 1
ENV_VAR = "S2SGRAD_CACHE_DIR"


def default_dir() -> Optional[str]:
    """``$S2SGRAD_CACHE_DIR``, else the platform's per-user cache directory; None when disabled."""
    configured = os.environ.get(ENV_VAR)
    if configured is not None:
        return configured or None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "s2sgrad", "Cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/s2sgrad")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "s2sgrad")


def make_key(*parts: str) -> str:
    """The sha256 of ``parts`` (length-prefixed, so ``("ab", "c")`` and ``("a", "bc")`` differ)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def record_path(directory: str, key: str) -> str:
    return os.path.join(directory, key[:2], key[2:] + ".json")


def get(key: str, directory: Optional[str] = None) -> Optional[dict]:
    """The record stored under ``key``, or None (missing, unreadable, corrupt, or cache disabled)."""
    directory = default_dir() if directory is None else directory
    if not directory:
        return None
    try:
        with open(record_path(directory, key), encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key:
        return None
    return record


def put(key: str, record: dict, directory: Optional[str] = None) -> bool:
    """Store ``record`` (JSON-serializable) under ``key``; True when it was written."""
    directory = default_dir() if directory is None else directory
    if not directory:
        return False
    path = record_path(directory, key)
    data = json.dumps({**record, "format": FORMAT, "key": key}, sort_keys=True)
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=os.path.dirname(path))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
