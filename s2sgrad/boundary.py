"""The public API's boundary: a refusal leaves s2sgrad showing only the user's frames.

A TransformError (or UsageError) says where the problem is in the user's code; the dozen frames of
s2sgrad's pipeline above it would only bury that. ``api_boundary`` wraps each public function
and, when such an error leaves it, removes s2sgrad's own frames from its traceback (as JAX filters
its tracebacks), and drops the internal exception it was raised from. Set the environment
variable ``S2SGRAD_TRACEBACK=full`` to keep everything (when debugging s2sgrad itself). Before
Python 3.11 a re-raise always adds the raising frame, so one line of s2sgrad's (this boundary's)
stays.
"""

from __future__ import annotations

import functools
import os
import sys
import types
from typing import Any, Callable, Optional

from .errors import TransformError, UsageError
from .read.capture import internal_file

TRACEBACK_VARIABLE = "S2SGRAD_TRACEBACK"


def full_tracebacks() -> bool:
    """True when the user asked for s2sgrad's own frames (``S2SGRAD_TRACEBACK=full``; any value
    but an empty one or ``0`` does, as for the CLI's internal errors)."""
    return os.environ.get(TRACEBACK_VARIABLE, "").strip() not in ("", "0")


def user_frames(tb: Optional[types.TracebackType]) -> Optional[types.TracebackType]:
    """``tb`` without the entries of s2sgrad's own files, in the same order."""
    kept = []
    while tb is not None:
        if not internal_file(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def api_boundary(fun: Callable, ready: Optional[Callable] = None) -> Callable:
    """Wrap a public function so that its refusals show the user's frames only. ``ready(args)``,
    where given: what a call passing only ``args`` by position returns when that is known at a
    glance (a differentiated function's code made for these arguments' types and shapes), else
    None and ``fun`` runs; in the same frame, so the common call pays for one frame here."""

    @functools.wraps(fun)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            if ready is not None and not kwargs:
                result = ready(args)
                if result is not None:
                    return result
            return fun(*args, **kwargs)
        except (TransformError, UsageError) as err:
            if _user_facing(err):
                raise err.with_traceback(err.__traceback__)  # (shows this one frame)
            raise  # a bare raise (3.11+) adds no entry for this frame

    return entry


def _user_facing(err: BaseException) -> bool:
    """``err`` without s2sgrad's frames and its internal cause (unless full_tracebacks); True
    where the caller must raise it with that traceback (before Python 3.11 a bare raise would
    restore the caught one)."""
    if full_tracebacks():
        return False
    err.with_traceback(user_frames(err.__traceback__))
    if err.__cause__ is not None or err.__context__ is not None:
        err.__cause__ = None  # an internal exception: its text is in the message
        err.__suppress_context__ = True
    return sys.version_info < (3, 11)
