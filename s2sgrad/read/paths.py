"""How a file is named in a message: relative to the working directory below it, else absolute."""

from __future__ import annotations

import os


def display_path(filename: str) -> str:
    """A path relative to the working directory when it lies below it, else the absolute path
    (so that an error location is one a terminal or an editor can open)."""
    if filename.startswith("<"):
        return filename
    absolute = os.path.abspath(filename)
    try:
        rel = os.path.relpath(absolute)
    except ValueError:  # another drive (Windows)
        return absolute
    if rel == ".." or rel.startswith(".." + os.sep):
        return absolute
    return rel.replace(os.sep, "/")
