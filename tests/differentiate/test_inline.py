"""Folding single-use forward temporaries (s2sgrad.differentiate.inline): substitution keeps the
meaning of every expression, and the forward sweep reads like the user's statement."""

import copy
import types

import libcst as cst

import numpy as np
import pytest
from conftest import assert_gradients

import s2sgrad
from s2sgrad import runtime as s2s
from s2sgrad.differentiate.inline import substitute

VALUES = {"x": 1.7, "y": -0.6, "z": 2.3}


@pytest.mark.parametrize("outer", ["-a", "a * b", "a ** b", "b ** a", "a - b", "b - a", "a / b",
                                   "b / a", "a @ b", "a < b", "not a", "f(a, k=b)", "a.real",
                                   "(a)", "a[0]", "a if b else 0.0", "b if a else 0.0", "0.0 if b else a",
                                   "a and b", "b or a", "not a and b", "a + b * a"])
@pytest.mark.parametrize("inner", ["x - y", "x * y", "-x", "x ** 2", "x / y - z", "x < y",
                                   "x if y else z", "x or y", "x and y", "not x", "g(x)", "x ** -y",
                                   "2", "(x + y)"])
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # ``2[0]``, ``2.real``: compared as errors
def test_substitution_keeps_the_meaning(outer, inner):
    text = cst.Module([]).code_for_node(substitute(
        cst.parse_expression(outer),
        {"a": cst.parse_expression(inner), "b": cst.parse_expression("z + 0.5")}))
    scope = {"np": np, "f": lambda p, k: p * 3 + k, "g": lambda p: p + 1, "M": _Vec}
    scope.update({k: _Vec(v) for k, v in VALUES.items()})
    direct = f"(lambda a, b: {outer})(({inner}), (z + 0.5))"
    try:
        expected = eval(direct, scope)
    except Exception as error:  # the same error both ways
        with pytest.raises(type(error)):
            eval(text, scope)
        return
    got = eval(text, scope)
    np.testing.assert_allclose(np.asarray(got, dtype=complex), np.asarray(expected, dtype=complex))


class _Vec(float):
    """A float that also knows ``@`` (as ``*``) and ``[0]`` (itself), for the table above."""

    def __matmul__(self, other):
        return _Vec(float(self) * other)

    def __rmatmul__(self, other):
        return _Vec(other * float(self))

    def __getitem__(self, index):
        return self


def chain(x):
    return np.sum(np.tanh(x) * np.exp(-x**2) + np.sin(x) ** 2)


def two_statements(x):
    a = np.sin(x) * 2.0
    b = np.cos(a) + x
    return np.sum(b * b)


def test_forward_folds_values_the_backward_does_not_read():
    code = s2sgrad.source(s2sgrad.grad(chain))
    forward = code.split("def chain_fwd")[1].split("def chain_bwd")[0]
    assert "np.exp(-(x**2))" in forward
    assert "np.sum(tanh_x * exp_neg_x_pow_2 + sin_x**2)" in forward
    assert_gradients(chain, np.linspace(-1, 1, 5))


def test_folds_stay_within_one_source_statement():
    code = s2sgrad.source(s2sgrad.grad(two_statements))
    forward = code.split("def two_statements_fwd")[1].split("def two_statements_bwd")[0]
    assert "a = np.sin(x) * 2.0" in forward  # a has its own line, as the user wrote it
    assert_gradients(two_statements, np.linspace(-1, 1, 5))


# ----- folding generated lines (s2sgrad.differentiate.fold) --------------------------------------

from collections import Counter  # noqa: E402

from s2sgrad.differentiate.fold import fold  # noqa: E402
from s2sgrad.program import Nest, Simple, lift, render  # noqa: E402


def _folded(code, outside=Counter(), scalars=frozenset()):
    """fold over the IR of ``code`` (lines as text), rendered back to lines."""
    return render(fold(list(lift(code)), outside, scalars), "")


