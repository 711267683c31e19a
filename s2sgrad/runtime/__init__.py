"""The few helpers generated gradients call. Numpy only: importing this never imports libcst or black.

Generated code reads ``s2s.<helper>`` (``from s2sgrad import runtime as s2s``); each helper is a
plain function of arrays, defined in the module for its kind and re-exported here:

- broadcasting: unbroadcast, broadcast, like, check_scalar
- containers: zeros_like and the adjoints of lists and dicts (add, Parts, list_zeros, ...), setitem
  and the adjoint of the value it writes (setitem_value_vjp)
- sums: axis_sum, axis_mean (numpy's sum and mean over axes, as a product with ones where that is the faster)
- reductions: sums, means, variances, extrema, products, averages, nan-reductions, logsumexp
- scans: cumsum, cumprod, nancumsum, diff
- indexing: x[index], stack_rows (rows_shape, size), take, take_along_axis, sort, diag, diagonal, pad
- inplace: index writes and their adjoints in place where generated code owns the array (setitem_into,
  getitem_add, owned_array) and the shape template a forward sweep records (template)
- shapes: concatenations, stacks, splits, transpose, tile, repeat, rollaxis, linspace
- jacobians: a generated Jacobian function's unit tangents and blocks (basis, columns_block,
  rows_block, output_shapes, outputs_outermost) and their transposes
- products: matmul, dot, inner, tensordot, kron, and a loop's sums of their contributions
- rows: a loop's per-step products, computed before it (rows_matmul, rows_rmatmul, rows_dot, rows_rdot)
- fft: the Fourier transforms' adjoints (fft_vjp) and the transforms by name (fft_apply)
- linalg: solve, cholesky, eigvalsh, svdvals, pinv, matrix_power, norms, trace
- elementwise: balanced_eq, safe_power_base, safe_log_base, inside, log_vjp, sinc_slope, select
- special: polygamma, multipolygamma, iv, ive, jv, yv (scipy.special's, imported when first called)
- scipy_calls: scipy's functions that derivatives call (signal_convolve, sylvester, solve_triangular) and a
  convolution mode's window of the full result (signal_window, signal_embed)
- stats: the parts of scipy.stats' dirichlet and multivariate_normal densities (simplex_full, mvn_deviations, ...)
- custom: custom_result
- contexts: enter_context, entered, exit_context (a `with` block's manager), check_class
- sorting: sorted_jvp, sorted_vjp (Python's sorted of numbers)
- complex: match_complex, abs_slope, angle_slope (and their adjoints)
- contract: einsum_vjp, einsum_vjps
- batching: batched tangents (a Hessian's columns at once): lead, columns, batch_matmul, ...

A helper's ``__module__`` is its own module (``s2sgrad.runtime.reductions``); generated code names
it ``s2sgrad.runtime.<name>``, which is how the lowering resolves it (lower/normalize.py).
"""

from __future__ import annotations

from . import (batching, broadcasting, containers, contexts, contract, custom, elementwise, fft, indexing,
               inplace, jacobians, linalg, products, reductions, rows, scans, scipy_calls, shapes, sorting, special, stats,
               sums)
from .batching import *  # noqa: F401,F403
from .broadcasting import *  # noqa: F401,F403
from .complex import *  # noqa: F401,F403
from .containers import *  # noqa: F401,F403
from .contexts import *  # noqa: F401,F403
from .contract import *  # noqa: F401,F403
from .custom import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .inplace import *  # noqa: F401,F403
from .jacobians import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .rows import *  # noqa: F401,F403
from .scans import *  # noqa: F401,F403
from .scipy_calls import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .stats import *  # noqa: F401,F403
from .sums import *  # noqa: F401,F403

# The helpers that runtime.py itself defined before the split, and the einsum helpers; the
# complex helpers (then runtime_complex.py, re-exported by name) are not listed.
__all__ = sorted(batching.__all__ + broadcasting.__all__ + containers.__all__ + contexts.__all__ + contract.__all__
                 + custom.__all__ + elementwise.__all__ + fft.__all__ + indexing.__all__ + inplace.__all__ + jacobians.__all__
                 + linalg.__all__
                 + products.__all__ + reductions.__all__ + rows.__all__ + scans.__all__ + shapes.__all__
                 + scipy_calls.__all__ + sorting.__all__ + special.__all__ + stats.__all__ + sums.__all__)
