"""Dtype analysis: CoreFunction -> whether complex numbers may be in flight in it.

The backward sweep adds a contribution into an adjoint array it made (``x_bar += ...``) only
where the sum keeps that array's dtype; where the function computes with complex numbers, a real
value's adjoint may meet complex contributions (made real at the end, where a gradient takes its
argument's dtype), so there it adds out of place.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..lower.ir import CoreFunction, flatten
from ..rules.table import RuleTable

_COMPLEX_NAMES = ("complex", "complex64", "complex128", "complex256", "complex_", "csingle",
                  "cdouble", "clongdouble")
_COMPLEX = m.Imaginary() | m.Name(m.MatchIfTrue(lambda v: v in _COMPLEX_NAMES)) | \
    m.SimpleString(m.MatchIfTrue(lambda v: v.strip("'\"").startswith(("complex", "c8", "c16"))))


def may_hold_complex(fn: CoreFunction, table: RuleTable) -> bool:
    """Whether ``fn`` may compute with complex numbers given real arguments: an imaginary
    literal or a complex dtype written in it, or a function whose rule makes complex adjoints
    of real operands (RuleTable.complex_valued). A complex argument is not seen here."""
    for stmt in flatten(fn.body):
        if stmt.prim.op in table.complex_valued or m.findall(stmt.expr, _COMPLEX):
            return True
    return False
