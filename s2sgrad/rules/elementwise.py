"""Elementwise rules: each contribution has the output's broadcast shape and is summed back to its operand."""

from .table import alias, defvjp

_UNARY = (
    # ----- trigonometric ----------------------------------------------------------------------
    ("sin", "g * np.cos(x)"),
    ("cos", "-g * np.sin(x)"),
    ("tan", "g / np.cos(x) ** 2"),
    ("arcsin", "g / np.sqrt(1.0 - x * x)"),
    ("arccos", "-g / np.sqrt(1.0 - x * x)"),
    ("arctan", "g / (1.0 + x * x)"),
    ("deg2rad", "g * (np.pi / 180.0)"),
    ("rad2deg", "g * (180.0 / np.pi)"),
    # ----- hyperbolic -------------------------------------------------------------------------
    ("sinh", "g * np.cosh(x)"),
    ("cosh", "g * np.sinh(x)"),
    ("tanh", "g * (1.0 - ans * ans)"),
    ("arcsinh", "g / np.sqrt(x * x + 1.0)"),
    ("arccosh", "g / np.sqrt(x * x - 1.0)"),
    ("arctanh", "g / (1.0 - x * x)"),
    # ----- exponential and logarithmic --------------------------------------------------------
    ("exp", "g * ans"),
    ("exp2", "g * ans * np.log(2.0)"),
    ("expm1", "g * (ans + 1.0)"),
    ("log", "g / x"),
    ("log2", "g / (x * np.log(2.0))"),
    ("log10", "g / (x * np.log(10.0))"),
    ("log1p", "g / (1.0 + x)"),
    # ----- powers and signs -------------------------------------------------------------------
    ("sqrt", "g * 0.5 / ans"),
    ("cbrt", "g / (3.0 * ans * ans)"),
    ("square", "g * 2.0 * x"),
    ("reciprocal", "-g * ans * ans"),
    ("negative", "-g"),
    ("positive", "g"),
    ("sinc", "g * s2s.sinc_slope(x)"),
)

# ----- complex numbers ------------------------------------------------------------------------
# The convention is autograd's and JAX's (s2sgrad/runtime/complex.py): a holomorphic function's
# adjoint is g * f'(x) (the templates above, no conjugate). These functions are not holomorphic:
# each states its adjoint and its tangent (forward mode cannot derive it from the adjoint), and
# the ones with a real output read only the real part of its adjoint.
_COMPLEX = (
    defvjp("numpy.abs(x)", elementwise=True, x="np.real(g) * s2s.abs_slope(x)",
           jvps={"x": "np.real(t * s2s.abs_slope(x))"}),
    defvjp("numpy.conjugate(x)", methods=("conj", "conjugate"), elementwise=True, x="np.conj(g)",
           jvps={"x": "np.conj(t)"}),
    defvjp("numpy.real(val)", methods=("real",), elementwise=True, val="s2s.match_complex(val, np.real(g))",
           jvps={"val": "np.real(t)"}),
    defvjp("numpy.imag(val)", methods=("imag",), elementwise=True,
           val="s2s.match_complex(val, -1j * np.real(g))",
           jvps={"val": "np.imag(t)"}),
    # the identity, or np.real where every imaginary part is within tol of zero (its result real)
    defvjp("numpy.real_if_close(a, tol=100)", constant_in=("tol",), a="s2s.match_complex(a, g)",
           jvps={"a": "(t if np.iscomplexobj(ans) else np.real(t))"}),
    defvjp("numpy.angle(z, deg=False)", elementwise=True,
           z="s2s.match_complex(z, np.real(g) * s2s.angle_slope(z, deg))",
           jvps={"z": "np.real(t * s2s.angle_slope(z, deg))"}),
)

# the identities analyze/invariance.py's proof reads (exp, log), the steps of the logistic
# function spelled out that differentiate/compositions.py reads (exp, reciprocal), and the
# squares lower/sums_of_products.py reads (square; the power's "pow" with a literal 2)
_ALGEBRA = {"exp": "exp", "log": "log", "reciprocal": "reciprocal", "square": "square"}
# The adjoint of np.log(f(x)) in x, f'(x) / f(x) as one function where that is shorter than the
# chain's quotient (Rule.log_adjoint): log(cosh(x)) -> tanh(x), log(exp(x)) -> 1. Holomorphic,
# so complex x takes the same templates.
_LOG_ADJOINTS = {
    "exp": "g",
    "cosh": "g * np.tanh(x)",
    "sinh": "g / np.tanh(x)",
    "sin": "g / np.tan(x)",
    "cos": "-g * np.tan(x)",
    "sqrt": "g * 0.5 / x",
    "square": "g * 2.0 / x",
    "reciprocal": "-g / x",
}
_NUMPY_UNARY = tuple(defvjp(f"numpy.{name}(x)", elementwise=True, algebra=_ALGEBRA.get(name, ""),
                            log_adjoint=_LOG_ADJOINTS.get(name, ""), x=t)
                     for name, t in _UNARY) + _COMPLEX
