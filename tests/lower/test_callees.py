"""Module-level callees inlined where they are called (lower/callees.py, lower/closures.py): the
gradient of every shape of call (one and two levels, twice per loop step, keywords and defaults,
a global read, a rebound parameter, a tuple returned, an ``if``), in every mode and at second
order; and the callees that stay calls (loops, custom_gradient, registered gradients, globals the
caller binds, functions replaced at run time), with their gradients still right."""

import subprocess
import sys
import textwrap

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from conftest import assert_every_mode, assert_gradients

import s2sgrad
from s2sgrad import TransformError

SCALE = 1.5
rng = np.random.default_rng(7)
X = rng.normal(size=4)
W = 0.5 * rng.normal(size=(4, 4))
XS = rng.normal(size=(5, 4))
T = rng.normal(size=4)


def sigmoid(a):
    """A docstring, left out where the body is inlined."""
    return 1.0 / (1.0 + np.exp(-a))


def scaled(v):
    return np.tanh(v) * SCALE  # reads a global


def two_levels(v):
    return scaled(v * 2.0) + sigmoid(v)


def with_defaults(a, b=2.0, *, c):
    d = a * b
    return np.exp(-d) * c + a


def rebinds(a, k):
    a = a * k  # the parameter rebound
    a = np.sin(a) + a
    return a


def pair(a, b):
    return a * b, a - b


def branches(a, flag):
    if flag:
        return np.sin(a)
    return a * a


def looped(a):
    for _ in range(2):
        a = np.sin(a)
    return a


@s2sgrad.custom_gradient
def clipped(a):
    def grad(g):
        return (g * 0.5,)

    return a * 1.0, grad


def recurrent(W, xs, h0):
    h = h0
    for x in xs:
        z = sigmoid(h @ W + x)  # called twice in one step
        r = sigmoid(x - h)
        h = (1.0 - z) * h + z * r
    return np.sum(h * h)


def recurrent_inline(W, xs, h0):
    h = h0
    for x in xs:
        z = 1.0 / (1.0 + np.exp(-(h @ W + x)))
        r = 1.0 / (1.0 + np.exp(-(x - h)))
        h = (1.0 - z) * h + z * r
    return np.sum(h * h)


def calls_two_levels(x):
    return np.sum(two_levels(x) * x)


def calls_with_defaults(x):
    y = with_defaults(x, c=0.5) + with_defaults(x, 3.0, c=1.0) + with_defaults(b=0.5, a=x, c=2.0)
    return np.sum(y * y)


def calls_rebinds(x):
    a = x + 1.0
    b = rebinds(a, 2.0)
    return np.sum(a * b)  # the caller's `a` is unchanged by the callee's rebinding


def calls_pair(x):
    p, q = pair(x, np.cos(x))
    s = pair(q, 2.0)
    return np.sum(p * q) + np.sum(s[0] - s[1] * x)


def calls_branches(x):
    return np.sum(branches(x, True) + branches(x * 2.0, False))


def calls_looped(x):
    return np.sum(looped(x) * x)


def calls_clipped(x):
    return np.sum(clipped(x) * x)


def shadow_global(x):
    SCALE = 3.0  # the caller binds the name the callee reads as a global: not inlined
    return np.sum(scaled(x) * SCALE)


CASES = [calls_two_levels, calls_with_defaults, calls_rebinds, calls_pair, calls_branches,
         shadow_global]


def _generated(fn, **kwargs):
    return s2sgrad.source(s2sgrad.grad(fn, **kwargs))


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_gradients_of_inlined_callees(fn):
    assert_gradients(fn, X)


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_every_mode_and_second_order(fn):
    assert_every_mode(fn, X, None, T)


def test_inlined_callees_leave_no_generated_function():
    for fn in (calls_two_levels, calls_with_defaults, calls_rebinds, calls_pair, calls_branches):
        text = _generated(fn)
        defs = [line for line in text.splitlines() if line.startswith("def ")]
        assert len(defs) == 3, (fn.__name__, defs)  # <f>_fwd, <f>_bwd, <f>_grad only