@pytest.mark.parametrize("code, expected", [
    (["a = x * 2", "b = np.sin(a)"], ["b = np.sin(x * 2)"]),
    (["a = math.sin(x)", "c = 0.9 * x", "b = c + a"], ["b = 0.9 * x + math.sin(x)"]),  # math is pure
    (["a = x + 1", "b = a * y", "c = -b"], ["b = (x + 1) * y", "c = -b"]),  # b: read outside too
    (["a = x + 1", "e = a * y", "c = -e"], ["c = -((x + 1) * y)"]),
    (["a = x * 2", "g += a"], ["g += x * 2"]),
    (["a = x * 2", "g[1:] += a"], ["g[1:] += x * 2"]),
    # read twice, or also by the caller: stays
    (["a = x * 2", "b = a * a"], ["a = x * 2", "b = a * a"]),
    # a comment (another source statement) between: stays
    (["a = x * 2", "# next", "b = np.sin(a)"], ["a = x * 2", "# next", "b = np.sin(a)"]),
    # an in-place update of what it reads between: stays; of something else: folds past it
    (["a = g * 2", "g += 1.0", "b = np.sin(a)"], ["a = g * 2", "g += 1.0", "b = np.sin(a)"]),
    (["a = g * 2", "g[1:] += 1.0", "b = np.sin(a)"], ["a = g * 2", "g[1:] += 1.0", "b = np.sin(a)"]),
    (["a = x * 2", "g[1:] += 1.0", "b = np.sin(a)"], ["g[1:] += 1.0", "b = np.sin(x * 2)"]),
    # random numbers and other calls are never moved
    (["a = np.random.normal()", "b = a * x"], ["a = np.random.normal()", "b = a * x"]),
    (["a = f(x)", "b = a * x"], ["a = f(x)", "b = a * x"]),
    (["a = x * 2", "t.append(x)", "b = a * x"], ["a = x * 2", "t.append(x)", "b = a * x"]),
    # an index: folds into an assignment's target, not into an in-place update's
    (["i = k + 1", "g[i] = 2.0"], ["g[k + 1] = 2.0"]),
    (["i = k + 1", "g[i] += 2.0"], ["i = k + 1", "g[i] += 2.0"]),
    # rebinding what it reads between: stays
    (["a = x * 2", "x = y", "b = a + x"], ["a = x * 2", "x = y", "b = a + x"]),
    # nested blocks fold inside, never across
    (["a = x * 2", Nest("for i in t:", ("c = i * 3", "d = np.cos(c)")), "b = a + 1"],
     ["a = x * 2", Nest("for i in t:", ("d = np.cos(i * 3)",)), "b = a + 1"]),
    # the sign joins a constant factor
    (["a = -x", "b = a * 2 * y"], ["b = x * -2 * y"]),
    (["a = g * t * e", "b = -a * 2 * y"], ["b = g * -2 * t * e * y"]),  # exact: a power of two
    # a value the next update of the same name replaces: one line, a common factor taken out
    (["v = g * np.cos(x)", "v = v + g * 0.9", "b = v"], ["b = g * (np.cos(x) + 0.9)"]),
    (["v = g * 2", "v += y * z", "b = v"], ["b = g * 2 + y * z"]),
    (["v = g * 2", "v -= y + z", "b = v"], ["b = g * 2 - (y + z)"]),
    # read in between, or updated in place: stays
    (["v = g * 2", "w = v", "v = v + y", "b = v + w"],
     ["v = g * 2", "w = v", "v = v + y", "b = v + w"]),
    (["v = g * 2", "v[1:] += y", "b = v"], ["v = g * 2", "v[1:] += y", "b = v"]),
])
def test_fold(code, expected):
    outside = Counter({"b": 1, "d": 1})
    assert _folded(code, outside) == render(lift(expected), "")


def test_fold_keeps_known_scalars_inside_sums():
    code = ["v = s * a", "v = v + s * b", "c = v"]
    assert _folded(code, Counter({"c": 1}), frozenset({"s"})) == ["c = s * a + s * b"]