_BY_NAME = {r.name: r for r in _NUMPY_UNARY}

_NUMPY_ALIASES = (
    alias("numpy.absolute", _BY_NAME["numpy.abs"]),
    alias("numpy.fabs", _BY_NAME["numpy.abs"]),
    alias("numpy.asin", _BY_NAME["numpy.arcsin"]),
    alias("numpy.acos", _BY_NAME["numpy.arccos"]),
    alias("numpy.atan", _BY_NAME["numpy.arctan"]),
    alias("numpy.asinh", _BY_NAME["numpy.arcsinh"]),
    alias("numpy.acosh", _BY_NAME["numpy.arccosh"]),
    alias("numpy.atanh", _BY_NAME["numpy.arctanh"]),
    alias("numpy.radians", _BY_NAME["numpy.deg2rad"]),
    alias("numpy.degrees", _BY_NAME["numpy.rad2deg"]),
    alias("numpy.conj", _BY_NAME["numpy.conjugate"]),
    alias("builtins.abs", _BY_NAME["numpy.abs"]),
    defvjp(
        "numpy.nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None)",
        elementwise=True,
        x="g * np.isfinite(x)",
    ),
)

# ----- binary ---------------------------------------------------------------------------------

_ADD = defvjp("numpy.add(x1, x2)", elementwise=True, algebra="add", x1="g", x2="g")
_SUB = defvjp("numpy.subtract(x1, x2)", elementwise=True, algebra="sub", x1="g", x2="-g")
_MUL = defvjp("numpy.multiply(x1, x2)", elementwise=True, algebra="mul", x1="g * x2",
               x2="g * x1")
_DIV = defvjp("numpy.divide(x1, x2)", elementwise=True, algebra="div", x1="g / x2",
               x2="-g / x2 * ans")
_POW = defvjp(
    "numpy.power(x1, x2)",
    elementwise=True,
    algebra="pow",
    x1="g * x2 * x1 ** s2s.safe_power_base(x2)",
    x2="s2s.exponent_slope(g, x1, ans)",
)
_MAX = defvjp(
    "numpy.maximum(x1, x2)",
    elementwise=True,
    x1="g * s2s.balanced_eq(x1, ans, x2)",
    x2="g * s2s.balanced_eq(x2, ans, x1)",
)
EXTREMUM = _MAX  # also Python's max and min of two numbers (rules/builtins.py)
_MOD = defvjp("numpy.remainder(x1, x2)", elementwise=True, x1="g", x2="-g * np.floor(x1 / x2)")
_ARCTAN2 = defvjp(
    "numpy.arctan2(x1, x2)",
    elementwise=True,
    x1="g * x2 / (x1 * x1 + x2 * x2)",
    x2="-g * x1 / (x1 * x1 + x2 * x2)",
)
_CLIP = defvjp(
    "numpy.clip(a, a_min=None, a_max=None)",
    elementwise=True,
    a="g * s2s.inside(a, a_min, a_max)",
    a_min="s2s.select(a < a_min, g)",
    a_max="s2s.select(a > a_max, g)",
)

BINARY = (
    _ADD,
    _SUB,
    _MUL,
    _DIV,
    _POW,
    _MAX,
    _MOD,
    alias("numpy.true_divide", _DIV),
    alias("numpy.pow", _POW),
    alias("numpy.minimum", _MAX),
    alias("numpy.fmax", _MAX),
    alias("numpy.fmin", _MAX),
    alias("numpy.mod", _MOD),
    defvjp(
        "numpy.logaddexp(x1, x2)",
        elementwise=True,
        x1="g * np.exp(x1 - ans)",
        x2="g * np.exp(x2 - ans)",
    ),
    defvjp(
        "numpy.logaddexp2(x1, x2)",
        elementwise=True,
        x1="g * 2.0 ** (x1 - ans)",
        x2="g * 2.0 ** (x2 - ans)",
    ),
    _ARCTAN2,
    alias("numpy.atan2", _ARCTAN2),
    alias("numpy.float_power", _POW),
    defvjp("numpy.fmod(x1, x2)", elementwise=True, x1="g", x2="-g * np.trunc(x1 / x2)"),
    defvjp("numpy.hypot(x1, x2)", elementwise=True, x1="g * x1 / ans", x2="g * x2 / ans"),
    defvjp(
        "numpy.where(condition, x=None, y=None)",
        elementwise=True,
        algebra="select",
        constant_in=("condition",),  # a choice: piecewise constant, whatever it is computed from
        x="s2s.select(condition, g)",
        y="s2s.select(condition, g, False)",
    ),
    _CLIP,
    alias("ndarray.clip", _CLIP, rename={"a": "self", "a_min": "min", "a_max": "max"}),
)

