"""Inlining a generated gradient's sweeps (s2sgrad/flatten.py) and dead code (differentiate/dead.py):
the flat function computes what the wrapper computes, on code with loops, branches and helpers;
sweeps that would mean something else in one scope are left alone; the forward mode over the flat
function gives the Hessian-vector products of finite differences of gradients."""

from collections import Counter

import numpy as np
import pytest

import s2sgrad
from s2sgrad.differentiate.dead import without_dead_code
from s2sgrad.flatten import flat_gradient
from s2sgrad.program import Nest, header, lift, render

RNG = np.random.default_rng(7)


def helper(a, b):
    return np.tanh(a) * b


def looped(x, w):
    h = x
    for t in range(3):
        h = np.sin(h * w[t]) + h
    if np.sum(h) > 0.0:
        h = h * h
    else:
        h = -h
    return np.sum(helper(h, x) ** 2)


def over_rows(xs, v):
    total = 0.0
    for row in xs:
        total = total + np.sum(np.exp(row @ v))
    return total


def _namespace(text: str) -> dict:
    scope = {"helper": helper}
    exec(compile(text, "<generated>", "exec"), scope)
    return scope


def looped_helper(a, b):
    out = a
    for _ in range(2):
        out = np.tanh(out) * b
    return out


def calls_looped(x, w):
    return np.sum(looped_helper(x * w[0], x) ** 2)


def straight(x, w):
    h = np.tanh(x * w[0]) + x
    return np.sum(helper(h, x) ** 2) + np.sum(np.exp(x - np.max(x)))


@pytest.mark.parametrize("fun, args", [(straight, (RNG.normal(size=4), RNG.normal(size=3)))])
def test_the_flat_gradient_computes_what_the_wrapper_computes(fun, args):
    g = s2sgrad.grad(fun, argnums=(0, 1))
    text = s2sgrad.source(g)
    name = f"{fun.__name__}_grad"
    flat = flat_gradient(text, name)
    assert flat is not None
    body = flat[flat.index(f"def {name}("):]
    assert "residuals" not in body and f"{fun.__name__}_fwd(" not in body
    want = _namespace(text)[name](*args)
    got = _namespace(flat)[name](*args)
    for w, o in zip(want, got):
        np.testing.assert_array_equal(o, w)


@pytest.mark.parametrize("fun", [looped, over_rows])
def test_sweeps_with_loops_or_branches_stay_apart(fun):
    # a backward loop rebinds the names its forward loop bound (from the tape), a branch's
    # backward its branch's names: in one scope the analyses, which go by name, could not tell
    # the two values apart
    text = s2sgrad.source(s2sgrad.grad(fun, argnums=(0, 1)))
    assert flat_gradient(text, f"{fun.__name__}_grad") is None


def test_sweeps_that_would_share_a_name_for_two_values_stay_apart():
    text = '''
import numpy as np


def f_fwd(x):
    c = np.sin(x)
    return c, (x,)


def f_bwd(residuals, f_bar=1.0):
    (x,) = residuals
    x_bar = f_bar * np.cos(x) * c
    return (x_bar,)


def f_grad(x, f_bar=1.0):
    return f_bwd(f_fwd(x)[1], f_bar)[0]
'''
    # f_bwd reads a global `c` that f_fwd binds as a local: one scope would change its meaning
    assert flat_gradient(text, "f_grad") is None
    assert flat_gradient(text.replace("* c\n", "\n"), "f_grad") is not None


def test_a_wrapper_of_another_shape_is_left_alone():
    text = "def g(x):\n    return x\n"
    assert flat_gradient(text, "g") is None
    assert flat_gradient(text, "missing") is None


