"""Functions whose derivative is zero (or that carry no derivative): a plain list, no rules.

Calling one of these on a differentiated value gives no gradient through it and no error.
"""

from types import MappingProxyType

NONDIFF = frozenset(
    {
        "s2sgrad.stop_gradient",
        "s2sgrad.custom.stop_gradient",
        "builtins.bool",
        "builtins.int",
        "builtins.isinstance",
        "builtins.len",
        "builtins.print",
        "builtins.range",
        "builtins.round",
        "builtins.slice",  # an index: its bounds carry no derivative
        "math.ceil",
        "math.floor",
        "math.isfinite",
        "math.isinf",
        "math.isnan",
        "ndarray.all",
        "ndarray.any",
        "ndarray.argmax",
        "ndarray.argmin",
        "ndarray.argpartition",
        "ndarray.argsort",
        "ndarray.dtype",
        "ndarray.ndim",
        "ndarray.nonzero",
        "ndarray.round",
        "ndarray.searchsorted",
        "ndarray.shape",
        "ndarray.size",
        "nondiff",
        "numpy.all",
        "numpy.allclose",
        "numpy.any",
        "numpy.arange",
        "numpy.argmax",
        "numpy.argmin",
        "numpy.argpartition",
        "numpy.argsort",
        "numpy.argwhere",
        "numpy.around",
        "numpy.array_equal",
        "numpy.array_equiv",
        "numpy.byte",
        "numpy.ceil",
        "numpy.count_nonzero",
        "numpy.diag_indices",
        "numpy.dtype",
        "numpy.empty",
        "numpy.empty_like",
        "numpy.equal",
        "numpy.eye",
        "numpy.fix",
        "numpy.flatnonzero",
        "numpy.float32",
        "numpy.float64",
        "numpy.floor",
        "numpy.floor_divide",
        "numpy.full_like",
        "numpy.greater",
        "numpy.greater_equal",
        "numpy.heaviside",
        "numpy.identity",
        "numpy.indices",
        "numpy.int16",
        "numpy.int32",
        "numpy.int64",
        "numpy.int8",
        "numpy.int_",
        "numpy.intc",
        "numpy.integer",
        "numpy.intp",
        "numpy.isclose",
        "numpy.iscomplex",
        "numpy.iscomplexobj",
        "numpy.isfinite",
        "numpy.isinf",
        "numpy.isnan",
        "numpy.isneginf",
        "numpy.isposinf",
        "numpy.isreal",
        "numpy.isscalar",
        "numpy.issubdtype",
        "numpy.less",
        "numpy.less_equal",
        "numpy.logical_and",
        "numpy.logical_not",
        "numpy.logical_or",
        "numpy.logical_xor",
        "numpy.logspace",
        "numpy.long",
        "numpy.meshgrid",
        "numpy.ndim",
        "numpy.nonzero",
        "numpy.not_equal",
        "numpy.ones",
        "numpy.ones_like",
        "numpy.random.choice",
        "numpy.random.default_rng",
        "numpy.random.normal",
        "numpy.random.permutation",
        "numpy.random.rand",
        "numpy.random.randint",
        "numpy.random.randn",
        "numpy.random.seed",
        "numpy.random.standard_normal",
        "numpy.random.uniform",
        "numpy.ravel_multi_index",
        "numpy.result_type",
        "numpy.rint",
        "numpy.round",
        "numpy.searchsorted",
        "numpy.shape",
        "numpy.short",
        "numpy.sign",
        "numpy.signbit",
        "numpy.size",
        "numpy.tri",
        "numpy.tril_indices",
        "numpy.triu_indices",
        "numpy.trunc",
        "numpy.unravel_index",
        "numpy.zeros",
        "numpy.zeros_like",
        "operator.eq",
        "operator.floordiv",
        "operator.ge",
        "operator.gt",
        "operator.le",
        "operator.lt",
        "operator.ne",
        "operator.not_",
        "scipy.special.gammasgn",
    }
)

