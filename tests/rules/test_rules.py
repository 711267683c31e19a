"""One numeric test (or several) for every rule in the default table.

Each case is a small numpy function that reaches the rule, differentiated with s2sgrad and compared
with central finite differences and, where autograd can run the same function, with autograd.
``test_every_rule_is_tested`` fails when a rule has no case; ``test_case_reaches_its_rules``
checks (by lowering the function) that each case really calls the rules it claims to test.
"""

from __future__ import annotations

import inspect
import math
import types
from dataclasses import dataclass

import autograd
import libcst as cst
import autograd.numpy as anp
import autograd.scipy.signal as asignal
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
from scipy import linalg as scipy_linalg
from scipy import signal, special, stats

import s2sgrad
from s2sgrad import runtime as s2s
from s2sgrad.lower.ir import flatten
from s2sgrad.checks import numerical_grad
from s2sgrad.errors import UsageError
from s2sgrad.pipeline import lower
from s2sgrad.read.capture import from_function
from s2sgrad.read.parse import ParsedFunction, parse_module
from s2sgrad.rules import DEFAULT_TABLE

from helper_rule_cases import all_cases

# np.row_stack (still a rule) is deprecated in numpy 2.
# np.cross of 2-vectors too (still a case of its rule).
pytestmark = [pytest.mark.filterwarnings("ignore:`row_stack` alias is deprecated:DeprecationWarning"),
              pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")]

RNG = np.random.default_rng(1234)


def uniform(shape, lo=-0.9, hi=0.9):
    """A deterministic random array (a Python float for shape ``None``)."""
    if shape is None:
        return float(RNG.uniform(lo, hi))
    return RNG.uniform(lo, hi, size=shape)


W = uniform((3, 4), -1.0, 1.0)  # fixed weights: the outputs below are non-trivial scalars
V3 = uniform((3,), -1.0, 1.0)
V4 = uniform((4,), -1.0, 1.0)
W44 = uniform((4, 4), -1.0, 1.0)
W234 = uniform((2, 3, 4), -1.0, 1.0)
MASK = uniform((3, 4)) > 0.0


@dataclass(frozen=True)
class Case:
    rules: tuple  # the rule names this case exercises
    fn: object
    args: tuple
    argnums: tuple
    oracle: str  # "autograd", "math" (autograd with math.* mapped to autograd.numpy) or "none"
    rtol: float

    @property
    def id(self) -> str:
        shapes = "_".join("f" if isinstance(a, float) else "x".join(map(str, np.shape(a)))
                          for a in self.args)
        return f"{self.fn.__name__}[{shapes}]"


CASES: list = []


def add(rules, fn, *args, argnums=None, oracle="autograd", rtol=1e-5):
    rules = (rules,) if isinstance(rules, str) else tuple(rules)
    if argnums is None:
        argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    CASES.append(Case(rules, fn, tuple(args), tuple(argnums), oracle, rtol))


# ===== elementwise, unary ======================================================================

def u_sin(x): return np.sum(np.sin(x) * W)
def u_cos(x): return np.sum(np.cos(x) * W)
def u_tan(x): return np.sum(np.tan(x) * W)
def u_arcsin(x): return np.sum(np.arcsin(x) * W)
def u_arccos(x): return np.sum(np.arccos(x) * W)
def u_arctan(x): return np.sum(np.arctan(x) * W)
def u_asin(x): return np.sum(np.asin(x) * W)
def u_acos(x): return np.sum(np.acos(x) * W)
def u_atan(x): return np.sum(np.atan(x) * W)
def u_deg2rad(x): return np.sum(np.deg2rad(x) * W)
def u_rad2deg(x): return np.sum(np.rad2deg(x) * W)
def u_radians(x): return np.sum(np.radians(x) * W)
def u_degrees(x): return np.sum(np.degrees(x) * W)
def u_sinh(x): return np.sum(np.sinh(x) * W)
def u_cosh(x): return np.sum(np.cosh(x) * W)
def u_tanh(x): return np.sum(np.tanh(x) * W)
def u_arcsinh(x): return np.sum(np.arcsinh(x) * W)
def u_arccosh(x): return np.sum(np.arccosh(x) * W)
def u_arctanh(x): return np.sum(np.arctanh(x) * W)
def u_asinh(x): return np.sum(np.asinh(x) * W)
def u_acosh(x): return np.sum(np.acosh(x) * W)
def u_atanh(x): return np.sum(np.atanh(x) * W)
def u_exp(x): return np.sum(np.exp(x) * W)
def u_exp2(x): return np.sum(np.exp2(x) * W)
def u_expm1(x): return np.sum(np.expm1(x) * W)
def u_log(x): return np.sum(np.log(x) * W)
def u_log2(x): return np.sum(np.log2(x) * W)
def u_log10(x): return np.sum(np.log10(x) * W)
def u_log1p(x): return np.sum(np.log1p(x) * W)
def u_sqrt(x): return np.sum(np.sqrt(x) * W)
def u_cbrt(x): return np.sum(np.cbrt(x) * W)
def u_square(x): return np.sum(np.square(x) * W)
def u_reciprocal(x): return np.sum(np.reciprocal(x) * W)
def u_negative(x): return np.sum(np.negative(x) * W)
def u_positive(x): return np.sum(np.positive(x) * W)
def u_abs(x): return np.sum(np.abs(x) * W)
def u_absolute(x): return np.sum(np.absolute(x) * W)
def u_fabs(x): return np.sum(np.fabs(x) * W)
def u_conjugate(x): return np.sum(np.conjugate(x) * W)
def u_conj(x): return np.sum(np.conj(x) * W)
def u_builtin_abs(x): return np.sum(abs(x) * W)


POSITIVE = (0.5, 2.0)
ABOVE_ONE = (1.5, 3.0)
UNARY = [
    ("numpy.sin", u_sin, None), ("numpy.cos", u_cos, None), ("numpy.tan", u_tan, None),
    ("numpy.arcsin", u_arcsin, None), ("numpy.arccos", u_arccos, None),
    ("numpy.arctan", u_arctan, None), ("numpy.asin", u_asin, None),
    ("numpy.acos", u_acos, None), ("numpy.atan", u_atan, None),
    ("numpy.deg2rad", u_deg2rad, None), ("numpy.rad2deg", u_rad2deg, None),
    ("numpy.radians", u_radians, None), ("numpy.degrees", u_degrees, None),
    ("numpy.sinh", u_sinh, None), ("numpy.cosh", u_cosh, None), ("numpy.tanh", u_tanh, None),
    ("numpy.arcsinh", u_arcsinh, None), ("numpy.arccosh", u_arccosh, ABOVE_ONE),
    ("numpy.arctanh", u_arctanh, None), ("numpy.asinh", u_asinh, None),
    ("numpy.acosh", u_acosh, ABOVE_ONE), ("numpy.atanh", u_atanh, None),
    ("numpy.exp", u_exp, None), ("numpy.exp2", u_exp2, None), ("numpy.expm1", u_expm1, None),
    ("numpy.log", u_log, POSITIVE), ("numpy.log2", u_log2, POSITIVE),
    ("numpy.log10", u_log10, POSITIVE), ("numpy.log1p", u_log1p, None),
    ("numpy.sqrt", u_sqrt, POSITIVE), ("numpy.cbrt", u_cbrt, POSITIVE),
    ("numpy.square", u_square, None), ("numpy.reciprocal", u_reciprocal, POSITIVE),
    ("numpy.negative", u_negative, None), ("numpy.positive", u_positive, None),
    ("numpy.abs", u_abs, None), ("numpy.absolute", u_absolute, None),
    ("numpy.fabs", u_fabs, None), ("numpy.conjugate", u_conjugate, None),
    ("numpy.conj", u_conj, None), ("builtins.abs", u_builtin_abs, None),
]
# autograd has no rule for these (or, for np.positive, returns a non-differentiable copy):
NO_AUTOGRAD_UNARY = {"numpy.cbrt", "numpy.positive"}

for _rule, _fn, _domain in UNARY:
    _lo, _hi = _domain or (-0.9, 0.9)
    _oracle = "none" if _rule in NO_AUTOGRAD_UNARY else "autograd"
    for _shape in ((3, 4), (4,), None):
        add(_rule, _fn, uniform(_shape, _lo, _hi), oracle=_oracle)


# ===== elementwise, binary =====================================================================

def b_add(x, y): return np.sum(np.add(x, y) * W)
def b_subtract(x, y): return np.sum(np.subtract(x, y) * W)
def b_multiply(x, y): return np.sum(np.multiply(x, y) * W)
def b_divide(x, y): return np.sum(np.divide(x, y) * W)
def b_true_divide(x, y): return np.sum(np.true_divide(x, y) * W)
def b_power(x, y): return np.sum(np.power(x, y) * W)
def b_pow(x, y): return np.sum(np.pow(x, y) * W)
def b_maximum(x, y): return np.sum(np.maximum(x, y) * W)
def b_minimum(x, y): return np.sum(np.minimum(x, y) * W)
def b_fmax(x, y): return np.sum(np.fmax(x, y) * W)
def b_fmin(x, y): return np.sum(np.fmin(x, y) * W)
def b_remainder(x, y): return np.sum(np.remainder(x, y) * W)
def b_mod(x, y): return np.sum(np.mod(x, y) * W)
def b_logaddexp(x, y): return np.sum(np.logaddexp(x, y) * W)
def b_logaddexp2(x, y): return np.sum(np.logaddexp2(x, y) * W)
def b_arctan2(x, y): return np.sum(np.arctan2(x, y) * W)
def b_hypot(x, y): return np.sum(np.hypot(x, y) * W)
def b_where(x, y): return np.sum(np.where(MASK, x, y) * W)
def b_op_add(x, y): return np.sum((x + y) * W)
def b_op_sub(x, y): return np.sum((x - y) * W)
def b_op_mul(x, y): return np.sum((x * y) * W)
def b_op_truediv(x, y): return np.sum((x / y) * W)
def b_op_pow(x, y): return np.sum((x ** y) * W)
def b_op_mod(x, y): return np.sum((x % y) * W)


ANY = (-0.9, 0.9)
BINARY = [
    ("numpy.add", b_add, ANY, ANY), ("numpy.subtract", b_subtract, ANY, ANY),
    ("numpy.multiply", b_multiply, ANY, ANY), ("numpy.divide", b_divide, ANY, POSITIVE),
    ("numpy.true_divide", b_true_divide, ANY, POSITIVE), ("numpy.power", b_power, POSITIVE, ANY),
    ("numpy.pow", b_pow, POSITIVE, ANY), ("numpy.maximum", b_maximum, ANY, ANY),
    ("numpy.minimum", b_minimum, ANY, ANY), ("numpy.fmax", b_fmax, ANY, ANY),
    ("numpy.fmin", b_fmin, ANY, ANY), ("numpy.remainder", b_remainder, (0.5, 3.0), (0.7, 1.3)),
    ("numpy.mod", b_mod, (-3.0, 3.0), (0.7, 1.3)), ("numpy.logaddexp", b_logaddexp, ANY, ANY),
    ("numpy.logaddexp2", b_logaddexp2, ANY, ANY), ("numpy.arctan2", b_arctan2, ANY, ANY),
    ("numpy.hypot", b_hypot, ANY, ANY), ("numpy.where", b_where, ANY, ANY),
    ("operator.add", b_op_add, ANY, ANY), ("operator.sub", b_op_sub, ANY, ANY),
    ("operator.mul", b_op_mul, ANY, ANY), ("operator.truediv", b_op_truediv, ANY, POSITIVE),
    ("operator.pow", b_op_pow, POSITIVE, ANY), ("operator.mod", b_op_mod, (0.5, 3.0), (0.7, 1.3)),
]
# autograd's where rule does not sum a broadcast operand's adjoint back to its shape.
NO_AUTOGRAD_BINARY = {"numpy.where"}

for _rule, _fn, _dx, _dy in BINARY:
    _oracle = "none" if _rule in NO_AUTOGRAD_BINARY else "autograd"
    for _sx, _sy in (((3, 4), (4,)), ((3, 4), None), ((3, 1), (1, 4)), (None, (3, 4))):
        add(_rule, _fn, uniform(_sx, *_dx), uniform(_sy, *_dy), oracle=_oracle)


def power_int(x): return np.sum(x ** 3 * W) + np.sum(np.power(x, 2) * W)
def power_base_const(x): return np.sum(2.0 ** x * W)
def power_zero_base(x, y): return np.sum(np.power(x, y) * W)
def neg(x): return np.sum(-x * W)
def pos(x): return np.sum(+x * W)
def clip_both(x): return np.sum(np.clip(x, -0.5, 0.5) * W)
def clip_upper(x): return np.sum(np.clip(x, None, 0.3) * W)
def clip_arrays(x): return np.sum(np.clip(x, -V4 * 0.5, 0.6) * W)
def where_same_shape(x, y): return np.sum(np.where(MASK, x, y) * W)


add("operator.pow", power_int, uniform((3, 4)))
add("operator.pow", power_base_const, uniform((3, 4)))
# x == 0 with exponent >= 1: the power rule must give 0 (not NaN) for d/dy and y*x**(y-1) for d/dx.
add("numpy.power", power_zero_base, np.array([0.0, 0.5, 1.5, 2.0]), np.array([2.0, 0.0, 1.5, 3.0]),
    argnums=(0,))
add("operator.neg", neg, uniform((3, 4)))
# autograd arrays do not support unary +.
add("operator.pos", pos, uniform((3, 4)), oracle="none")
add("numpy.clip", clip_both, uniform((3, 4)))
add("numpy.clip", clip_upper, uniform((4,)))
add("numpy.clip", clip_arrays, uniform((3, 4)))
add("numpy.where", where_same_shape, uniform((3, 4)), uniform((3, 4)))


# ===== Python operators, builtins and assignment ===============================================

def getitem_basic(x): return np.sum(x[1:, ::2] * W[1:, ::2]) + x[0, 1] * 3.0
def getitem_fancy(x): return np.sum(x[[0, 2, 0]] * W)
def getitem_mask(x): return np.sum(x[MASK] * W[MASK])
def getitem_none(x): return np.sum(x[:, None, 1] * V3[:, None])
def unpack_rows(x):
    a, b = x
    return np.sum(a * b * V4)
def copy_assign(x):
    y = x
    return np.sum(np.sin(y) * x * W)
def to_float(x): return float(np.sum(x * W)) * 2.0
def matmul_op(x, y): return np.sum((x @ y) * W)


add("operator.getitem", getitem_basic, uniform((3, 4)))
add("operator.getitem", getitem_fancy, uniform((3, 4)))
add("operator.getitem", getitem_mask, uniform((3, 4)))
add("operator.getitem", getitem_none, uniform((3, 4)))
add("operator.getitem", unpack_rows, uniform((2, 4)))
add("copy", copy_assign, uniform((3, 4)))
# autograd cannot run float() on its traced values.
add("builtins.float", to_float, uniform((3, 4)), oracle="none")


def builtin_max(x, y): return max(np.sum(x * W), np.sum(y * y)) * max(x[0, 0], 0.25, y[1, 1])
def builtin_min(x, y): return min(np.sum(x * W), np.sum(y * y), 0.5) + min(x[0, 1], y[0, 0])
def item_of(x): return np.sum(x * W).item() * x[:1, 2].item()


add("builtins.max", builtin_max, uniform((3, 4)), uniform((3, 4)))
add("builtins.min", builtin_min, uniform((3, 4)), uniform((3, 4)))
add("ndarray.item", item_of, uniform((3, 4)), oracle="none")  # autograd's boxes have no .item


def sorted_of(x, y):
    ranked = sorted(x[0])  # an array's items
    values = sorted([np.sum(x * W), np.sum(y * y), x[1, 1]], reverse=True)  # numbers
    return ranked[0] * values[0] + ranked[-1] * values[2]


add("builtins.sorted", sorted_of, uniform((3, 4)), uniform((3, 4)))
def partition_of(x):
    return (np.sum(np.sin(np.partition(x, 2)) * W) + np.sum(np.partition(x, (0, 2), axis=0)[1] ** 3)
            + np.sum(np.partition(x, 5, axis=None)[:6] ** 2))
def select_of(x, y):
    return np.sum(np.sin(np.select([x > 0.3, y < 0.0], [x * y, np.cos(x)], y ** 2)) * W) \
        + np.sum(np.select([x < 0.0], [x]) ** 2)
add("numpy.partition", partition_of, uniform((3, 4)), oracle="none")  # autograd: 1-D only
add("numpy.select", select_of, uniform((3, 4)), uniform((4,)))
def tuple_and_list(x, y):
    rows, pair = tuple(x * 2.0), list((x[0], y))
    return np.sum(np.sin(rows[1]) * rows[2] * pair[1]) + np.sum(tuple((np.cos(y), pair[0]))[0] * V4)
add(("builtins.tuple", "builtins.list"), tuple_and_list, uniform((3, 4)), uniform((4,)))
add("operator.matmul", matmul_op, uniform((3, 5)), uniform((5, 4)))


# ===== math on Python floats ===================================================================

def m_sin(x): return math.sin(x) * 1.5
def m_cos(x): return math.cos(x) * 1.5
def m_tan(x): return math.tan(x) * 1.5
def m_asin(x): return math.asin(x) * 1.5
def m_acos(x): return math.acos(x) * 1.5
def m_atan(x): return math.atan(x) * 1.5
def m_sinh(x): return math.sinh(x) * 1.5
def m_cosh(x): return math.cosh(x) * 1.5
def m_tanh(x): return math.tanh(x) * 1.5
def m_asinh(x): return math.asinh(x) * 1.5
def m_acosh(x): return math.acosh(x + 2.0) * 1.5
def m_atanh(x): return math.atanh(x) * 1.5
def m_exp(x): return math.exp(x) * 1.5
def m_expm1(x): return math.expm1(x) * 1.5
def m_log2(x): return math.log2(x + 2.0) * 1.5
def m_log10(x): return math.log10(x + 2.0) * 1.5
def m_log1p(x): return math.log1p(x) * 1.5
def m_sqrt(x): return math.sqrt(x + 2.0) * 1.5
def m_fabs(x): return math.fabs(x) * 1.5
def m_exp2(x): return math.exp2(x) * 1.5
def m_cbrt(x): return math.cbrt(x + 2.0) * 1.5
def m_radians(x): return math.radians(x) * 1.5
def m_degrees(x): return math.degrees(x) * 1.5
def m_log(x): return math.log(x + 2.0) * 1.5 + math.log(x + 3.0, 2.0)
def m_pow(x, y): return math.pow(x + 2.0, y) * 1.5
def m_hypot(x, y): return math.hypot(x, y) * 1.5
def m_atan2(x, y): return math.atan2(x, y) * 1.5


MATH_UNARY = [
    ("math.sin", m_sin), ("math.cos", m_cos), ("math.tan", m_tan), ("math.asin", m_asin),
    ("math.acos", m_acos), ("math.atan", m_atan), ("math.sinh", m_sinh), ("math.cosh", m_cosh),
    ("math.tanh", m_tanh), ("math.asinh", m_asinh), ("math.acosh", m_acosh),
    ("math.atanh", m_atanh), ("math.exp", m_exp), ("math.expm1", m_expm1),
    ("math.log2", m_log2), ("math.log10", m_log10), ("math.log1p", m_log1p),
    ("math.sqrt", m_sqrt), ("math.fabs", m_fabs), ("math.exp2", m_exp2), ("math.cbrt", m_cbrt),
    ("math.radians", m_radians), ("math.degrees", m_degrees), ("math.log", m_log),
]
for _rule, _fn in MATH_UNARY:
    # autograd has no cbrt rule: finite differences only for it.
    add(_rule, _fn, uniform(None), oracle="none" if _rule == "math.cbrt" else "math")
add("math.pow", m_pow, uniform(None), uniform(None, 0.5, 2.0), oracle="math")
add("math.hypot", m_hypot, uniform(None), uniform(None), oracle="math")
add("math.atan2", m_atan2, uniform(None), uniform(None), oracle="math")


# ===== reductions ==============================================================================

def r_sum_all(x): return np.sum(x) * np.sum(x * W)
def r_sum_axis(x): return np.sum(np.sum(x, axis=0) * V4)
def r_sum_axes_keep(x): return np.sum(np.sum(x, axis=(0, 2), keepdims=True) * V3[:, None])
def r_sum_neg(x): return np.sum(np.sum(x, axis=-1) * W[:2, :3])
def r_sum_method(x): return np.sum(x.sum(axis=0) * V4) + x.sum()
def r_mean(x): return np.sum(np.mean(x, axis=1) * V3) + np.mean(x * W)
def r_mean_keep(x): return np.sum(np.mean(x, axis=(0, 1), keepdims=True) * V4)
def r_mean_method(x): return np.sum(x.mean(axis=0) * V4)
def r_var(x): return np.sum(np.var(x, axis=1) * V3) + np.var(x)
def r_var_ddof(x): return np.sum(np.var(x, axis=0, ddof=1, keepdims=True) * V4)
def r_var_method(x): return np.sum(x.var(axis=-1) * V3)
def r_std(x): return np.sum(np.std(x, axis=1) * V3) + np.std(x)
def r_std_ddof(x): return np.sum(np.std(x, axis=(0, 2), ddof=1) * V3)
def r_std_method(x): return np.sum(x.std(axis=1, keepdims=True) * V3[:, None])
# one value reduced: its std is 0 whatever the value, and so is the gradient (autograd's choice)
def r_std_one(x): return np.std(x[0, :1]) + np.sum(np.std(x[:, :1], axis=1) * V3) + x[:, :1].std()
def r_max(x): return np.sum(np.max(x, axis=0) * V4) + np.max(x)
def r_max_keep(x): return np.sum(np.max(x, axis=(0, 2), keepdims=True) * V3[:, None])
def r_amax(x): return np.sum(np.amax(x, axis=1) * V3)
def r_min(x): return np.sum(np.min(x, axis=1) * V3) + np.min(x)
def r_amin(x): return np.sum(np.amin(x, axis=0) * V4)
def r_max_method(x): return np.sum(x.max(axis=1) * V3)
def r_min_method(x): return np.sum(x.min(axis=0) * V4) + x.min()
def r_max_ties(x): return np.max(x) * 2.0
def r_prod(x): return np.sum(np.prod(x, axis=1) * V3) + np.prod(x[0])
def r_prod_keep(x): return np.sum(np.prod(x, axis=0, keepdims=True) * V4)
def r_prod_method(x): return np.sum(x.prod(axis=0) * V4)
def r_prod_zero(x): return np.sum(np.prod(x, axis=0) * V4) + np.prod(x)
def r_cumsum(x): return np.sum(np.cumsum(x, axis=1) * W)
def r_cumsum_flat(x): return np.sum(np.cumsum(x) * W.ravel())
def r_cumsum_method(x): return np.sum(x.cumsum(axis=0) * W)
def r_norm(x): return np.linalg.norm(x) * 2.0
def r_norm_axis(x): return np.sum(np.linalg.norm(x, axis=1) * V3)
def r_norm_fro(x): return np.linalg.norm(x, "fro")
def r_norm_ord1(x): return np.linalg.norm(x, ord=1) * 2.0
def r_norm_inf(x): return np.linalg.norm(x, ord=np.inf) * 2.0
def r_norm_ord3(x): return np.sum(np.linalg.norm(x, ord=3, axis=0) * V4)
def r_norm_keep(x): return np.sum(np.linalg.norm(x, ord=3, axis=0, keepdims=True) * V4)


X34 = uniform((3, 4))
X234 = uniform((2, 3, 4))
add("numpy.sum", r_sum_all, X34)
add("numpy.sum", r_sum_axis, X34)
add("numpy.sum", r_sum_axes_keep, X234)
add("numpy.sum", r_sum_neg, X234)
add("ndarray.sum", r_sum_method, X34)
add("numpy.mean", r_mean, X34)
add("numpy.mean", r_mean_keep, X234)
add("ndarray.mean", r_mean_method, X34)
add("numpy.var", r_var, X34)
add("numpy.var", r_var_ddof, X34)
add("ndarray.var", r_var_method, X34)
add("numpy.std", r_std, X34)
add("numpy.std", r_std_ddof, X234)
add("ndarray.std", r_std_method, X34)
add(("numpy.std", "ndarray.std"), r_std_one, X34)
add("numpy.max", r_max, X34)
add("numpy.max", r_max_keep, X234)
add("numpy.amax", r_amax, X34)
add("numpy.min", r_min, X34)
add("numpy.amin", r_amin, X34)
add("ndarray.max", r_max_method, X34)
add("ndarray.min", r_min_method, X34)
# Ties share the adjoint equally (autograd's convention); finite differences see a kink there.
add("numpy.max", r_max_ties, np.array([1.0, 3.0, 3.0, 2.0]), oracle="autograd_only")
add("numpy.prod", r_prod, uniform((3, 4), 0.5, 1.5))
add("numpy.prod", r_prod_keep, uniform((3, 4), 0.5, 1.5))
add("ndarray.prod", r_prod_method, uniform((3, 4), 0.5, 1.5))
# autograd's prod rule divides by x and gives NaN at zeros: finite differences only.
add("numpy.prod", r_prod_zero, np.array([[0.0, 1.5, 0.0, 2.0], [0.5, 0.0, 0.7, 1.1],
                                         [1.2, 0.8, 0.0, 0.9]]), oracle="none")
add("numpy.cumsum", r_cumsum, X34)
add("numpy.cumsum", r_cumsum_flat, X34)
add("ndarray.cumsum", r_cumsum_method, X34)
add("numpy.linalg.norm", r_norm, X34)
add("numpy.linalg.norm", r_norm_axis, X34)
add("numpy.linalg.norm", r_norm_fro, X34)
# autograd has no gradient for the vector 1-norm and inf-norm: finite differences only.
add("numpy.linalg.norm", r_norm_ord1, uniform((5,)), oracle="none")
add("numpy.linalg.norm", r_norm_inf, uniform((5,)), oracle="none")
add("numpy.linalg.norm", r_norm_ord3, X34)
# autograd's norm rule fails with keepdims=True.
add("numpy.linalg.norm", r_norm_keep, X34, oracle="none")


# ===== shapes, indexing, joining ===============================================================

def s_reshape(x): return np.sum(np.reshape(x, (2, 6)) * W.reshape(2, 6))
def s_reshape_order(x): return np.sum(np.reshape(x, (4, 3), order="F") * W.reshape(4, 3))
def s_reshape_method(x): return np.sum(x.reshape(2, 6) * W.reshape(2, 6)) + np.sum(x.reshape((6, 2))[0])
def s_reshape_neg(x): return np.sum(x.reshape(-1) * W.ravel())
def s_ravel(x): return np.sum(np.ravel(x) * W.ravel())
def s_ravel_method(x): return np.sum(x.ravel() * W.ravel())
def s_flatten(x): return np.sum(x.flatten() * W.ravel())
def s_squeeze(x): return np.sum(np.squeeze(x) * W) + np.sum(np.squeeze(x, axis=1) * W)
def s_squeeze_method(x): return np.sum(x.squeeze(1) * W)
def s_transpose(x): return np.sum(np.transpose(x) * W.T)
def s_transpose_axes(x): return np.sum(np.transpose(x, (1, 2, 0)) * np.transpose(W234, (1, 2, 0)))
def s_transpose_method(x): return np.sum(x.transpose(2, 0, 1) * W234.transpose(2, 0, 1))
def s_transpose_method_tuple(x): return np.sum(x.transpose((1, 0, 2)) * W234.transpose((1, 0, 2)))
def s_transpose_method_none(x): return np.sum(x.transpose() * W.T)
def s_T(x): return np.sum(x.T * W.T)
def s_expand_dims(x): return np.sum(np.expand_dims(x, 1) * W234.transpose(1, 0, 2)[:, :1])
def s_atleast_1d(x): return np.sum(np.atleast_1d(x) * V4)
def s_atleast_2d(x): return np.sum(np.atleast_2d(x) * W)
def s_flip(x): return np.sum(np.flip(x) * W) + np.sum(np.flip(x, axis=1) * W)
def s_fliplr(x): return np.sum(np.fliplr(x) * W)
def s_flipud(x): return np.sum(np.flipud(x) * W)
def s_swapaxes(x): return np.sum(np.swapaxes(x, 0, 2) * W234.swapaxes(0, 2))
def s_moveaxis(x): return np.sum(np.moveaxis(x, 0, -1) * np.moveaxis(W234, 0, -1))
def s_concatenate(x, y): return np.sum(np.concatenate([x, y]) * np.concatenate([W, W[:2]]))
def s_concatenate_axis(x, y): return np.sum(np.sin(np.concatenate((x, y, x), axis=1)))
def s_concatenate_none(x, y): return np.sum(np.sin(np.concatenate([x, y], axis=None)))
def s_stack(x, y): return np.sum(np.stack([x, y]) * W234)
def s_stack_axis(x, y): return np.sum(np.sin(np.stack([x, y, x], axis=-1))) + np.sum(np.cos(np.stack([x, y], axis=1)))
def s_broadcast_to(x): return np.sum(np.broadcast_to(x, (2, 3, 4)) * W234)
def s_asarray(x): return np.sum(np.asarray(x) * W)
def s_array(x, y): return np.sum(np.array([x, y]) * W[:2])
def s_copy_method(x): return np.sum(x.copy() * W)
def s_astype(x): return np.sum(x.astype(np.float64) * W)


X1_4 = uniform((3, 1, 4))
add("numpy.reshape", s_reshape, X34)
add("numpy.reshape", s_reshape_order, X34)
add("ndarray.reshape", s_reshape_method, X34)
add("ndarray.reshape", s_reshape_neg, X34)
add("numpy.ravel", s_ravel, X34)
add("ndarray.ravel", s_ravel_method, X34)
add("ndarray.flatten", s_flatten, X34)
add("numpy.squeeze", s_squeeze, X1_4)
add("ndarray.squeeze", s_squeeze_method, X1_4)
add("numpy.transpose", s_transpose, X34)
add("numpy.transpose", s_transpose_axes, X234)
# autograd's transpose method takes one axes tuple, not several ints.
add("ndarray.transpose", s_transpose_method, X234, oracle="none")
add("ndarray.transpose", s_transpose_method_tuple, X234)
add("ndarray.transpose", s_transpose_method_none, X34)
add("ndarray.T", s_T, X34)
add("numpy.expand_dims", s_expand_dims, X34)
add("numpy.atleast_1d", s_atleast_1d, 0.7)
add("numpy.atleast_1d", s_atleast_1d, uniform((4,)))
add("numpy.atleast_2d", s_atleast_2d, uniform((4,)))
# autograd has no rule for np.flip.
add("numpy.flip", s_flip, X34, oracle="none")
add("numpy.fliplr", s_fliplr, X34)
add("numpy.flipud", s_flipud, X34)
add("numpy.swapaxes", s_swapaxes, X234)
add("numpy.moveaxis", s_moveaxis, X234)
add("numpy.concatenate", s_concatenate, X34, uniform((2, 4)))
add("numpy.concatenate", s_concatenate_axis, X34, uniform((3, 1)))
# autograd's concatenate does not take axis=None.
add("numpy.concatenate", s_concatenate_none, X34, uniform((5,)), oracle="none")
add("numpy.stack", s_stack, X34, uniform((3, 4)))
add("numpy.stack", s_stack_axis, X34, uniform((3, 4)))
# autograd's broadcast_to rule cannot add leading dimensions.
add("numpy.broadcast_to", s_broadcast_to, uniform((3, 1)), oracle="none")
add("numpy.broadcast_to", s_broadcast_to, uniform((4,)), oracle="none")
# autograd has no rule for np.asarray on a traced array.
add("numpy.asarray", s_asarray, X34, oracle="none")
add("numpy.array", s_array, uniform((4,)), uniform((4,)))
# autograd arrays have no .copy() method.
add("ndarray.copy", s_copy_method, X34, oracle="none")
add("ndarray.astype", s_astype, X34)


# ===== products and linear algebra =============================================================

def l_matmul(x, y): return np.sum(np.sin(np.matmul(x, y)))
def l_matmul_op(x, y): return np.sum(np.sin(x @ y))
def l_dot(x, y): return np.sum(np.sin(np.dot(x, y)))
def l_dot_method(x, y): return np.sum(np.sin(x.dot(y)))
def l_outer(x, y): return np.sum(np.outer(x, y) * W)
def l_inner(x, y): return np.sum(np.sin(np.inner(x, y)))
def l_tensordot1(x, y): return np.sum(np.sin(np.tensordot(x, y, axes=1)))
def l_tensordot_pairs(x, y): return np.sum(np.sin(np.tensordot(x, y, axes=([1, 0], [0, 2]))))
def l_tensordot2(x, y): return np.sin(np.tensordot(x, y))
def l_einsum_mm(x, y): return np.sum(np.sin(np.einsum("ij,jk->ik", x, y)))
def l_einsum_full(x, y): return np.einsum("ij,ij->", x, y) * 2.0
def l_einsum_sum(x): return np.sum(np.einsum("ij->j", x) * V4)
def l_einsum_implicit(x, y): return np.sum(np.sin(np.einsum("ij,jk", x, y)))
def l_einsum_three(x, y, z): return np.einsum("i,ij,j->", x, y, z)
# '...' (batch axes broadcast between operands) and repeated indices (diagonals)
def l_einsum_batch(x, y): return np.sum(np.sin(np.einsum("...ij,...jk->...ik", x, y)))
def l_einsum_ellipsis_implicit(x, y): return np.sum(np.einsum("...i,...i", x, y) * V3)
def l_einsum_trace(x): return np.einsum("ii->", x) * 2.0
def l_einsum_diagonal(x): return np.sum(np.einsum("ii->i", x) * V3)
def l_einsum_diagonal_product(x, y): return np.sum(np.sin(np.einsum("ij,jj->i", x, y)))
# the interleaved form (operands and literal sublists), read as the subscripts form (Rule.respell)
def l_einsum_sublists(x, y): return np.sum(np.sin(np.einsum(x, [0, 1], y, [1, 2], [0, 2])))
def l_einsum_sublists_three(x, y): return np.einsum(x, (0, 1, 2), y, (3, 1, 0), W44, (3, 3), (2, 0))[0, 1] * 2.0
def l_einsum_sublists_ellipsis(x, y): return np.sum(np.sin(np.einsum(x, [..., 0, 1], y, (Ellipsis, 1, 2), [..., 0, 2])))
def l_einsum_sublists_implicit(x, y): return np.sum(np.sin(np.einsum(x, [0, 1], y, [1, 2])))
def l_einsum_sublists_transpose(x): return np.sum(np.einsum(x, [0, 1], [1, 0]) * W)
def l_inner_numbers(x, y): return np.inner(x, y) * 2.0 + np.sum(np.inner(x, V3))
def l_inv(x): return np.sum(np.linalg.inv(x) * W[:, :3])
def l_det(x): return np.linalg.det(x) * 2.0
def l_det_batched(x): return np.sum(np.linalg.det(x) * V4[:2])
def l_trace(x): return np.trace(x) * 2.0
def l_trace_offset(x): return np.trace(x, offset=2) * 2.0
def l_trace_axes(x): return np.sum(np.trace(x, axis1=1, axis2=2) * V4[:2])


SPD = uniform((3, 3)) + 3.0 * np.eye(3)
for _sx, _sy in (((3, 5), (5, 4)), ((5,), (5, 4)), ((3, 5), (5,)), ((5,), (5,)),
                 ((2, 3, 5), (5, 4)), ((2, 3, 5), (2, 5, 4)), ((5,), (2, 5, 4)),
                 ((2, 3, 5), (5,))):
    add("numpy.matmul", l_matmul, uniform(_sx), uniform(_sy))
    add("operator.matmul", l_matmul_op, uniform(_sx), uniform(_sy))
for _sx, _sy in (((3, 5), (5, 4)), ((5,), (5, 4)), ((3, 5), (5,)), ((5,), (5,)),
                 ((2, 3, 5), (5, 4)), ((3, 5), (2, 5, 4)), ((3, 4), None), (None, (3, 4))):
    add("numpy.dot", l_dot, uniform(_sx), uniform(_sy))
for _sx, _sy in (((3, 5), (5, 4)), ((5,), (5,)), ((2, 3, 5), (5,))):
    # autograd arrays have no .dot() method.
    add("ndarray.dot", l_dot_method, uniform(_sx), uniform(_sy), oracle="none")
add("numpy.outer", l_outer, uniform((3,)), uniform((4,)))
# autograd's outer does not flatten its operands.
add("numpy.outer", l_outer, uniform((3, 1)), uniform((2, 2)), oracle="none")
add("numpy.inner", l_inner, uniform((5,)), uniform((5,)))
add("numpy.inner", l_inner, uniform((3, 5)), uniform((2, 4, 5)))
add("numpy.tensordot", l_tensordot1, uniform((3, 5)), uniform((5, 4)))
add("numpy.tensordot", l_tensordot_pairs, uniform((3, 2, 4)), uniform((2, 5, 3)))
add("numpy.tensordot", l_tensordot2, uniform((3, 4)), uniform((3, 4)))
add("numpy.einsum", l_einsum_mm, uniform((3, 5)), uniform((5, 4)))
add("numpy.einsum", l_einsum_full, uniform((3, 4)), uniform((3, 4)))
add("numpy.einsum", l_einsum_sum, uniform((3, 4)))
add("numpy.einsum", l_einsum_implicit, uniform((3, 5)), uniform((5, 4)))
add("numpy.einsum", l_einsum_three, uniform((3,)), uniform((3, 4)), uniform((4,)))
add("numpy.einsum", l_einsum_batch, uniform((2, 3, 4)), uniform((4, 5)))
add("numpy.einsum", l_einsum_batch, uniform((2, 3, 4)), uniform((1, 4, 5)), oracle="none")
add("numpy.einsum", l_einsum_batch, uniform((2, 1, 3, 4)), uniform((5, 4, 2)), oracle="none")
add("numpy.einsum", l_einsum_ellipsis_implicit, uniform((3, 4)), uniform((4,)), oracle="none")
add("numpy.einsum", l_einsum_trace, uniform((3, 3)), oracle="none")  # autograd fails on these
add("numpy.einsum", l_einsum_diagonal, uniform((3, 3)), oracle="none")
add("numpy.einsum", l_einsum_diagonal_product, uniform((2, 3)), uniform((3, 3)), oracle="none")
add("numpy.einsum", l_einsum_sublists, uniform((3, 5)), uniform((5, 4)))
add("numpy.einsum", l_einsum_sublists_three, uniform((3, 4, 4)), uniform((4, 4, 3)))
add("numpy.einsum", l_einsum_sublists_ellipsis, uniform((2, 3, 4)), uniform((2, 4, 5)))
add("numpy.einsum", l_einsum_sublists_implicit, uniform((3, 5)), uniform((5, 4)), oracle="none")  # autograd: no
add("numpy.einsum", l_einsum_sublists_transpose, uniform((4, 3)))
# np.inner of numbers is their product (autograd fails on it too)
add("numpy.inner", l_inner_numbers, uniform(None), uniform(None), argnums=(0, 1), oracle="none")
add("numpy.linalg.inv", l_inv, SPD)
add("numpy.linalg.det", l_det, SPD)
add("numpy.linalg.det", l_det_batched, np.stack([SPD, SPD.T + 0.5]))
add("numpy.trace", l_trace, uniform((3, 3)))
add("numpy.trace", l_trace_offset, uniform((3, 4)))
# autograd's trace rule does not take axis1/axis2.
add("numpy.trace", l_trace_axes, uniform((2, 3, 4)), oracle="none")


# ===== rules added for autograd's coverage list ===============================================

def u_sinc(x): return np.sum(np.sinc(x) * W)
def u_real(x): return np.sum(np.real(x) * W)
def u_nan_to_num(x): return np.sum(np.nan_to_num(x) * W)
def u_real_if_close(x): return np.sum(np.real_if_close(x + 0j) * W)  # the imaginary part dropped
def u_real_summed(x): return np.sum(np.real(x @ x.T)) + np.sum(np.imag(x @ x.T))  # a sum's adjoint spread
# Functions of complex numbers on real values (tests/rules/test_rules_complex.py has complex ones): the
# imaginary part and the angle of a real number are constant, their gradient is zero.
def u_imag(x): return np.sum((np.imag(x) + np.angle(x) + np.angle(x, deg=True) + x) * W)
def u_methods(x): return np.sum((x.real + x.imag + x.conj() * 2.0 + (x * 0.5).conjugate()) * W)
def b_atan2(x, y): return np.sum(np.atan2(x, y) * W)
def b_float_power(x, y): return np.sum(np.float_power(x, y) * W)
def b_fmod(x, y): return np.sum(np.fmod(x, y) * W)
def clip_active_bounds(x, lo, hi): return np.sum(np.clip(x, lo, hi) * W)
def clip_method(x): return np.sum(x.clip(-0.4, 0.5) * W) + np.sum(x.clip(max=0.2) * W)
def m_erf(x): return math.erf(x) * 1.5 + math.erfc(x) * 0.5
def m_fmod(x, y): return math.fmod(x * 3.0, y) * 1.5


for _shape in ((3, 4), (4,), None):
    add("numpy.sinc", u_sinc, uniform(_shape, -2.0, 2.0))
    add("numpy.real", u_real, uniform(_shape))
    add(("numpy.imag", "numpy.angle"), u_imag, uniform(_shape), oracle="none")  # no deg= in autograd
    add("numpy.nan_to_num", u_nan_to_num, uniform(_shape))
    add("numpy.real_if_close", u_real_if_close, uniform(_shape))
add(("ndarray.real", "ndarray.imag", "ndarray.conj", "ndarray.conjugate"), u_methods,
    uniform((3, 4)), oracle="none")  # autograd's arrays have no .real
# autograd gives NaN at x == 0, where the derivative of sinc is 0.
add("numpy.sinc", u_sinc, np.array([0.0, 0.5, -1.5, 2.5]), oracle="none")
# non-finite entries get a zero gradient (finite differences see a constant there)
add("numpy.nan_to_num", u_nan_to_num, np.array([0.3, np.nan, np.inf, -0.2]), oracle="autograd_only")
add(("numpy.real", "numpy.imag"), u_real_summed, uniform((3, 4)))
for _sx, _sy in (((3, 4), (4,)), ((3, 4), None), ((3, 1), (1, 4))):
    add("numpy.atan2", b_atan2, uniform(_sx), uniform(_sy))
    # autograd has no rule for np.float_power
    add("numpy.float_power", b_float_power, uniform(_sx, *POSITIVE), uniform(_sy), oracle="none")
    # autograd has no rule for np.fmod
    add("numpy.fmod", b_fmod, uniform(_sx, -3.0, 3.0), uniform(_sy, 0.7, 1.3), oracle="none")
# autograd treats clip's bounds as constants
add("numpy.clip", clip_active_bounds, uniform((3, 4)), uniform((4,), -0.5, 0.0), 0.4, oracle="none")
add("ndarray.clip", clip_method, uniform((3, 4)), oracle="none")  # autograd arrays have no .clip
add(("math.erf", "math.erfc"), m_erf, uniform(None), oracle="none")  # autograd: no math.erf twin
add("math.fmod", m_fmod, uniform(None), 0.7, oracle="none")


def r_cumprod(x): return np.sum(np.cumprod(x, axis=1) * W)
def r_cumprod_flat(x): return np.sum(np.cumprod(x) * W.ravel())
def r_cumprod_method(x): return np.sum(x.cumprod(axis=0) * W)
def r_diff(x): return np.sum(np.diff(x) * W[:, :3])
# an empty difference: n at least the axis length
def r_diff_short(x): return np.sum(np.diff(x[:1], axis=0)) + np.sum(np.diff(x, n=5)) + np.sum(x * W)
def r_diff_axis(x): return np.sum(np.diff(x, n=2, axis=0) * V4)
def r_diff_pend(x, p): return np.sum(np.sin(np.diff(x, prepend=p, append=x[:, :2] * 2.0)))
def r_average(x): return np.sum(np.average(x, axis=0) * V4) + np.average(x)
def r_average_w(x, w): return np.sum(np.average(x, axis=1, weights=w) * V3)
def r_average_full_w(x, w): return np.average(x, weights=w) * 2.0
def r_ptp(x): return np.sum(np.ptp(x, axis=1) * V3) + np.ptp(x)
def r_nansum(x): return np.sum(np.nansum(x, axis=0) * V4) + np.nansum(x * W)
def r_nanmean(x): return np.sum(np.nanmean(x, axis=1) * V3) + np.nanmean(x)
def r_nanvar(x): return np.sum(np.nanvar(x, axis=1, ddof=1) * V3) + np.nanvar(x)
def r_nanstd(x): return np.sum(np.nanstd(x, axis=1) * V3) + np.nanstd(x)
def r_nanmax(x): return np.sum(np.nanmax(x, axis=0) * V4) + np.nanmin(x)
def r_nanprod(x): return np.sum(np.nanprod(x, axis=1) * V3)
def r_nancumsum(x): return np.sum(np.nancumsum(x, axis=1) * W)
def r_var_axis0(x): return np.sum(np.var(x, axis=0) * V4) + np.sum(np.std(x, axis=0) * V4)
def r_norm_matrix(x): return np.linalg.norm(x, ord=1) + np.linalg.norm(x, ord=np.inf) * 2.0
def r_norm_matrix_svd(x): return np.linalg.norm(x, ord=2) + np.linalg.norm(x, "nuc") * 2.0
def r_norm_matrix_axes(x): return np.sum(np.linalg.norm(x, ord=-1, axis=(1, 2)) * V4[:2])


XNAN = uniform((3, 4), 0.5, 1.5)
XNAN[0, 1] = XNAN[2, 3] = np.nan
# autograd has no rule for cumprod, diff's prepend/append, average, ptp or the nan-reductions.
add("numpy.cumprod", r_cumprod, uniform((3, 4), 0.5, 1.5), oracle="none")
add("numpy.cumprod", r_cumprod_flat, np.array([[0.5, 0.0, 1.2, 0.8], [1.1, 0.9, 0.0, 0.0],
                                                [0.7, 1.3, 0.6, 1.4]]), oracle="none")
add("ndarray.cumprod", r_cumprod_method, uniform((3, 4), 0.5, 1.5), oracle="none")
add("numpy.diff", r_diff, X34)
add("numpy.diff", r_diff_axis, uniform((4, 4)))
add("numpy.diff", r_diff_short, X34, oracle="none")  # autograd fails on it
add("numpy.diff", r_diff_pend, X34, 0.5, oracle="none")
add("numpy.diff", r_diff_pend, X34, uniform((3, 2)), oracle="none")
add("numpy.average", r_average, X34, oracle="none")
add("numpy.average", r_average_w, X34, uniform((4,), 0.5, 1.5), oracle="none")
add("numpy.average", r_average_full_w, X34, uniform((3, 4), 0.5, 1.5), oracle="none")
add("numpy.ptp", r_ptp, X34, oracle="none")
add("numpy.nansum", r_nansum, XNAN, oracle="none")
add("numpy.nanmean", r_nanmean, XNAN, oracle="none")
add("numpy.nanvar", r_nanvar, XNAN, oracle="none")
add("numpy.nanstd", r_nanstd, XNAN, oracle="none")
add(("numpy.nanmax", "numpy.nanmin"), r_nanmax, XNAN, oracle="none")
add("numpy.nanprod", r_nanprod, XNAN, oracle="none")
add("numpy.nancumsum", r_nancumsum, XNAN, oracle="none")
add(("numpy.var", "numpy.std"), r_var_axis0, X34)
# autograd has no gradient for these matrix norms.
add("numpy.linalg.norm", r_norm_matrix, X34, oracle="none")
add("numpy.linalg.norm", r_norm_matrix_svd, X34, oracle="none")
add("numpy.linalg.norm", r_norm_matrix_axes, X234, oracle="none")


def s_astype_fn(x): return np.sum(np.astype(x, np.float64) * W)
def s_copy_fn(x): return np.sum(np.copy(x) * W) + np.sum(np.asanyarray(x) * W) + np.sum(np.ascontiguousarray(x.T) * W.T)
def s_atleast_3d(x): return np.sum(np.sin(np.atleast_3d(x)))
def s_permute_dims(x): return np.sum(np.permute_dims(x, (2, 0, 1)) * W234.transpose(2, 0, 1))
def s_matrix_transpose(x): return np.sum(np.matrix_transpose(x) * W234.swapaxes(1, 2)) + np.sum(np.linalg.matrix_transpose(x) * W234.swapaxes(1, 2) * 2.0)
def s_mT(x): return np.sum(x.mT * W234.swapaxes(1, 2))
def s_swapaxes_method(x): return np.sum(x.swapaxes(0, 1) * W.T)
def s_diag(x): return np.sum(np.diag(x) * W[:, :3]) + np.sum(np.sin(np.diag(x, 1)))
def s_diag_of_matrix(x): return np.sum(np.diag(x) * V3) + np.sum(np.diag(x, -1) * V3[:2])
def s_diagonal(x): return np.sum(np.sin(np.diagonal(x))) + np.sum(np.cos(np.diagonal(x, 2, 1, 2)))
def s_diagonal_method(x): return np.sum(x.diagonal() * V3) + np.sum(x.diagonal(-1) * V3[:2])
def s_tril(x): return np.sum(np.tril(x) * W) + np.sum(np.triu(x, 1) * W * 2.0)
def s_roll(x): return np.sum(np.roll(x, 2) * W) + np.sum(np.roll(x, (1, -1), axis=(0, 1)) * W * 2.0)
def s_rot90(x): return np.sum(np.rot90(x) * W.T) + np.sum(np.rot90(x, 2, axes=(1, 0)) * W)
def s_rollaxis(x): return np.sum(np.rollaxis(x, 2) * np.rollaxis(W234, 2)) + np.sum(np.rollaxis(x, 0, 3) * np.rollaxis(W234, 0, 3))
def s_tile(x): return np.sum(np.sin(np.tile(x, (2, 3)))) + np.sum(np.cos(np.tile(x, 2)))
def s_repeat(x): return np.sum(np.sin(np.repeat(x, 2))) + np.sum(np.cos(np.repeat(x, [1, 0, 3], axis=0)))
def s_repeat_method(x): return np.sum(np.sin(x.repeat(3, axis=1)))
def s_pad(x): return np.sum(np.sin(np.pad(x, 1))) + np.sum(np.cos(np.pad(x, ((1, 2), (0, 1)), mode="reflect")))
def s_pad_edge(x): return np.sum(np.sin(np.pad(x, 2, mode="edge"))) + np.sum(np.cos(np.pad(x, (1, 2), mode="wrap")))
def s_sort(x): return np.sum(np.sort(x) * W) + np.sum(np.sort(x, axis=0) * W) + np.sum(np.sort(x, axis=None) * W.ravel())
def s_take(x): return np.sum(np.take(x, [0, 2, 2, 5]) * V4) + np.sum(np.take(x, [1, 1], axis=1) * W[:, :2])
def s_take_method(x): return np.sum(x.take([3, 0, 3], axis=-1) * W[:, :3])
def s_take_along_axis(x): return np.sum(np.take_along_axis(x, IDX, axis=1) * W)
def s_hstack(x, y): return np.sum(np.sin(np.hstack([x, y]))) + np.sum(np.cos(np.hstack((x[0], y[0]))))
def s_vstack(x, y): return np.sum(np.sin(np.vstack([x, y]))) + np.sum(np.cos(np.row_stack((x, x))))
def s_dstack(x, y): return np.sum(np.sin(np.dstack([x, y[:, :4]])))
def s_column_stack(x, y): return np.sum(np.sin(np.column_stack([x[0], y])))
# np.r_ / np.c_ (index tricks, lowered to s2s.join_r / join_c): arrays and numbers as items
def s_index_r(x, y): return np.sum(np.sin(np.r_[x[0], y[:, 0] * 2.0, 1.5, x[1, 1]]) * np.arange(10.0))
def s_index_r_rows(x, y): return np.sum(np.sin(np.r_[x[:, :2], y, x[:1, 2:]]) * W[:, :2].sum())
def s_index_r_slices(x, y): return np.sum(np.sin(np.r_[x[0], 1:4, y[:, 1], 0:1:3j]) * np.arange(14.0))
def s_index_c(x, y): return np.sum(np.sin(np.c_[x[0], y, x.T]) * np.arange(24.0).reshape(4, 6)) + np.sum(np.c_[x[0, 0], 0.5] ** 2)
def s_append(x, y): return np.sum(np.sin(np.append(x, y))) + np.sum(np.cos(np.append(x, x[:1], axis=0)))
def s_full(x): return np.sum(np.full((3, 4), x) * W)
def s_full_vector(x): return np.sum(np.full((3, 4), x) * W)
def s_linspace(x, y): return np.sum(np.linspace(x, y, 5) * V4[0]) + np.sum(np.sin(np.linspace(x, y, num=4, endpoint=False)))
def s_linspace_arrays(x, y): return np.sum(np.sin(np.linspace(x, y, 5, axis=1)))


IDX = np.array([[0, 3, 3, 1], [2, 2, 0, 1], [1, 0, 3, 2]])
add("numpy.astype", s_astype_fn, X34, oracle="none")  # autograd has no np.astype
add(("numpy.copy", "numpy.asanyarray", "numpy.ascontiguousarray"), s_copy_fn, X34, oracle="none")
add("numpy.atleast_3d", s_atleast_3d, uniform((3, 4)))
add("numpy.atleast_3d", s_atleast_3d, uniform((4,)))
add("numpy.permute_dims", s_permute_dims, X234, oracle="none")
add(("numpy.matrix_transpose", "numpy.linalg.matrix_transpose"), s_matrix_transpose, X234,
    oracle="none")
add("ndarray.mT", s_mT, X234, oracle="none")
add("ndarray.swapaxes", s_swapaxes_method, X34, oracle="none")
add("numpy.diag", s_diag, uniform((3,)))
add("numpy.diag", s_diag_of_matrix, uniform((3, 3)))
# autograd's diag rule assumes a square matrix.
add("numpy.diag", s_diag_of_matrix, uniform((3, 4)), oracle="none")
add("numpy.diagonal", s_diagonal, X234, oracle="none")
add("ndarray.diagonal", s_diagonal_method, uniform((3, 4)), oracle="none")
add(("numpy.tril", "numpy.triu"), s_tril, X34)
add("numpy.roll", s_roll, X34, oracle="none")
add("numpy.rot90", s_rot90, X34, oracle="none")  # autograd's rot90 does not take axes=
add("numpy.rollaxis", s_rollaxis, X234)
# autograd's tile rule disagrees with finite differences for a reps shorter than ndim.
add("numpy.tile", s_tile, uniform((2, 3)), oracle="none")
add("numpy.tile", s_tile, uniform((3,)))
add("numpy.repeat", s_repeat, uniform((3, 2)), oracle="none")
add("ndarray.repeat", s_repeat_method, X34, oracle="none")
# autograd's pad rule needs an explicit mode.
add("numpy.pad", s_pad, X34, oracle="none")
add("numpy.pad", s_pad_edge, X34, oracle="none")
add("numpy.sort", s_sort, X34, oracle="none")
add("numpy.take", s_take, X34, oracle="none")
add("ndarray.take", s_take_method, X34, oracle="none")
add("numpy.take_along_axis", s_take_along_axis, X34, oracle="none")
add("numpy.hstack", s_hstack, X34, uniform((3, 2)))
add(("numpy.vstack", "numpy.row_stack"), s_vstack, uniform((4,)), uniform((2, 4)))
add("numpy.dstack", s_dstack, X34, uniform((3, 4)), oracle="none")  # autograd has no dstack
add("numpy.column_stack", s_column_stack, X34, uniform((4, 2)))
add("s2sgrad.runtime.join_r", s_index_r, X34, uniform((4, 2)))
add("s2sgrad.runtime.join_r", s_index_r_rows, X34, uniform((4, 2)))
add("s2sgrad.runtime.join_r", s_index_r_slices, X34, uniform((4, 2)))
add("s2sgrad.runtime.join_c", s_index_c, X34, uniform((4, 2)))
add("numpy.append", s_append, X34, uniform((5,)))
add("numpy.full", s_full, 0.7)
# autograd sums an array fill_value's adjoint to one number.
add("numpy.full", s_full_vector, uniform((4,)), oracle="none")
# autograd's linspace does not take endpoint=.
add("numpy.linspace", s_linspace, 0.3, 1.7, oracle="none")
add("numpy.linspace", s_linspace_arrays, uniform((3,)), uniform((3,)), oracle="none")


def l_trace_method(x): return x.trace() * 2.0 + x.trace(offset=1) + np.trace(x, 1)
def l_vdot(x, y): return np.vdot(x, y) * 2.0
def l_kron(x, y): return np.sum(np.sin(np.kron(x, y)))
def l_cross(x, y): return np.sum(np.sin(np.cross(x, y)))
def l_solve(x, y): return np.sum(np.sin(np.linalg.solve(x, y)))
def l_cholesky(x):
    spd = x @ x.T + 3.0 * np.eye(3)
    return np.sum(np.linalg.cholesky(spd) * W[:, :3])
def l_eigvalsh(x):
    sym = x + x.T
    return np.sum(np.linalg.eigvalsh(sym) * V3)
def l_svdvals(x): return np.sum(np.linalg.svdvals(x) * V3)
def l_pinv(x): return np.sum(np.linalg.pinv(x) * W)
def l_matrix_power(x): return np.sum(np.linalg.matrix_power(x, 3) * W[:, :3]) + np.sum(np.linalg.matrix_power(x, 0) * W[:, :3])


add("ndarray.trace", l_trace_method, uniform((3, 4)), oracle="none")  # autograd arrays: no .trace
add("numpy.vdot", l_vdot, X34, uniform((3, 4)), oracle="none")  # autograd has no vdot
add("numpy.kron", l_kron, uniform((2, 3)), uniform((3, 2)))
add("numpy.kron", l_kron, uniform((3,)), uniform((2, 2)), oracle="none")
add("numpy.cross", l_cross, uniform((4, 3)), uniform((4, 3)))
# autograd's cross rule does not unbroadcast.
add("numpy.cross", l_cross, uniform((4, 3)), uniform((3,)), oracle="none")
add("numpy.linalg.solve", l_solve, SPD, uniform((3, 2)))
# numpy 2 treats a 1-D b as a vector; autograd treats it as a stack of vectors.
add("numpy.linalg.solve", l_solve, SPD, uniform((3,)), oracle="none")
add("numpy.linalg.solve", l_solve, np.stack([SPD, SPD.T]), uniform((2, 3, 1)))
add("numpy.linalg.cholesky", l_cholesky, uniform((3, 3)))
add("numpy.linalg.eigvalsh", l_eigvalsh, uniform((3, 3)), oracle="none")  # not in autograd
add("numpy.linalg.svdvals", l_svdvals, uniform((3, 4)), oracle="none")  # numpy 2 only
add("numpy.linalg.pinv", l_pinv, uniform((4, 3)))
add("numpy.linalg.matrix_power", l_matrix_power, uniform((3, 3)), oracle="none")


# Rules with several outputs (Rule.outputs): each output read, one left unread, the result indexed.
def l_slogdet(x):
    sign, logdet = np.linalg.slogdet(x)
    return logdet * sign
def l_slogdet_indexed(x): return np.sum(np.linalg.slogdet(x)[1] * V3[:2])
def l_eigh(x):
    w, v = np.linalg.eigh(x)
    return np.sum(w * V3) + np.sum(v[:, 0] ** 4) + np.sum(np.abs(v[:, 2]))
def l_eigh_vectors(x):
    _, v = np.linalg.eigh(x, UPLO="U")
    return np.sum((v * v[0]) ** 2 * W[:, :3])
def l_eigh_kept(x):
    res = np.linalg.eigh(x)
    return np.sum(res[0] ** 3)
def l_svd(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(s * V3) + np.sum(u[:, 0] ** 4) + np.sum(vt[1] ** 4)
def l_svd_values(x): return np.sum(np.linalg.svd(x, compute_uv=False) ** 3)
def l_svd_vectors(x):
    u, _, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum((u @ vt) ** 3)
def l_qr(x):
    q, r = np.linalg.qr(x)
    return np.sum(np.sin(q)) + np.sum(r ** 2 * 0.3)
def l_qr_kept(x):
    res = np.linalg.qr(x)
    return np.sum(res[1] ** 3)
def l_eig(x):
    w, v = np.linalg.eig(x)
    return np.sum(w * V3) + np.sum(v ** 4 * W[:, :3])
def l_eigvals(x): return np.sum(np.sin(np.linalg.eigvals(x)) * V3)
def l_eig_kept(x):
    res = np.linalg.eig(x)
    return np.sum(res[0] ** 3) + np.sum(res[1][..., 0] ** 2 * V3)
def l_cross_axes(x, y): return np.sum(np.sin(np.cross(x, y, axisa=0, axisb=1, axisc=0)))
def l_cross_axis(x, y): return np.sum(np.sin(np.cross(x, y, axis=0)))
def l_cross_two(x, y): return np.sum(np.sin(np.cross(x, y)))


SPD2 = np.stack([SPD @ SPD.T, SPD.T @ SPD + np.eye(3)])
DISTINCT = np.diag([0.5, 1.7, 3.1]) + 0.3 * uniform((3, 3))  # well-separated eigenvalues
add("numpy.linalg.slogdet", l_slogdet, SPD)
add("numpy.linalg.slogdet", l_slogdet, -SPD)
add("numpy.linalg.slogdet", l_slogdet_indexed, SPD2)
# autograd's eigh reads one triangle, as numpy does (the other's adjoint is zero)
add("numpy.linalg.eigh", l_eigh, DISTINCT)
add("numpy.linalg.eigh", l_eigh_vectors, np.ascontiguousarray(DISTINCT.T))
add("numpy.linalg.eigh", l_eigh_kept, np.stack([DISTINCT, DISTINCT.T + np.eye(3)]))
# eig of matrices with real eigenvalues (numpy's result is real then)
add("numpy.linalg.eig", l_eig, DISTINCT)
add("numpy.linalg.eig", l_eig, np.ascontiguousarray(DISTINCT.T) + 0.2 * uniform((3, 3)))
add("numpy.linalg.eigvals", l_eigvals, DISTINCT, oracle="none")  # autograd has no eigvals
add("numpy.linalg.eigvals", l_eigvals, np.stack([DISTINCT, DISTINCT.T + np.eye(3)]), oracle="none")
add("numpy.linalg.eig", l_eig_kept, np.stack([DISTINCT, DISTINCT.T + np.eye(3)]))
add("numpy.linalg.svd", l_svd, uniform((4, 3)))
add("numpy.linalg.svd", l_svd, uniform((3, 5)))
add("numpy.linalg.svd", l_svd_values, uniform((3, 4)))
add("numpy.linalg.svd", l_svd_vectors, uniform((3, 3)))
add("numpy.linalg.qr", l_qr, uniform((4, 3)), oracle="none")  # autograd's qr has no vjp here
add("numpy.linalg.qr", l_qr, uniform((3, 3)), oracle="none")
add("numpy.linalg.qr", l_qr_kept, uniform((2, 4, 3)), oracle="none")
add("numpy.cross", l_cross_axes, uniform((3, 4)), uniform((4, 3)))
add("numpy.cross", l_cross_axis, uniform((3, 5)), uniform((3, 5)))
# autograd's cross does not take 2-vectors
add("numpy.cross", l_cross_two, uniform((4, 2)), uniform((4, 2)), oracle="none")
add("numpy.cross", l_cross_two, uniform((4, 2)), uniform((3,)), oracle="none")


def s_split(x):
    a, b, c = np.split(x, 3, axis=1)
    return np.sum(a * np.sin(c))
def s_split_kept(x):
    parts = np.split(x, [1, 3])
    return np.sum(parts[2] ** 2) + np.sum(parts[0])
def s_array_split(x):
    a, b = np.array_split(x, 2)
    return np.sum(np.sin(a)) + np.sum(b ** 3)
def s_hsplit(x):
    a, b = np.hsplit(x, 2)
    return np.sum(a * b)
def s_vsplit(x):
    a, b, c = np.vsplit(x, 3)
    return np.sum(np.sin(b) * c)
def s_dsplit(x):
    a, b = np.dsplit(x, [1])
    return np.sum(a ** 3) + np.sum(np.cos(b))


add("numpy.split", s_split, uniform((2, 6)))
add("numpy.split", s_split_kept, uniform((5, 2)))
add("numpy.array_split", s_array_split, uniform((5,)))
add("numpy.hsplit", s_hsplit, uniform((3, 4)))
add("numpy.hsplit", s_hsplit, uniform((6,)), oracle="none")  # autograd's hsplit: 2-D and up
add("numpy.vsplit", s_vsplit, uniform((6, 2)))
add("numpy.dsplit", s_dsplit, uniform((2, 2, 3)))


# np.fft: linear, each adjoint the same transform (symmetric matrices), resizing undone
FW = np.cos(np.arange(64.0))
def t_fft(x): return np.sum(np.abs(np.fft.fft(x)) ** 2 * FW[:6]) + np.sum(np.real(np.fft.fft(x, 7)) * FW[:7])
def t_ifft(x): return np.sum(np.imag(np.fft.ifft(x, axis=0, norm="ortho")) ** 3)
def t_rfft(x): return np.sum(np.abs(np.fft.rfft(x)) * FW[:5]) + np.sum(np.imag(np.fft.rfft(x, 10)) * FW[:6])
def t_irfft(x):
    spectrum = np.fft.rfft(x) * (1 + 0.5j)
    return np.sum(np.sin(np.fft.irfft(spectrum)) * FW[:8]) + np.sum(np.fft.irfft(spectrum, 9) ** 2)
def t_fft2(x): return np.sum(np.abs(np.fft.fft2(x, s=(3, 5))) ** 2) * 0.1 + np.sum(np.real(np.fft.ifft2(x)) ** 3)
def t_fftn(x): return np.sum(np.real(np.fft.fftn(x, axes=(0,))) ** 2) + np.sum(np.imag(np.fft.ifftn(x)) ** 3)
def t_rfft2(x): return np.sum(np.abs(np.fft.rfft2(x)) ** 2 * 0.1) + np.sum(np.imag(np.fft.rfft2(x, s=(3, 6))))
def t_rfftn(x): return np.sum(np.real(np.fft.rfftn(x, axes=(0, 1))) ** 3)
def t_irfft2(x): return np.sum(np.sin(np.fft.irfft2(np.fft.rfft2(x) * (1 + 0.5j))))
def t_irfftn(x): return np.sum(np.fft.irfftn(np.fft.rfftn(x) * (0.3 - 1j), s=(4, 6), axes=(0, 1)) ** 2)
def t_shift(x): return np.sum(np.fft.fftshift(x) * FW[:12].reshape(3, 4)) + np.sum(np.fft.ifftshift(x, axes=0) ** 3)


add("numpy.fft.fft", t_fft, uniform((2, 6)))
add("numpy.fft.ifft", t_ifft, uniform((5, 3)))
add("numpy.fft.rfft", t_rfft, uniform((8,)))
# autograd's irfft refuses an odd length
add(("numpy.fft.irfft", "numpy.fft.rfft"), t_irfft, uniform((8,)), oracle="none")
add(("numpy.fft.fft2", "numpy.fft.ifft2"), t_fft2, uniform((4, 4)))
add(("numpy.fft.fftn", "numpy.fft.ifftn"), t_fftn, uniform((3, 4)))
add(("numpy.fft.fftshift", "numpy.fft.ifftshift"), t_shift, uniform((3, 4)))
add("numpy.fft.rfft2", t_rfft2, uniform((4, 6)))
add("numpy.fft.rfftn", t_rfftn, uniform((4, 6, 2)), rtol=1e-4)
add(("numpy.fft.irfft2", "numpy.fft.rfft2"), t_irfft2, uniform((4, 6)))
add(("numpy.fft.irfftn", "numpy.fft.rfftn"), t_irfftn, uniform((4, 6)))


def sp_unary(x):
    return np.sum((special.expit(x) + special.erf(x) * 2.0 + special.erfc(x) * 0.5) * W)
def sp_inverse(x):
    return np.sum((special.logit(x) + special.erfinv(x) * 2.0 + special.erfcinv(x + 0.5)) * W)
def sp_logsumexp(x): return np.sum(special.logsumexp(x, axis=1) * V3) + special.logsumexp(x)
def sp_logsumexp_b(x, b): return np.sum(special.logsumexp(x, axis=0, b=b, keepdims=True) * V4)


add(("scipy.special.expit", "scipy.special.erf", "scipy.special.erfc"), sp_unary, X34, oracle="scipy")
add(("scipy.special.logit", "scipy.special.erfinv", "scipy.special.erfcinv"), sp_inverse,
    uniform((3, 4), 0.1, 0.9), oracle="scipy")
add("scipy.special.logsumexp", sp_logsumexp, X34, oracle="scipy")
# autograd's logsumexp fails with b=.
add("scipy.special.logsumexp", sp_logsumexp_b, X34, uniform((3, 4), 0.5, 1.5), oracle="none")


# ===== containers: lists and index writes ======================================================


def c_list(a, b):
    parts = [a, b]
    parts.append(a * b)
    return np.sum(np.stack(parts) * W) + np.sum(parts[1] ** 2) + np.sum(sum(parts) * W)


def c_setitem(x):
    y = x * 1.0
    y[1] = x[0] ** 2
    y[:, 2] = np.sin(x[:, 1])
    return np.sum(y * W)


add(("list.append", "list.getitem", "builtins.sum"), c_list, uniform((3, 4)), uniform((3, 4)))
add("s2s.setitem", c_setitem, uniform((3, 4)), oracle="none")  # autograd arrays have no setitem


# A loop's per-step products a[t] @ b, computed before the loop (s2sgrad.lower.hoist).
def h_rows(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total = total + np.sum(np.sin(a[t] @ b) * (t + 1.0))
    return total


for _sa, _sb in (((4, 3), (3, 2)), ((4, 2, 3), (3, 2)), ((4, 3), (3,)), ((4, 2, 3), (3,)),
                 ((4, 2, 3), (5, 3, 2)), ((4, 3), (5, 3, 2))):  # the last two: row by row
    add("s2s.rows_matmul", h_rows, uniform(_sa), uniform(_sb))


# The same with the row on the right (b @ a[t]) and with np.dot on either side.
def h_rows_right(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total = total + np.sum(np.sin(b @ a[t]) * (t + 1.0))
    return total


def h_rows_dot(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total = total + np.sum(np.sin(np.dot(a[t], b)) * (t + 1.0))
    return total


def h_rows_rdot(a, b):
    total = 0.0
    for t in range(a.shape[0]):
        total = total + np.sum(np.sin(b.dot(a[t])) * (t + 1.0))
    return total


for _sa, _sb in (((4, 3), (2, 3)), ((4, 3, 2), (5, 3)), ((4, 3), (3,)), ((4, 3, 2), (3,))):
    add("s2s.rows_rmatmul", h_rows_right, uniform(_sa), uniform(_sb))
    add("s2s.rows_rdot", h_rows_rdot, uniform(_sa), uniform(_sb), oracle="none")
for _sa, _sb in (((4, 3), (3, 2)), ((4, 2, 3), (3, 2)), ((4, 3), (3,)), ((4, 2, 3), (5, 3, 2))):
    add("s2s.rows_dot", h_rows_dot, uniform(_sa), uniform(_sb))


# ===== s2sgrad's own runtime helpers (what generated forward-mode code calls) ===================

def r_broadcast(x): return np.sum(s2s.broadcast(x, (3, 4)) * W)
def r_extremum_jvp(t, x): return np.sum(s2s.extremum_jvp(t, np.max(x, axis=1), x, 1) * V3)
def r_safe_power_base(y): return np.sum(s2s.safe_power_base(y) * W)
def r_safe_log_base(x): return np.sum(s2s.safe_log_base(x) * W)
def r_rows_matmul(a, b): return np.sum(np.sin(s2s.rows_matmul(a, 3, b)))
def r_rows_rmatmul(a, b): return np.sum(np.sin(s2s.rows_rmatmul(a, 3, b)))
def r_rows_dot(a, b): return np.sum(np.sin(s2s.rows_dot(a, 3, b)))
def r_rows_rdot(a, b): return np.sum(np.sin(s2s.rows_rdot(a, 3, b)))
def r_slopes(x): return np.sum((s2s.abs_slope(x) + s2s.angle_slope(x, True) + x) * W)


add("s2sgrad.runtime.broadcast", r_broadcast, uniform((4,)), oracle="none")
add("s2sgrad.runtime.broadcast", r_broadcast, uniform((3, 4)), oracle="none")
add("s2sgrad.runtime.extremum_jvp", r_extremum_jvp, uniform((3, 4)), uniform((3, 4)), oracle="none")
add("s2sgrad.runtime.safe_power_base", r_safe_power_base, uniform((3, 4), 0.5, 2.0), oracle="none")
add("s2sgrad.runtime.safe_log_base", r_safe_log_base, uniform((3, 4), 0.2, 2.0), oracle="none")
add("s2sgrad.runtime.rows_matmul", r_rows_matmul, uniform((3, 2)), uniform((2, 4)), oracle="none")
add("s2sgrad.runtime.rows_rmatmul", r_rows_rmatmul, uniform((3, 2)), uniform((4, 2)), oracle="none")
add("s2sgrad.runtime.rows_dot", r_rows_dot, uniform((3, 2)), uniform((2, 4)), oracle="none")
add("s2sgrad.runtime.rows_rdot", r_rows_rdot, uniform((3, 2)), uniform((4, 2)), oracle="none")
add(("s2sgrad.runtime.abs_slope", "s2sgrad.runtime.angle_slope"), r_slopes, uniform((3, 4)),
    oracle="none")  # piecewise constant for real values (tests/rules/test_rules_complex.py: complex)

# the rules of the helpers generated reverse-mode code calls: tests/rules/helper_rule_cases/<banner>.py
for _rules, _fn, _args, _argnums, _rtol in all_cases():
    add(_rules, _fn, *_args, argnums=_argnums, oracle="none", rtol=_rtol)

# ===== scipy.special: the gamma and Bessel families (their derivatives call runtime/special.py) ==

def sp_gamma_family(x):
    return np.sum((special.gammaln(x) + special.gamma(x) * 0.5 + special.rgamma(x) + special.digamma(x)
                   + special.psi(x) * 0.3 + special.polygamma(2, x) * 0.1) * W)
def sp_beta(a, b): return np.sum((special.beta(a, b) + special.betaln(a, b) * 2.0) * W)
def sp_multigammaln(a): return np.sum(special.multigammaln(a, 3) * W)
def sp_bessel_i(x): return np.sum((special.i0(x) + special.i1(x) + special.iv(1.5, x) + special.ive(2, x)) * W)
def sp_bessel_jy(x):
    return np.sum((special.j0(x) + special.j1(x) + special.jv(2.5, x) + special.jn(2, x) + special.y0(x)
                   + special.y1(x) + special.yv(1.5, x) + special.yn(2, x)) * W)
def sp_bessel_ie(x): return np.sum((special.i0e(x) + special.i1e(x) + special.ive(1, x)) * W)


_S = "scipy.special."
add([_S + n for n in ("gammaln", "gamma", "rgamma", "digamma", "psi", "polygamma")], sp_gamma_family,
    uniform((3, 4), 0.5, 3.0))
add((_S + "beta", _S + "betaln"), sp_beta, uniform((3, 4), 0.5, 3.0), uniform((4,), 0.5, 3.0))
add(_S + "multigammaln", sp_multigammaln, uniform((3, 4), 1.5, 4.0))
add([_S + n for n in ("i0", "i1", "iv", "ive")], sp_bessel_i, uniform((3, 4), 0.3, 3.0))
add([_S + n for n in ("j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn")], sp_bessel_jy, uniform((3, 4), 0.5, 4.0),
    oracle="none")  # autograd has no jv, yv
add([_S + n for n in ("i0e", "i1e", "ive")], sp_bessel_ie, uniform((3, 4), -3.0, 3.0), oracle="none")

def sp_normal(x): return np.sum((special.ndtr(x) + special.log_ndtr(x) * 2.0 + special.ndtri(special.ndtr(x))) * W)
def sp_xlogy(x, y):
    return np.sum((special.xlogy(x, y) + special.xlog1py(x, y) + special.rel_entr(x, y) + special.kl_div(x, y)
                   + special.entr(x)) * W)
def sp_softmax(x):
    return np.sum(np.sin(special.softmax(x, axis=1)) * W) + np.sum(special.log_softmax(x, axis=0) * W) \
        + np.sum(special.softmax(x) * W) + np.sum(special.log_softmax(x) ** 2)


add([_S + n for n in ("ndtr", "log_ndtr", "ndtri")], sp_normal, uniform((3, 4), -2.0, 2.0), oracle="none")
add([_S + n for n in ("xlogy", "xlog1py", "rel_entr", "kl_div", "entr")], sp_xlogy, uniform((3, 4), 0.2, 2.0),
    uniform((4,), 0.2, 2.0), oracle="none")  # autograd has none of these
add((_S + "softmax", _S + "log_softmax"), sp_softmax, uniform((3, 4), -2.0, 2.0), oracle="none")
def sp_incomplete(x):
    return np.sum((special.gammainc(2.5, x) + special.gammaincc(1.5, x) * 2.0
                   + special.betainc(2.5, 1.7, x / 2.0)) * W)


add([_S + n for n in ("gammainc", "gammaincc", "betainc")], sp_incomplete, uniform((3, 4), 0.2, 1.8))

# ===== scipy.stats: densities, distribution functions and masses with loc and scale ===========

def st_norm(x, loc, scale):
    return np.sum((stats.norm.logpdf(x, loc, scale) + stats.norm.pdf(x, loc, scale) + stats.norm.cdf(x, loc, scale)
                   + stats.norm.logcdf(x, loc, scale) + stats.norm.sf(x, loc, scale)
                   + stats.norm.logsf(x, loc, scale)) * W)
def st_norm_standard(x): return np.sum((stats.norm.logpdf(x) + stats.norm.cdf(x) + stats.norm.logsf(x)) * W)
def st_t(x, df, loc, scale): return np.sum((stats.t.logpdf(x, df, loc, scale) + stats.t.pdf(x, df, loc, scale)) * W)
def st_gamma(x, a, loc, scale):
    return np.sum((stats.gamma.logpdf(x, a, loc, scale) + stats.gamma.pdf(x, a, loc, scale)) * W)
def st_beta(x, a, b, loc, scale):
    return np.sum((stats.beta.logpdf(x, a, b, loc, scale) + stats.beta.pdf(x, a, b, loc, scale)) * W)
def st_chi2(x, df, loc, scale):
    return np.sum((stats.chi2.logpdf(x, df, loc, scale) + stats.chi2.pdf(x, df, loc, scale)) * W)
def st_poisson(mu): return np.sum((stats.poisson.logpmf(COUNTS, mu) + stats.poisson.pmf(COUNTS, mu, 1)) * W)


COUNTS = np.array([[1, 3, 0, 2], [4, 1, 2, 2], [3, 5, 1, 6]])
_N = "scipy.stats.norm."
add([_N + n for n in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")], st_norm, uniform((3, 4), -2.0, 2.0),
    uniform((4,), -0.5, 0.5), uniform(None, 0.8, 1.5))
add([_N + n for n in ("logpdf", "cdf", "logsf")], st_norm_standard, uniform((3, 4), -2.0, 2.0))
add(("scipy.stats.t.logpdf", "scipy.stats.t.pdf"), st_t, uniform((3, 4), -2.0, 2.0), uniform(None, 2.0, 5.0),
    uniform(None, -0.5, 0.5), uniform(None, 0.8, 1.5))
add(("scipy.stats.gamma.logpdf", "scipy.stats.gamma.pdf"), st_gamma, uniform((3, 4), 1.0, 3.0),
    uniform(None, 1.5, 3.0), uniform(None, 0.0, 0.5), uniform((4,), 0.8, 1.5), oracle="none")
add(("scipy.stats.beta.logpdf", "scipy.stats.beta.pdf"), st_beta, uniform((3, 4), 0.2, 0.7),
    uniform(None, 1.5, 3.0), uniform(None, 1.5, 3.0), uniform(None, 0.0, 0.1), uniform(None, 0.9, 1.1),
    oracle="none")
add(("scipy.stats.chi2.logpdf", "scipy.stats.chi2.pdf"), st_chi2, uniform((3, 4), 1.0, 3.0),
    uniform(None, 2.5, 5.0), uniform(None, 0.0, 0.5), uniform(None, 0.8, 1.5), oracle="none")
add(("scipy.stats.poisson.logpmf", "scipy.stats.poisson.pmf"), st_poisson, uniform((3, 4), 1.0, 4.0),
    oracle="none")

def st_cdfs(x, loc, scale):
    return np.sum((stats.t.cdf(x, 3.5, loc, scale) + stats.t.logcdf(x, 3.5, loc, scale)
                   + stats.gamma.cdf(x + 1.0, 2.5, loc, scale) + stats.chi2.cdf(x + 1.0, 3.5, loc, scale)
                   + stats.beta.cdf(0.5 * x + 0.5, 2.5, 1.7, loc * 0.1, scale)) * W)
def st_poisson_cdf(mu): return np.sum((stats.poisson.cdf(COUNTS + 0.5, mu) + stats.poisson.cdf(COUNTS, mu, 1)) * W)


add(["scipy.stats." + n for n in ("t.cdf", "t.logcdf", "gamma.cdf", "chi2.cdf", "beta.cdf")], st_cdfs,
    uniform((3, 4), 0.1, 0.6), uniform((4,), -0.1, 0.1), uniform(None, 1.0, 1.3),
    oracle="none")  # autograd differentiates these in x alone, and poisson's without loc
add("scipy.stats.poisson.cdf", st_poisson_cdf, uniform((3, 4), 1.0, 4.0), oracle="none")

# ===== scipy.stats' multivariate densities: dirichlet and multivariate_normal =====================

def st_dirichlet(x, alpha):  # x: K - 1 components along the first axis (scipy completes the last)
    return np.sum(np.sin(stats.dirichlet.logpdf(x, alpha)) + stats.dirichlet.pdf(x, alpha) * 0.1)
def st_dirichlet_vector(x, alpha):  # all K components, normalized (autograd reads them so)
    xn = x / np.sum(x)
    return stats.dirichlet.logpdf(xn, alpha) + stats.dirichlet.pdf(xn, alpha) * 0.1
def st_mvn(x, mean, cov):  # cov made symmetric first: autograd's rule reads the whole matrix
    c = 0.5 * (cov + cov.T) + 3.0 * np.eye(4)
    return np.sum(np.sin(stats.multivariate_normal.logpdf(x, mean, c))
                  + stats.multivariate_normal.pdf(x, mean, c) * 10.0)
def st_mvn_forms(x, mean, cov):  # scipy reads a matrix's lower triangle, a vector as a diagonal
    c = cov + 3.0 * np.eye(4)
    return np.sum(np.cos(stats.multivariate_normal.logpdf(x, mean, c))) \
        + np.sum(stats.multivariate_normal.logpdf(x, mean, np.diag(c) ** 2)) \
        + np.sum(stats.multivariate_normal.pdf(x, mean=mean, cov=c[0, 0] ** 2 + 1.0, allow_singular=True))


def st_mvn_entropy(cov):
    c = cov @ cov.T + np.eye(3)
    return stats.multivariate_normal.entropy(None, c) * stats.multivariate_normal.entropy(cov=c[0, 0] + 1.0) \
        + stats.multivariate_normal.entropy(V3, np.diag(c) ** 2)


_D, _MV = "scipy.stats.dirichlet.", "scipy.stats.multivariate_normal."
add(_MV + "entropy", st_mvn_entropy, uniform((3, 3)), oracle="none")  # autograd: whole-matrix cov only
add((_D + "logpdf", _D + "pdf"), st_dirichlet, uniform((2, 4), 0.1, 0.45), uniform((3,), 0.8, 3.0), oracle="none")
add((_D + "logpdf", _D + "pdf"), st_dirichlet, uniform((2,), 0.1, 0.45), uniform((3,), 0.8, 3.0), oracle="none")
add((_D + "logpdf", _D + "pdf"), st_dirichlet_vector, uniform((3,), 0.2, 1.0), uniform((3,), 0.8, 3.0))
add((_MV + "logpdf", _MV + "pdf"), st_mvn, uniform((5, 4)), uniform((4,)), uniform((4, 4)))
add((_MV + "logpdf", _MV + "pdf"), st_mvn, uniform((4,)), uniform((4,)), uniform((4, 4)))
add((_MV + "logpdf", _MV + "pdf"), st_mvn_forms, uniform((2, 3, 4)), uniform((4,)), uniform((4, 4)),
    oracle="none")  # autograd's cov gradient is symmetric, not the lower triangle's


# ===== scipy.signal.convolve: every mode, 1-D and n-D, either operand the larger =================

def sig_convolve(a, b):
    return (np.sum(np.sin(signal.convolve(a, b))) + np.sum(signal.convolve(a, b, mode="valid") ** 2)
            + np.sum(np.cos(signal.convolve(a, b, "same"))))
def sig_convolve_autograd(a, b):  # autograd's has no "same", and its third parameter is axes
    return np.sum(np.sin(signal.convolve(a, b))) + np.sum(signal.convolve(a, b, mode="valid") ** 2)


add("scipy.signal.convolve", sig_convolve_autograd, uniform((5,)), uniform((3,)))
add("scipy.signal.convolve", sig_convolve_autograd, uniform((3, 2)), uniform((4, 5)))
for _n, _m in (((5,), (3,)), ((3,), (6,)), ((4, 5), (2, 3)), ((2, 3, 4), (2, 2, 2))):
    add("scipy.signal.convolve", sig_convolve, uniform(_n), uniform(_m), oracle="none")  # autograd: no "same"


# ===== scipy.linalg: solve_sylvester, sqrtm, solve_triangular, solve_banded===================================

def sl_sylvester(a, b, q):
    return np.sum(np.sin(scipy_linalg.solve_sylvester(a + 3.0 * np.eye(3), b + 2.0 * np.eye(2), q)))
def sl_sqrtm(a): return np.sum(np.sin(scipy_linalg.sqrtm(a @ a.T + np.eye(3))) * W[:, :3])
def sl_triangular(a, b):
    t = a + 3.0 * np.eye(3)
    return (np.sum(np.sin(scipy_linalg.solve_triangular(t, b, lower=True)))
            + np.sum(scipy_linalg.solve_triangular(t, b[:, 0], trans=1) ** 2)
            + np.sum(np.cos(scipy_linalg.solve_triangular(t, b, trans="T", lower=True, unit_diagonal=True))))


add("scipy.linalg.solve_sylvester", sl_sylvester, uniform((3, 3)), uniform((2, 2)), uniform((3, 2)), oracle="none")
add("scipy.linalg.sqrtm", sl_sqrtm, uniform((3, 3)), oracle="none")  # autograd's twin reads scipy.linalg
add("scipy.linalg.solve_triangular", sl_triangular, uniform((3, 3)), uniform((3, 2)), oracle="none")


def sl_banded(ab, b):  # (l, u) = (1, 2): the corners of ab hold no entry (their adjoint is zero)
    ab = ab + np.array([[0.0], [0.0], [4.0], [0.0]])
    return (np.sum(np.sin(scipy_linalg.solve_banded((1, 2), ab, b)))
            + np.sum(scipy_linalg.solve_banded((1, 2), ab, b[:, 0]) ** 2)
            + np.sum(np.cos(scipy_linalg.solve_banded((0, 0), ab[2:3] * 2.0, b))))


add("scipy.linalg.solve_banded", sl_banded, uniform((4, 5)), uniform((5, 2)), oracle="none")  # autograd: none


# ===== np.convolve and np.correlate: each mode, either operand the longer ========================

def np_convolve_modes(a, v):
    return (np.sum(np.sin(np.convolve(a, v))) + np.sum(np.convolve(a, v, "same") ** 2)
            + np.sum(np.cos(np.convolve(a, v, mode="valid"))))
def np_correlate_modes(a, v):
    return (np.sum(np.sin(np.correlate(a, v, "full"))) + np.sum(np.correlate(a, v, "same") ** 2)
            + np.sum(np.cos(np.correlate(a, v))))


for _n, _m in ((5, 3), (4, 6), (2, 5)):
    add("numpy.convolve", np_convolve_modes, uniform((_n,)), uniform((_m,)), oracle="none")  # autograd has none
    add("numpy.correlate", np_correlate_modes, uniform((_n,)), uniform((_m,)), oracle="none")


# ===== np.gradient: spacings as numbers or coordinates, edge orders, one axis or several ==========

COORDS7 = np.cumsum(uniform((7,), 0.2, 1.0))
def np_gradient_plain(f): return np.sum(np.sin(np.gradient(f)) ** 2)
def np_gradient_axis(f): return np.sum(np.cos(np.gradient(f, axis=-1)) * W)
def np_gradient_1d(f): return np.sum(np.gradient(f, 0.3, edge_order=2) ** 2 + np.gradient(f, COORDS7) ** 3
                                    + np.gradient(f, COORDS7, edge_order=2))
def np_gradient_axes(f):
    dy, dx = np.gradient(f, 0.5, 2.0)
    return np.sum(dy ** 2 * dx) + np.sum(np.gradient(f, axis=0, edge_order=2) ** 2)


add("numpy.gradient", np_gradient_plain, uniform((7,)))
add("numpy.gradient", np_gradient_axis, uniform((3, 4)))
# autograd differentiates np.gradient at its default spacing and edge order only
add("numpy.gradient", np_gradient_1d, uniform((7,)), oracle="none")
add("numpy.gradient", np_gradient_axes, uniform((4, 5)), oracle="none")


# ===== the tests ===============================================================================

_MATH = types.SimpleNamespace(
    sin=anp.sin, cos=anp.cos, tan=anp.tan, asin=anp.arcsin, acos=anp.arccos, atan=anp.arctan,
    sinh=anp.sinh, cosh=anp.cosh, tanh=anp.tanh, asinh=anp.arcsinh, acosh=anp.arccosh,
    atanh=anp.arctanh, exp=anp.exp, expm1=anp.expm1, log2=anp.log2, log10=anp.log10,
    log1p=anp.log1p, sqrt=anp.sqrt, fabs=anp.abs, exp2=anp.exp2, radians=anp.radians,
    degrees=anp.degrees, pow=anp.power, hypot=anp.hypot, atan2=anp.arctan2,
    log=lambda x, base=None: anp.log(x) if base is None else anp.log(x) / anp.log(base),
)


def _oracle_twin(fn, math_too):
    """``fn`` with ``np`` (and ``math``) bound to autograd.numpy, for autograd to run."""
    namespace = dict(fn.__globals__, np=anp, special=aspecial, stats=astats, signal=asignal)
    if math_too:
        namespace["math"] = _MATH
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


# One transform per function: the cases of a function share its generated gradient (assert_gradients
# transforms on every call, which would make this file several times slower). The comparisons are
# the ones assert_gradients makes: central differences with conftest's numerical_grad, and autograd.
GROUPS: dict = {}
for _case in CASES:
    GROUPS.setdefault((_case.fn, _case.argnums), []).append(_case)
GROUP_IDS = [f"{fn.__name__}{'' if len(nums) == 1 else nums}" for fn, nums in GROUPS]


def _check_case(gradient, case):
    got = gradient(*case.args)
    for k, i in enumerate(case.argnums):
        assert np.shape(got[k]) == np.shape(case.args[i]), f"argument {i}: shape {np.shape(got[k])}"
        if isinstance(case.args[i], float):
            assert type(got[k]) is float, f"argument {i}: {type(got[k])} for a Python float"
        else:
            assert got[k].dtype == case.args[i].dtype, f"argument {i}: dtype {got[k].dtype}"
        if case.oracle != "autograd_only":
            np.testing.assert_allclose(got[k], numerical_grad(case.fn, case.args, i),
                                       rtol=case.rtol, atol=1e-6,
                                       err_msg=f"argument {i} vs finite differences")
    if case.oracle != "none":
        twin = _oracle_twin(case.fn, math_too=case.oracle == "math")
        want = autograd.grad(twin, case.argnums)(*case.args)
        for k, i in enumerate(case.argnums):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-7, atol=1e-10,
                                       err_msg=f"argument {i} vs autograd")
    return got


def _check_float32(gradient, case, want):
    """float32 in, float32 out, and the float64 gradient up to float32 rounding."""
    args32 = tuple(a.astype(np.float32) for a in case.args)
    got = gradient(*args32)
    for k, i in enumerate(case.argnums):
        assert got[k].dtype == np.float32, f"argument {i}: {got[k].dtype} for float32"
        scale = max(float(np.max(np.abs(want[k]))), 1.0)
        np.testing.assert_allclose(got[k], want[k], rtol=1e-3, atol=1e-3 * scale,
                                   err_msg=f"argument {i} in float32")


@pytest.mark.parametrize("key", list(GROUPS), ids=GROUP_IDS)
def test_rule(key):
    fn, argnums = key
    try:
        fn(*GROUPS[key][0].args)
    except AttributeError as exc:  # math.exp2 before Python 3.11, np.row_stack after numpy 2.4
        pytest.skip(f"not in this Python or numpy: {exc}")
    gradient = s2sgrad.grad(fn, argnums=argnums)
    for case in GROUPS[key]:
        want = _check_case(gradient, case)
        if all(isinstance(a, np.ndarray) for a in case.args):
            _check_float32(gradient, case, want)


@pytest.mark.parametrize("key", list(GROUPS), ids=GROUP_IDS)
def test_case_reaches_its_rules(key):
    fn, _ = key
    unit = from_function(fn)
    parsed = parse_module(unit.text, unit.path)  # cached: the module is parsed once
    node = next(n for n in parsed.module.body if isinstance(n, cst.FunctionDef) and n.name.value == fn.__name__)
    core = lower(ParsedFunction(unit, parsed, node), DEFAULT_TABLE)
    claimed = {r for case in GROUPS[key] for r in case.rules}
    missing = claimed - {s.prim.op for s in flatten(core.body)}
    assert not missing, f"{fn.__name__} does not call {sorted(missing)}"


def test_every_rule_is_tested():
    tested = {r for c in CASES for r in c.rules}
    assert tested == set(DEFAULT_TABLE.rules), (
        f"rules without a test: {sorted(set(DEFAULT_TABLE.rules) - tested)}; "
        f"tests of unknown rules: {sorted(tested - set(DEFAULT_TABLE.rules))}")


# ===== forward mode, rule by rule ================================================================
# Every rule has both modes or says why not (Rule.reverse_only): each case's function, in forward
# mode with respect to its differentiated arguments, gives the directional derivative along a
# random tangent, checked against central differences along it and against <reverse gradient, t>.

def _forward_function(fn, wrt):
    from s2sgrad.pipeline import generate_jvp

    generated = generate_jvp(from_function(fn), wrt)
    namespace = dict(fn.__globals__)
    exec(compile(generated.text, f"<jvp of {fn.__name__}>", "exec"), namespace)
    jvp_fn = namespace[generated.names.fwd]
    names = list(inspect.signature(jvp_fn).parameters)
    return jvp_fn, names[len(names) - len(wrt):]


def _directional_difference(fn, args, argnums, tangents, eps=1e-6):
    def at(sign):
        moved = list(args)
        for i, t in zip(argnums, tangents):
            moved[i] = args[i] + sign * eps * t
        return fn(*moved)
    return (at(1.0) - at(-1.0)) / (2 * eps)


@pytest.mark.slow  # 756 forward-mode generations (~50 s on two cores): the slow tier, in CI too
@pytest.mark.parametrize("key", list(GROUPS), ids=GROUP_IDS)
def test_rule_forward(key):
    fn, argnums = key
    case = GROUPS[key][0]
    try:
        fn(*case.args)
    except AttributeError as exc:
        pytest.skip(f"not in this Python or numpy: {exc}")
    params = list(inspect.signature(fn).parameters)
    wrt = tuple(params[i] for i in argnums)
    rules = [DEFAULT_TABLE.get(r) for r in case.rules]
    if any(rule.tangent_route == "" for rule in rules):
        for rule in rules:
            assert rule.tangent_route or rule.reverse_only, f"{rule.name}: no tangent route and no reason"
        with pytest.raises(s2sgrad.TransformError):
            _forward_function(fn, wrt)
        return
    jvp_fn, tangent_names = _forward_function(fn, wrt)
    rng = np.random.default_rng(7)
    gradient = s2sgrad.grad(fn, argnums=argnums)
    for case in GROUPS[key]:
        tangents = [float(rng.uniform(-1, 1)) if isinstance(case.args[i], float) else
                    rng.uniform(-1.0, 1.0, np.shape(case.args[i])).astype(case.args[i].dtype)
                    for i in argnums]
        value, tangent = jvp_fn(*case.args, **dict(zip(tangent_names, tangents)))
        np.testing.assert_allclose(value, fn(*case.args), rtol=1e-12)
        grads = gradient(*case.args)
        dot = sum(np.sum(np.real(np.conj(g) * t)) if np.iscomplexobj(g) else np.sum(g * t)
                  for g, t in zip(grads, tangents))
        np.testing.assert_allclose(tangent, dot, rtol=1e-7, atol=1e-9, err_msg="vs <grad, t>")
        if case.oracle == "autograd_only":  # differences cannot see it (inf, nan, a kink)
            continue
        np.testing.assert_allclose(tangent, _directional_difference(fn, case.args, argnums, tangents),
                                   rtol=case.rtol, atol=1e-6, err_msg="vs central differences")


def _sublists_loss(x, y):
    return np.sum(np.einsum(x, [0, 1], y, [1, 2], [0, 2]) ** 2 * V4)


def _sublists_ellipsis_loss(x, y):
    return np.sum(np.einsum(x, [..., 0, 1], y, [1, 2], [..., 0, 2]) ** 2 * V4)


def test_einsum_interleaved_form_second_order():
    # read as the subscripts form, its second derivatives are the subscripts form's (hvp: forward
    # mode over the generated gradient, whose einsum helpers have rules of their own): against
    # autograd, and (with `...`, where autograd's second order fails) differences of gradients
    x, y = uniform((3, 5)), uniform((5, 4))
    tx, ty = uniform((3, 5)), uniform((5, 4))
    got = s2sgrad.hvp(_sublists_loss, (x, y), (tx, ty))
    twin = types.FunctionType(_sublists_loss.__code__, dict(_sublists_loss.__globals__, np=anp))
    for i, g in enumerate(got):
        gradient = autograd.grad(twin, i)
        want = sum(autograd.make_jvp(gradient, argnum=j)(x, y)(t)[1] for j, t in enumerate((tx, ty)))
        np.testing.assert_allclose(g, want, rtol=1e-10)
    x, tx = uniform((2, 3, 5)), uniform((2, 3, 5))
    got = s2sgrad.hvp(_sublists_ellipsis_loss, (x, y), (tx, ty))
    gradient = s2sgrad.grad(_sublists_ellipsis_loss, argnums=(0, 1))
    eps = 1e-6
    plus, minus = gradient(x + eps * tx, y + eps * ty), gradient(x - eps * tx, y - eps * ty)
    for g, p, m in zip(got, plus, minus):
        np.testing.assert_allclose(g, (p - m) / (2 * eps), rtol=1e-6, atol=1e-8)


def _spec_in_a_name(spec, y): return np.sum(np.einsum(spec, [0, 1], y, [1, 2]))


def test_einsum_of_a_string_in_a_name_and_int_lists_is_refused_when_it_runs_never_misread():
    # np.einsum(spec, [0, 1], y, [1, 2]) is the subscripts form when spec is a string: the
    # lowering, which cannot see it, reads the interleaved form, and the helper refuses it then
    with pytest.raises(UsageError, match="interleaved"):
        s2sgrad.grad(_spec_in_a_name, argnums=1)("i,ij,j", uniform((2, 2)))