@pytest.mark.parametrize("fun", [straight, looped])
def test_hvp_matches_differences_of_gradients_inlined_or_not(fun):
    x, w = RNG.normal(size=4), RNG.normal(size=3)
    vx, vw = RNG.normal(size=4), RNG.normal(size=3)
    hx, hw = s2sgrad.hvp(fun, (x, w), (vx, vw))
    g = s2sgrad.grad(fun, argnums=(0, 1))
    eps = 1e-6
    plus, minus = g(x + eps * vx, w + eps * vw), g(x - eps * vx, w - eps * vw)
    np.testing.assert_allclose(hx, (plus[0] - minus[0]) / (2 * eps), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hw, (plus[1] - minus[1]) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_the_inlined_forward_mode_is_one_function_calling_only_the_users_helpers():
    text = s2sgrad.source(s2sgrad.hessian(straight, argnums=(0, 1)))
    jvp = text[text.index("def straight_grad_jvp("):].split("\ndef ")[0]
    assert "straight_fwd" not in jvp and "straight_bwd" not in jvp  # one function: no sweeps called
    assert "helper_fwd" not in jvp and "helper_bwd" not in jvp  # inlined (lower/callees.py)
    looped_text = s2sgrad.source(s2sgrad.hessian(calls_looped, argnums=(0, 1)))
    looped_jvp = looped_text[looped_text.index("def calls_looped_grad_jvp("):].split("\ndef ")[0]
    assert "looped_helper_bwd_jvp(" in looped_jvp  # a helper with a loop keeps its own functions


def _dead(lines, outside=("y",)):
    return render(without_dead_code(lift(lines), Counter(outside)), "")


def test_dead_code_goes_with_the_comment_it_leaves_alone():
    assert _dead(["# a = f(x)", "a = np.sin(x)", "b = a * 2", "# y = g(x)", "y = np.cos(x)"]) \
        == ["# y = g(x)", "y = np.cos(x)"]


def test_dead_code_keeps_effects_reads_in_loops_and_partly_read_tuples():
    kept = ["a = np.random.normal()", "b = f(x)", "t.append(x)", "c, d = np.divmod(x, 2)",
            "y = c"]
    assert _dead(kept) == kept
    loop = Nest(header("for i in r:"), lift(["u = s * 2", "s = u + 1"]))
    code = ["s = x", loop, "y = s"]
    assert _dead(code) == render(lift(code), "")


def stabilized(x):
    z = np.sin(x) * 2.0
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def test_a_hessian_computes_the_primal_values_once_and_a_tangent_per_column():
    import autograd
    import autograd.numpy as anp

    x = RNG.normal(size=5)
    text = s2sgrad.source(s2sgrad.hessian(stabilized))
    tangent = "\n".join(line for line in text[text.index(
        "def stabilized_grad_jvp_tangent(values, x_dot):"):].splitlines()
        if not line.lstrip().startswith("#"))  # the code, not its provenance comments
    assert "np.exp(" not in tangent and "np.max(" not in tangent  # primal work: part 1 only
    assert "def stabilized_grad_jvp_values(x, stabilized_bar=1.0):" in text

    def ag(z):
        w = anp.sin(z) * 2.0
        return anp.max(w) + anp.log(anp.sum(anp.exp(w - anp.max(w))))

    want = autograd.hessian(ag)(x)
    np.testing.assert_allclose(s2sgrad.hessian(stabilized)(x), want, rtol=1e-10, atol=1e-12)
    marked = s2sgrad.differentiable(order=2)(stabilized)
    np.testing.assert_allclose(marked.hessian(x), want, rtol=1e-10, atol=1e-12)


def test_forward_mode_with_blocks_is_not_split_and_still_gives_the_hessian():
    x, w = RNG.normal(size=4), RNG.normal(size=3)
    text = s2sgrad.source(s2sgrad.hessian(looped, argnums=(0, 1)))
    assert "def looped_grad_jvp(" in text and "looped_grad_jvp_values" not in text
    g = s2sgrad.grad(looped, argnums=(0, 1))
    h = s2sgrad.hessian(looped, argnums=(0, 1))(x, w)
    eps = 1e-6
    for k in range(4):
        e = np.zeros(4)
        e[k] = eps
        column = (g(x + e, w)[0] - g(x - e, w)[0]) / (2 * eps)
        np.testing.assert_allclose(h[0][0][:, k], column, rtol=1e-5, atol=1e-7)


def test_dead_code_keeps_a_tuple_assignment_that_writes_into_an_array():
    code = ["a[0], b = np.divmod(x, 2)", "y = x"]
    assert _dead(code) == code