# Namespaces whose every function carries no derivative (random draws).
NONDIFF_NAMESPACES = ("numpy.random.",)

# What the shape analysis (analyze/shapes.py) may take for granted:
# functions whose result is a Python number whatever they are given,
SCALAR_VALUED = frozenset({"builtins.float", "builtins.len", "builtins.int"})
SCALAR_NAMESPACES = ("math.",)
# functions without a derivative whose result has the broadcast shape of their operands,
BROADCASTING = frozenset({"operator.floordiv"})
# functions whose result has the shape of their first argument (given no ``shape`` argument:
# at most four positional ones, no ``shape=``): a copy, ``zeros_like``,
SHAPE_KEEPING = frozenset({"ndarray.copy", "numpy.copy", "numpy.zeros_like", "numpy.ones_like",
                           "numpy.empty_like", "s2sgrad.runtime.promoted", "s2sgrad.runtime.complex_conj"})
# the functions making an array of the shape their first argument gives (``np.zeros(x.shape)``),
SHAPE_MAKING = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full"})
# the functions making an ``(N, M)`` array from ``(N, M=None)``, M left out: ``(N, N)``,
SQUARE_MAKING = frozenset({"numpy.eye", "numpy.identity", "numpy.tri"})
# the function making an ``(N, M)`` array of ones at and below a diagonal (``np.tri(N, M, k)``),
LOWER_TRIANGLE = "numpy.tri"
# the index writes ``(x, index, value)``, whose result has ``x``'s shape where ``x`` is an array
# (a list's slice given a sequence of another length changes its length),
INDEX_WRITES = frozenset({"s2s.setitem", "s2s.setitem_into"})
# the cumulative function of a binary operation's algebra (Rule.algebra): a loop carrying
# ``acc = acc * row`` over the rows of an array computes the rows of np.cumprod (lower/scans.py),
SCANS = MappingProxyType({"mul": "numpy.cumprod", "add": "numpy.cumsum"})
# the function making an array of an algebra's identity, where the operation with it gives each
# value back bit for bit (1.0 * v; not 0.0 + v, which makes -0.0 0.0): a scan starting from it
# needs no operation with its start (lower/scans.py),
EXACT_IDENTITIES = MappingProxyType({"mul": "numpy.ones"})
# the function giving a matrix's inverse in generated code, and the adjoints (runtime helpers)
# that read the inverse of one of their arguments: helper -> (that argument's position, the
# helper taking the inverse given as one more argument): a backward sweep made for a call's
# shapes computes a matrix's inverse once where several of them read it (differentiate/inverses.py),
INVERSE = "np.linalg.inv"
INVERSE_READERS = MappingProxyType({"s2s.solve_vjps": (2, "s2s.solve_vjps_by_inverse"),
                                    "s2s.cholesky_vjp": (1, "s2s.cholesky_vjp_by_inverse")})
# the functions whose result, given an array alone, is that array with its axes reversed (a
# matrix's transpose), and the matrix transpose of a stack in generated code (its two last axes),
REVERSING_AXES = frozenset({"ndarray.T", "numpy.transpose", "ndarray.transpose"})
MATRIX_TRANSPOSE = "np.swapaxes"
# the functions that stack a list's items on a new first axis, given the list alone,
STACKING = frozenset({"numpy.stack", "numpy.array"})
# and the module constants that are numbers.
SCALAR_CONSTANTS = frozenset(f"{module}.{name}" for module in ("math", "np", "numpy")
                             for name in ("pi", "e", "tau", "inf", "nan")) - {"np.tau", "numpy.tau"}
# The namespaces of the functions that are numpy's, Python's or s2sgrad's own, never the user's.
LIBRARY_NAMESPACES = ("ndarray.", "operator.", "numpy.", "math.", "builtins.", "s2s.")