# ----- Python operators -----------------------------------------------------------------------

OPERATORS = (
    alias("operator.add", _ADD, rename={"x1": "a", "x2": "b"}),
    alias("operator.sub", _SUB, rename={"x1": "a", "x2": "b"}),
    alias("operator.mul", _MUL, rename={"x1": "a", "x2": "b"}),
    alias("operator.truediv", _DIV, rename={"x1": "a", "x2": "b"}),
    alias("operator.pow", _POW, rename={"x1": "a", "x2": "b"}),
    alias("operator.mod", _MOD, rename={"x1": "a", "x2": "b"}),
    defvjp("operator.neg(a)", elementwise=True, algebra="neg", a="-g"),
    defvjp("operator.pos(a)", elementwise=True, a="g"),
    defvjp("copy(a)", linear=("a",), a="g"),
    defvjp("builtins.float(x)", linear=("x",), x="g"),
)

# ----- math module (Python floats) ------------------------------------------------------------

_MATH = (
    ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("asin", "arcsin"), ("acos", "arccos"),
    ("atan", "arctan"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"), ("asinh", "arcsinh"),
    ("acosh", "arccosh"), ("atanh", "arctanh"), ("exp", "exp"), ("expm1", "expm1"),
    ("log2", "log2"), ("log10", "log10"), ("log1p", "log1p"), ("sqrt", "sqrt"),
    ("fabs", "abs"), ("exp2", "exp2"), ("cbrt", "cbrt"), ("radians", "deg2rad"),
    ("degrees", "rad2deg"),
)

# Where the derivative is a function math has and is finite wherever the function is, it is
# computed with math as the function is: a Python float stays one (``math.cos`` costs a
# twentieth of ``np.cos`` on a float). The others keep numpy's templates (``np.sqrt`` of 0 in a
# denominator gives inf, where a float division would raise).
_MATH_OWN = {"sin": "g * math.cos(x)", "cos": "-g * math.sin(x)", "tan": "g / math.cos(x) ** 2"}

MATH = tuple(defvjp(f"math.{py}(x)", elementwise=True, x=_MATH_OWN[py]) if py in _MATH_OWN
             else alias(f"math.{py}", _BY_NAME[f"numpy.{np_name}"]) for py, np_name in _MATH) + (
    defvjp("math.log(x, base=None)", elementwise=True, x="s2s.log_vjp(g, x, base)"),
    defvjp("math.erf(x)", elementwise=True, x="g * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)"),
    defvjp("math.erfc(x)", elementwise=True, x="-g * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)"),
    defvjp("math.fmod(x, y)", elementwise=True, x="g", y="-g * np.trunc(x / y)"),
    defvjp("math.pow(x, y)", elementwise=True, x="g * y * x ** s2s.safe_power_base(y)",
           y="s2s.exponent_slope(g, x, ans)"),
    defvjp("math.hypot(x, y)", elementwise=True, x="g * x / ans", y="g * y / ans"),
    defvjp("math.atan2(y, x)", elementwise=True, y="g * x / (x * x + y * y)", x="-g * y / (x * x + y * y)"),
)

# numpy's function -> math's, the same function of one real number (math.exp2 and math.cbrt are
# Python 3.11's; math.fabs is abs): forward mode made for float arguments calls math's, a
# twentieth of the time on a float; where math raises (outside its domain, an overflow, a complex
# number), the call falls back to the sweeps, which run numpy's (calls.py).
MATH_TWINS = {f"numpy.{np_name}": f"math.{py}" for py, np_name in _MATH
              if py not in ("exp2", "cbrt", "fabs")} | {"numpy.log": "math.log"}

RULES = _NUMPY_UNARY + _NUMPY_ALIASES + BINARY + OPERATORS + MATH
