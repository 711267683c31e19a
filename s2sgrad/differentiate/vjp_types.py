"""The values reverse mode builds and hands on: VjpFunction (one generated forward/backward pair,
for codegen), CalleeCall (what a caller needs of a transformed user function it calls) and
Collecting (what one backward loop collects per iteration for one pass after it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..lower.ir import Prim, Stmt


@dataclass(frozen=True)
class CalleeCall:
    """What the caller needs to know about a transformed user function it calls."""

    fwd_name: str
    bwd_name: str
    params: tuple  # parameter names, in order
    kwonly: tuple  # names of keyword-only parameters
    returns_adjoint: tuple  # per parameter: True when the backward returns an adjoint (not None)


@dataclass(frozen=True)
class VjpFunction:
    """One generated ``<name>_fwd`` / ``<name>_bwd`` pair."""

    source_name: str
    fwd_name: str
    bwd_name: str
    params_code: str
    forward: tuple  # program items
    result_code: str
    residuals: tuple  # names the forward hands to the backward
    residuals_param: str
    seed: str
    backward: tuple  # program items
    returns: tuple  # code of each returned adjoint
    wrt: tuple
    top_level: bool
    residual_targets: tuple = ()  # the backward's names for the residuals, when not the same
    releases_residuals: bool = False  # the backward frees residuals early: drop the tuple first


@dataclass
class StepSum:
    """The lists a backward loop fills for one accumulator (a product's loop-invariant factor),
    and the template of its rule (``Rule.step_sums``) that adds them up after the loop."""

    template: str
    param: str  # the accumulator's parameter in the rule
    upstreams: str  # the list of upstream adjoints
    others: str  # the list of the other factor's values


@dataclass
class Collecting:
    """What one backward loop collects per iteration, for one pass after it: a product's
    contributions to an accumulator (``sums``: var -> StepSum, set by the first one collected)
    and the adjoints of rows read at the loop ``counter`` (``rows``: var -> list)."""

    batchable: frozenset  # accumulators (only ever added to in the loop) whose contributions may wait
    rows: dict
    counter: str  # the name counting iterations from 0 ("" when the loop has none)
    statements: frozenset  # ids of the loop body's top-level statements (run every iteration)
    defined: frozenset = frozenset()  # names the loop body defines
    sums: dict = field(default_factory=dict)
    row_reader: dict = field(default_factory=dict)  # var -> id of the statement whose rows collect


CalleeLookup = Callable[[Prim, Stmt], Optional[CalleeCall]]
