"""Test cases for the rules of s2sgrad's runtime helpers (s2sgrad/rules/helpers/), one module per
banner, collected by tests/rules/test_rules.py: each case is a small function that calls a helper as
generated code would (``s2s.<helper>(...)``), checked in reverse mode against central differences
and in forward mode along a random tangent (autograd does not know the helpers)."""

import importlib

import numpy as np

BANNERS = ("batching", "broadcasting", "complex", "containers", "contract", "custom", "elementwise", "indexing", "inplace",
           "jacobians", "linalg", "products", "reductions", "rows", "scans", "shapes", "sorting", "fft",
           "special", "scipy_calls", "stats", "sums")

RNG = np.random.default_rng(4321)


def uniform(shape, lo=-0.9, hi=0.9):
    """A deterministic random array (a Python float for shape ``None``)."""
    if shape is None:
        return float(RNG.uniform(lo, hi))
    return RNG.uniform(lo, hi, size=shape)


W = uniform((3, 4), -1.0, 1.0)  # fixed weights: the outputs below are non-trivial scalars
V3 = uniform((3,), -1.0, 1.0)
V4 = uniform((4,), -1.0, 1.0)


def all_cases() -> list:
    """``(rules, fn, args, argnums, rtol)`` of every banner's ``CASES``."""
    out = []
    for banner in BANNERS:
        out.extend(importlib.import_module(f"helper_rule_cases.{banner}").CASES)
    return out