@pytest.mark.parametrize("expr, expected", [
    ("-(-a) * b", "a * b"),
    ("-(-(a + b)) * c", "(a + b) * c"),
    ("(-(-a)) ** 2", "(a) ** 2"),
    ("g * a * (1.0 - t * t)", "g * (1.0 - t * t) * a"),
    ("g * -2 * a * (b + c)", "g * -2 * (b + c) * a"),
    ("(b + c) * a", "(b + c) * a"),
    # two numbers added or subtracted (an order a template shifts): one literal, parentheses kept
    ("s2s.iv(0.5 - 1, a)", "s2s.iv(-0.5, a)"),
    ("(1 - 2) ** 2 * a", "(-1) ** 2 * a"),
    ("a - (1 - 3)", "a - (-2)"),
    # powers of two of one product multiplied into one (exact), none where they make 1: the
    # adjoint of 0.5 * r ** 2 reaching r; a number that is not one stays where it is
    ("g * 0.5 * 2 * c", "g * c"),
    ("g * 0.5 * 0.3 * 2 * c", "g * 0.3 * c"),
    ("g * a * -2 * 4 * c", "g * -8 * a * c"),
    ("g * 0.5 * 2", "g"),
    ("g * 0.3 * 2 * c", "g * 2 * 0.3 * c"),
    # a negation added is a subtraction (exact): one pass fewer
    ("a + -b * c", "a - b * c"),
    ("a - -b", "a + b"),
    ("a + -(b + c) * g", "a - (b + c) * g"),
    ("a + -2 * b", "a + -2 * b"),  # a negative number stays a factor
    # a linear helper's exact factors join those of the product it leads (a square root's 0.5
    # and a square's 2 over a sum's spread: the distance's adjoint); kept inside where the
    # product has none (the scaling would move to the larger array), or where it is not exact
    ("s2s.sum_vjp(r_bar * 0.5 / r, d, 1) * 2 * d", "s2s.sum_vjp(r_bar / r, d, 1) * d"),
    ("s2s.sum_vjp(g * 0.5 * m, v, 1) * 2 * v", "s2s.sum_vjp(g * m, v, 1) * v"),
    ("s2s.unbroadcast(g / 4, s) * 2 * x", "s2s.unbroadcast(g, s) * 0.5 * x"),
    ("s2s.sum_vjp(g * 0.5, v, 1) * v", "s2s.sum_vjp(g * 0.5, v, 1) * v"),
    ("s2s.sum_vjp(g * 0.3, v, 1) * 2 * v", "s2s.sum_vjp(g * 0.3, v, 1) * 2 * v"),
    ("np.exp(g * 0.5) * 2 * v", "np.exp(g * 0.5) * 2 * v"),  # not linear
])
def test_simplify_products(expr, expected):
    from s2sgrad.differentiate.simplify import simplify

    node = simplify(cst.parse_expression(expr))
    assert cst.Module([]).code_for_node(node) == expected
    rng = np.random.default_rng(0)
    runtime = types.SimpleNamespace(iv=lambda v, x: v * x, sum_vjp=s2sgrad.runtime.sum_vjp,
                                    unbroadcast=s2sgrad.runtime.unbroadcast)
    env = dict(a=1.5, b=-0.25, c=3.0, g=0.5, t=0.3, s2s=runtime, np=np, r_bar=rng.normal(size=3),
               r=rng.uniform(1.0, 2.0, 3), d=rng.normal(size=(3, 2)), m=rng.normal(size=3),
               v=rng.normal(size=(3, 2)), s=(2,), x=rng.normal(size=2))
    env["g"] = 0.5 if "s2s.sum_vjp" not in expr else rng.normal(size=3)
    got, want = eval(cst.Module([]).code_for_node(node), env), eval(expr, env)
    np.testing.assert_array_equal(got, want)  # exact: only powers of two moved


