"""The default derivative table, built once and frozen: elementwise, reductions, shapes, linalg,
fft (np.fft), special (scipy.special), stats (scipy.stats), containers (lists, index writes), builtins (Python's max, min, .item()), writes (functions that write into
an argument), helpers (the rules
of s2sgrad's own runtime helpers, for differentiating generated code again), nondiff, and
advice for calls that have no rule (linalg, transforms: s2sgrad's own called inside code)."""

from . import builtins, containers, elementwise, fft, helpers, linalg, reductions, shapes, special, stats, transforms
from .nondiff import NONDIFF
from .writes import WRITES
from .table import Rule, RuleTable, alias, build_table, defvjp

DEFAULT_TABLE = build_table(
    (elementwise.RULES, reductions.RULES, shapes.RULES, linalg.RULES, fft.RULES, special.RULES, stats.RULES,
     containers.RULES, builtins.RULES, helpers.RULES),
    NONDIFF | frozenset(helpers.NONDIFF),
    {**linalg.INSTEAD, **transforms.INSTEAD, **builtins.INSTEAD},
    WRITES,
)

__all__ = ["DEFAULT_TABLE", "Rule", "RuleTable", "alias", "build_table", "defvjp"]
