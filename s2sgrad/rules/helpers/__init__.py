"""Rules of the runtime helpers generated code calls, by the banner of the module that defines them
(``s2sgrad/runtime/<banner>.py`` -> ``rules/helpers/<banner>.py``), so that s2sgrad reads what it
writes: forward mode over generated reverse-mode code (Hessian-vector products, ``jvp`` of
``grad``), reverse mode over generated forward-mode and reverse-mode code (``grad`` of ``grad``).

Generated code names the helpers through ``from s2sgrad import runtime as s2s``, so their qualified
names are ``s2sgrad.runtime.<name>``. A helper's parameters are renamed where they would collide
with a template's ``g`` (the upstream adjoint) or ``ans``; generated code passes them by position.
Most helpers are adjoints: linear in the adjoint they take (``linear=``), and read some primal
values only for their shapes or for a piecewise choice (``constant_in=``).
"""

from . import (batching, broadcasting, complex, containers, contexts, contract, custom, elementwise, fft,
               indexing, inplace, jacobians, linalg, products, reductions, rows, scans, scipy_calls, shapes, sorting,
               special, stats, sums)

MODULES = (batching, broadcasting, complex, containers, contexts, contract, custom, elementwise, fft, indexing,
           inplace, jacobians, linalg, products, reductions, rows, scans, scipy_calls, shapes, sorting, special, stats,
           sums)

RULES = tuple(rule for module in MODULES for rule in module.RULES)

# Helpers whose value is piecewise constant (masks, zeros): no derivative.
NONDIFF = tuple(name for module in MODULES for name in getattr(module, "NONDIFF", ()))

# Helpers with neither a rule nor a zero derivative, and why (tests/rules/test_rule_table.py holds every
# helper of runtime.__all__ to one of the three).
NO_RULE = {name: why for module in MODULES for name, why in getattr(module, "NO_RULE", {}).items()}