@pytest.mark.parametrize("expr, expected", [
    # a keepdims sum read at 0 on its kept axes, whole elsewhere: the sum without them
    ("np.sum(d, axis=1, keepdims=True)[:, 0]", "np.sum(d, axis=1)"),
    ("(-np.sum(d, axis=0, keepdims=True))[0]", "(-np.sum(d, axis=0))"),
    ("np.sum(e, axis=(0, 2), keepdims=True)[0, :, 0]", "np.sum(e, axis=(0, 2))"),
    ("np.sum(d, axis=1, keepdims=True)[:, :]", "np.sum(d, axis=1, keepdims=True)[:, :]"),  # kept
    ("np.sum(d, axis=1, keepdims=True)[0]", "np.sum(d, axis=1, keepdims=True)[0]"),  # another axis
    ("np.sum(d, axis=1)[:, 0]", "np.sum(d, axis=1)[:, 0]"),  # no keepdims
    ("s2s.axis_sum(d, axis=1, keepdims=True)[:, 0]", "s2s.axis_sum(d, axis=1)"),  # the runtime's sum
    ("-s2s.axis_sum(e, axis=(0, 2), keepdims=True)[0, :, 0]", "-s2s.axis_sum(e, axis=(0, 2))"),
])
def test_keepdims_read_at_zero_is_the_plain_sum(expr, expected):
    from s2sgrad.differentiate.simplify import simplify

    node = simplify(cst.parse_expression(expr))
    assert cst.Module([]).code_for_node(node) == expected
    rng = np.random.default_rng(0)
    env = dict(np=np, s2s=s2s, d=rng.normal(size=(3, 4, 2)), e=rng.normal(size=(2, 3, 4)))
    np.testing.assert_array_equal(eval(cst.Module([]).code_for_node(node), env), eval(expr, env))


@pytest.mark.parametrize("expr, expected", [
    # the divisor's adjoint of a / b, b broadcast: b's own factors divide after the sum
    ("-g * a / (b * b)", "-s2s.unbroadcast(g * a, shape) / (b * b)"),  # the negation after the sum too
    ("g * a * b * 2", "s2s.unbroadcast(g * a, shape) * b * 2"),
    ("g * a / c", "s2s.unbroadcast(g * a / c, shape)"),  # nothing of b alone
    ("g * np.sqrt(b) * a", "s2s.unbroadcast(g * np.sqrt(b) * a, shape)"),  # a call: stays
    ("b * g", "s2s.unbroadcast(b * g, shape)"),  # the first factor stays
    ("g", "s2s.unbroadcast(g, shape)"),
])
def test_unbroadcast_takes_the_operands_own_factors_out_of_the_sum(expr, expected):
    from s2sgrad import runtime
    from s2sgrad.differentiate.simplify import unbroadcast_call

    node = unbroadcast_call(cst.parse_expression(expr), cst.Name("shape"), "b")
    assert cst.Module([]).code_for_node(node) == expected
    rng = np.random.default_rng(5)
    env = dict(g=rng.normal(size=(3, 4)), a=rng.normal(size=(3, 4)), c=rng.normal(size=(3, 4)),
               b=rng.uniform(0.5, 2.0, size=(3, 1)), shape=(3, 1), s2s=runtime, np=np)
    want = runtime.unbroadcast(eval(expr, env), (3, 1))
    np.testing.assert_allclose(eval(expected, env), want, rtol=1e-13)


def normalized(x, w):
    s = np.sum(x * x, axis=1, keepdims=True)
    return np.sum(np.sin(x / s) * w) + np.sum(w / np.sqrt(s))


def test_gradients_through_broadcast_divisors():
    rng = np.random.default_rng(6)
    assert_gradients(normalized, rng.normal(size=(4, 5)), rng.normal(size=(4, 5)))
    text = s2sgrad.source(s2sgrad.grad(normalized, argnums=(0, 1)))
    assert "s_bar -= s2s.unbroadcast(x_over_s_bar * x_over_s, s_shape) / s" in text  # summed, then divided