def test_callee_called_twice_per_step_is_inlined_like_the_expression():
    args = (W, XS, X)
    assert_gradients(recurrent, *args, argnums=(0, 1, 2))
    got = s2sgrad.value_and_grad(recurrent, argnums=(0, 2))(*args)
    want = s2sgrad.value_and_grad(recurrent_inline, argnums=(0, 2))(*args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    text = _generated(recurrent, argnums=(0, 1, 2))
    assert "sigmoid_fwd" not in text and "sigmoid_bwd" not in text
    same = _generated(recurrent_inline, argnums=(0, 1, 2))
    assert text.count("np.exp(") == same.count("np.exp(")  # as where the expression is written
    assert "A docstring" not in text
    # the inlined lines quote the callee's own line and the caller's
    assert "# return 1.0 / (1.0 + np.exp(-a))" in text
    assert "# z = sigmoid(h @ W + x)  # called twice in one step" in text or \
        "# z = sigmoid(h @ W + x)" in text


def test_hvp_through_an_inlined_callee_against_differences_of_gradients():
    def f(x):
        return recurrent(W, XS, x)

    eps = 1e-6
    g = s2sgrad.grad(f)
    moved = (g(X + eps * T) - g(X - eps * T)) / (2 * eps)
    np.testing.assert_allclose(s2sgrad.hvp(f, (X,), (T,))[0], moved, rtol=1e-5, atol=1e-7)


def test_callees_that_stay_calls():
    assert "looped_fwd" in _generated(calls_looped)  # a loop in its body
    assert "clipped_fwd" in _generated(calls_clipped)  # custom_gradient: its rule is kept
    np.testing.assert_allclose(s2sgrad.grad(calls_clipped)(X), 0.5 * X + X)
    assert "scaled_fwd" in _generated(shadow_global)  # reads a global the caller binds
    assert_gradients(calls_looped, X)


def test_a_registered_gradient_is_never_inlined():
    import registered_inputs as ri

    text = _generated(ri.uses_opaque, argnums=(0, 1))
    assert "opaque_grad(" in text and "np.sort(" not in text.split("def uses_opaque_bwd")[1]


def test_a_callee_replaced_at_run_time_is_not_inlined(monkeypatch):
    def other(a):
        return a * 3.0

    monkeypatch.setitem(globals(), "sigmoid", other)
    got = s2sgrad.grad(recurrent, argnums=0)(W, XS, X)
    want = autograd.grad(lambda w: _recurrent_with(w, other))(W)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def _recurrent_with(W_, act):
    h = X
    for x in XS:
        z = act(anp.dot(h, W_) + x)
        r = act(x - h)
        h = (1.0 - z) * h + z * r
    return anp.sum(h * h)


def test_recursion_through_a_callee_is_still_refused(tmp_path):
    path = tmp_path / "recursive_callees.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np


        def down(a, n):
            return up(a, n)


        def up(a, n):
            return down(a * 0.5, n) + a


        def f(x):
            return np.sum(up(x, 3))
    """))
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(TransformError, match="recursive"):
        s2sgrad.grad(namespace["f"])(X)


def test_a_refusal_in_an_inlined_callee_points_at_the_callee_line(tmp_path):
    (tmp_path / "refusing.py").write_text(textwrap.dedent("""\
        import numpy as np
        import s2sgrad
        import scipy.special


        def helper(a):
            b = a * 2.0
            return scipy.special.erfcx(b)


        @s2sgrad.differentiable
        def f(x):
            return np.sum(helper(x))
    """))
    out = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "refusing.py", "-o", "gen"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    assert "refusing.py:8:12: no derivative rule for `scipy.special.erfcx`" in out.stderr, out.stderr


def test_command_line_inlines_a_helper(tmp_path):
    (tmp_path / "cell.py").write_text(textwrap.dedent("""\
        import numpy as np
        import s2sgrad

        OFFSET = 0.25


        def cell(h, x, w, b=0.0):
            pre = h @ w + x + b
            return np.tanh(pre + OFFSET)


        @s2sgrad.differentiable(wrt=("w",))
        def loss(w, xs, h0):
            h = h0
            for x in xs:
                h = cell(h, x, w, b=0.5)
            return np.sum(h * h)
    """))
    out = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "cell.py", "-o", "gen"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "gen" / "cell_grad.py").read_text()
    assert "cell_fwd" not in text and "def " in text
    assert "# pre = h @ w + x + b" in text and "# return np.tanh(pre + OFFSET)" in text
    namespace: dict = {}
    sys.path.insert(0, str(tmp_path))
    try:
        exec(compile(text, str(tmp_path / "gen" / "cell_grad.py"), "exec"), namespace)
    finally:
        sys.path.remove(str(tmp_path))
    grad = next(v for k, v in namespace.items() if k.endswith("_grad") and callable(v))

    def loss(w):
        h = X
        for x in XS:
            h = np.tanh(h @ w + x + 0.5 + 0.25)
        return np.sum(h * h)

    from s2sgrad.checks import numerical_grad

    got = grad(W, XS, X)
    got = got[0] if isinstance(got, tuple) else got
    np.testing.assert_allclose(got, numerical_grad(loss, (W,), 0), rtol=1e-5, atol=1e-7)


def test_a_callee_rebound_after_the_gradient_is_made_is_read_again(tmp_path, monkeypatch):
    (tmp_path / "rebound_callee.py").write_text(textwrap.dedent("""\
        import numpy as np


        def act(a):
            return np.tanh(a)


        def triple(a):
            return a * 3.0


        def f(x):
            return np.sum(act(x) * x)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import rebound_callee as module

    grad = s2sgrad.grad(module.f)
    np.testing.assert_allclose(grad(X), np.tanh(X) + X * (1.0 - np.tanh(X) ** 2), rtol=1e-12)
    monkeypatch.setattr(module, "act", module.triple)
    np.testing.assert_allclose(grad(X), 6.0 * X, rtol=1e-12)


def writes_out(a):
    b = np.multiply(a, 2.0, out=a)
    return b


def calls_writes_out(x):
    return np.sum(writes_out(x * 1.0))


def test_a_callee_writing_into_what_it_is_given_stays_a_call():
    with pytest.raises(TransformError, match="`writes_out` changes its parameter `a` in place"):
        s2sgrad.grad(calls_writes_out)(X)  # as before: the callee's refusal


class Affine:
    """A class of this module: objects built of it are read where the differentiated function uses them."""

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def apply(self, z):
        return np.tanh(z * self.w + self.b)


LAYER = Affine(0.5 * X, 0.25)


def builds_object(x, s):
    layer = Affine(np.tanh(x) * 0.5, s * 0.1)
    return np.sum(layer.apply(x) ** 2)


def uses_global_object(x):
    return np.sum(LAYER.apply(x) * x)


def calls_builder(x, s):
    return builds_object(x, s) * 2.0


def calls_global_user(x):
    return uses_global_object(x) + np.sum(x)


def test_callees_using_objects_stay_calls_with_their_gradients():
    # A callee that builds an object of the module's class, or calls a method of a global object,
    # is not inlined (the passes reading objects run before inlining): its gradient is right
    # (random programs 1027, 1028 of the slow tier were refused when such a callee was inlined).
    assert_gradients(calls_builder, X, 0.7, argnums=(0, 1), autograd_oracle=False)
    assert_gradients(calls_global_user, X, autograd_oracle=False)
    assert "builds_object_fwd" in _generated(calls_builder)