@pytest.mark.parametrize("lines, expected", [
    # a negated temporary read once by an update it leads: the update's sign flipped instead
    (["t = -g / (d * d)", "a_bar[1:3] -= t * e"], ["minus_t = g / (d * d)", "a_bar[1:3] += minus_t * e"]),
    (["t = -g * a", "x_bar += t"], ["minus_t = g * a", "x_bar -= minus_t"]),
    # read twice, read by no update, not leading the update, a name taken: as they were
    (["t = -g", "x_bar += t * e", "y = t"], None),
    (["t = -g", "y = t * e"], None),
    (["t = -g", "x_bar += e * t"], None),
    (["t = -g * a", "x_bar += t", "minus_t = 1.0", "z = minus_t"], None),
])
def test_a_negation_moves_into_the_sign_of_the_update_reading_it(lines, expected):
    from s2sgrad.differentiate.fold import move_signs

    items = [Simple(cst.parse_statement(line).body[0]) for line in lines]
    got = [cst.Module([]).code_for_node(item.node) for item in move_signs(items)]
    assert got == (expected + lines[len(expected):] if expected else lines)
    env = dict(g=np.array([0.5, -1.5]), d=np.array([2.0, 0.5]), a=np.array([1.0, 3.0]),
               e=np.array([-0.25, 4.0]), a_bar=np.zeros(4), x_bar=np.ones(2))
    before, after = dict(env), dict(env)
    exec("\n".join(lines), {}, before)
    exec("\n".join(got), {}, after)
    for name in ("a_bar", "x_bar", "y"):
        if name in before:
            np.testing.assert_array_equal(after[name], before[name])


NUMBERS = frozenset({"g", "u", "x_bar"})  # names known to hold one number


@pytest.mark.parametrize("lines, expected, scalars", [
    # a negation of a number or a copy of a name, read where its sign costs nothing: gone
    (["t = -g", "x_bar += t * e", "y = a + t"], ["x_bar -= g * e", "y = a - g"], NUMBERS),
    (["t = -g", "x_bar += t * e", "y = -t / d"], ["x_bar -= g * e", "y = g / d"], NUMBERS),
    (["t = u", "y = t * e", "u = t + 1.0"], ["y = u * e", "u = u + 1.0"], frozenset()),
    (["t = u", "y = t * 2.0", "u = t"], ["y = u * 2.0"], frozenset()),
    (["t = u", "a_bar[0:2] = e", "y = t * 2.0"], ["a_bar[0:2] = e", "y = u * 2.0"], frozenset()),
    # u rebound before a read, a negation only moved, a read in an index: as they were
    (["t = -u", "u = 2.0", "y = a + t"], None, NUMBERS),
    (["t = u", "u += 2.0", "y = a + t"], None, NUMBERS),
    (["t = -g", "y = t * e"], None, NUMBERS),
    (["t = -u", "y = a + t", "a_bar[t > 0] += 1.0"], None, NUMBERS),
    # a negation of an array (it may be written into before the reader), or lines between that
    # write into an array (an index write, an update of an array, a helper writing in place)
    (["t = -g", "x_bar += t * e", "y = a + t"], None, frozenset()),
    (["t = -g", "a_bar[0:2] = e", "y = a + t"], None, NUMBERS),
    (["t = -g", "d += 1.0", "y = a + t"], None, NUMBERS),
    (["t = -g", "z = s2s.getitem_add(a_bar, e, a_bar, (slice(0, 2),))", "y = a + t"], None, NUMBERS),
])
def test_a_negated_or_copied_name_is_read_in_place(lines, expected, scalars):
    from s2sgrad.differentiate.fold import move_signs

    items = [Simple(cst.parse_statement(line).body[0]) for line in lines]
    got = [cst.Module([]).code_for_node(item.node) for item in move_signs(items, scalars=scalars)]
    assert got == (expected or lines)
    env = dict(g=np.array([0.5, -1.5]), d=np.array([2.0, 0.5]), a=np.array([1.0, 3.0]),
               u=np.array([-2.0, 0.75]), e=np.array([-0.25, 4.0]), a_bar=np.zeros(2),
               x_bar=np.ones(2))
    before, after = copy.deepcopy(env), copy.deepcopy(env)  # u may be updated in place
    exec("\n".join(lines), {"s2s": s2s}, before)
    exec("\n".join(got), {"s2s": s2s}, after)
    for name in ("a_bar", "x_bar", "y", "u"):
        np.testing.assert_array_equal(after[name], before[name])
