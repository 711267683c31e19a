"""What s2sgrad returns reads the user's globals when it runs, as Python does (issue 24): a
gradient built once, with a module global (or closure variable) rebound between calls, is the
gradient for the value the function reads now; where the generated code was specialized on the
old value (a helper function, a callable, an array's methods), it is rebuilt."""

import numpy as np
import pytest
from s2sgrad.checks import numerical_grad

import live_globals_data as data
import live_globals_inputs as lg
import s2sgrad

RNG = np.random.default_rng(24)
W = np.array([0.1, 0.2, -0.3])


@pytest.fixture(autouse=True)
def restore_globals():
    saved = {name: getattr(lg, name) for name in ("X", "Y", "LAM", "helper")}
    saved_w = data.W
    yield
    for name, value in saved.items():
        setattr(lg, name, value)
    data.W = saved_w


def _differences(fn, w):
    return numerical_grad(fn, (w,), 0)


def _rebind_batch(rows):
    lg.X = RNG.normal(size=(rows, 3))
    lg.Y = RNG.normal(size=rows)
    lg.LAM = float(RNG.uniform(0.1, 2.0))


def _closed_form(w):
    return 2 * lg.X.T @ (lg.X @ w - lg.Y) + 2 * lg.LAM * w


@pytest.mark.parametrize("make", [
    lambda: s2sgrad.grad(lg.batch_loss),
    lambda: (lambda w, g=s2sgrad.value_and_grad(lg.batch_loss): g(w)[1]),
    lambda: (lambda w, g=s2sgrad.grad(lg.batch_loss, argnums=(0,)): g(w)[0]),
])
def test_a_gradient_built_once_reads_the_batch_now(make):
    g = make()
    np.testing.assert_allclose(g(W), _closed_form(W), rtol=1e-10)
    for rows in (4, 4, 6, 2):  # same shape, then others
        _rebind_batch(rows)
        np.testing.assert_allclose(g(W), _closed_form(W), rtol=1e-10)
        np.testing.assert_allclose(g(W), _differences(lg.batch_loss, W), rtol=1e-5, atol=1e-6)


def test_a_float_argument_takes_forward_mode_with_the_values_now():
    g, vg = s2sgrad.grad(lg.float_loss), s2sgrad.value_and_grad(lg.float_loss)
    for rows in (4, 6):
        lg.X = RNG.normal(size=(rows, 3))
        np.testing.assert_allclose(g(0.7), np.sum(lg.X * np.cos(lg.X * 0.7)), rtol=1e-10)
        np.testing.assert_allclose(vg(0.7)[0], lg.float_loss(0.7), rtol=1e-12)


def test_array_methods_read_the_array_now():
    g = s2sgrad.grad(lg.method_loss)
    for rows in (4, 7):
        lg.X = RNG.normal(size=(rows, 3))
        np.testing.assert_allclose(g(W), _differences(lg.method_loss, W), rtol=1e-5, atol=1e-7)


def test_a_rebound_helper_rebuilds_the_generated_code():
    h = s2sgrad.grad(lg.calls_helper)
    np.testing.assert_allclose(h(W), 2 * (np.cos(W) * W + np.sin(W)) + 1, rtol=1e-10)
    lg.helper = lg.helper_b
    np.testing.assert_allclose(h(W), 2 * np.exp(W) * lg.Y[:3] + 1, rtol=1e-10)
    lg.Y = RNG.normal(size=4)
    np.testing.assert_allclose(h(W), 2 * np.exp(W) * lg.Y[:3] + 1, rtol=1e-10)


def test_a_global_read_by_a_helper_is_read_now():
    g = s2sgrad.grad(lg.helper_reads_global)
    for rows in (4, 6):
        lg.X = RNG.normal(size=(rows, 3))
        expected = -lg.X.T @ np.sin(lg.X @ W) + 3 * W ** 2
        np.testing.assert_allclose(g(W), expected, rtol=1e-10)


def test_a_global_of_another_module_read_by_its_helper_is_read_now():
    g = s2sgrad.grad(lg.other_module)
    for weights in ([1.0, -2.0, 0.5], [3.0, 0.0, -1.0]):
        data.W = np.array(weights)
        np.testing.assert_allclose(g(W), 2 * data.W * W + 1, rtol=1e-10)


def test_jvp_jacobians_and_the_hessian_read_the_values_now():
    jf, jr = s2sgrad.jacfwd(lg.batch_loss), s2sgrad.jacrev(lg.batch_loss)
    hess = s2sgrad.hessian(lg.batch_loss)
    second = s2sgrad.jacfwd(s2sgrad.grad(lg.batch_loss))
    third = s2sgrad.jacrev(s2sgrad.grad(lg.batch_loss))
    for rows in (4, 5):
        _rebind_batch(rows)
        expected = 2 * lg.X.T @ lg.X + 2 * lg.LAM * np.eye(3)
        for h in (hess, second, third):
            np.testing.assert_allclose(h(W), expected, rtol=1e-10)
        for j in (jf, jr):
            np.testing.assert_allclose(j(W), _closed_form(W), rtol=1e-10)
        t = RNG.normal(size=3)
        _, tangent = s2sgrad.jvp(lg.batch_loss, (W,), (t,))
        np.testing.assert_allclose(tangent, _closed_form(W) @ t, rtol=1e-10)


def test_second_order_follows_a_rebound_helper():
    hess = s2sgrad.hessian(lg.calls_helper)
    lg.helper = lg.helper_b
    np.testing.assert_allclose(hess(W), np.diag(2 * np.exp(W) * lg.Y[:3]), rtol=1e-10)


def _decorated_gradient(w):
    return 2 * lg.X.T @ (np.sin(lg.X @ w) * np.cos(lg.X @ w)) + 4 * lg.LAM * w ** 3


def test_the_decorator_reads_the_values_now():
    for rows in (4, 4, 6):
        _rebind_batch(rows)
        np.testing.assert_allclose(lg.decorated.grad(W), _decorated_gradient(W), rtol=1e-10)
        np.testing.assert_allclose(lg.decorated.value_and_grad(W)[1], _decorated_gradient(W),
                                   rtol=1e-10)
        numeric = np.array([_differences(lambda w: _decorated_gradient(w)[i], W) for i in range(3)])
        np.testing.assert_allclose(lg.decorated.hessian(W), numeric, rtol=1e-5, atol=1e-6)
        t = RNG.normal(size=3)
        np.testing.assert_allclose(lg.decorated.hvp(W, tangents=t), numeric @ t, rtol=1e-5, atol=1e-6)


def test_a_closure_variable_rebound_through_nonlocal_is_read_now():
    loss, rebind = lg.make_closure(np.array([1.0, 2.0, 3.0]))
    g = s2sgrad.grad(loss)
    np.testing.assert_allclose(g(W), 2 * np.array([1.0, 2.0, 3.0]) * W)
    rebind(np.array([-1.0, 0.5, 4.0]))
    np.testing.assert_allclose(g(W), 2 * np.array([-1.0, 0.5, 4.0]) * W)
    rebind(2.5)  # another type: rebuilt
    np.testing.assert_allclose(g(W), 5.0 * W)


def test_a_pullback_keeps_the_values_of_its_forward_sweep():
    # As JAX's and autograd's: vjp runs the function now; its pullback is of that run.
    out, pullback = s2sgrad.vjp(lg.batch_loss, W)
    before = _closed_form(W)
    _rebind_batch(4)
    np.testing.assert_allclose(pullback(1.0)[0], before, rtol=1e-10)


def test_a_helper_rebound_to_one_s2sgrad_refuses_fails_at_the_call_never_in_silence():
    h = s2sgrad.grad(lg.calls_helper)
    lg.helper = lg.helper_refused
    with pytest.raises(s2sgrad.TransformError, match="try"):
        h(W)
    with pytest.raises(s2sgrad.TransformError):  # still not the old code, on the next call
        h(W)
    lg.helper = lg.helper_a
    np.testing.assert_allclose(h(W), 2 * (np.cos(W) * W + np.sin(W)) + 1, rtol=1e-10)


def test_checking_the_globals_costs_microseconds_per_call():
    import timeit

    from s2sgrad import derive as service

    generated = s2sgrad.grad(lg.batch_loss).__s2sgrad_entry__
    service.fresh(generated)
    per_call = min(timeit.repeat(lambda: service.fresh(generated), number=2000, repeat=5)) / 2000
    assert per_call < 20e-6, per_call  # about 0.5 us here; a rebuild per call would take ms


def test_transformations_made_per_call_reuse_the_module_and_read_the_values_now():
    # s2sgrad.grad(f)(w), hvp(f, ...), jvp and vjp made again at each call: the second one
    # reuses the module the first loaded (derive._bound), made current for the values now
    from s2sgrad import derive

    first = derive.build(lg.batch_loss, ("w",))[1][0]
    assert derive.build(lg.batch_loss, ("w",))[1][0] is first
    t = RNG.normal(size=3)
    for rows in (4, 4, 6):
        _rebind_batch(rows)
        hessian = 2 * lg.X.T @ lg.X + 2 * lg.LAM * np.eye(3)
        np.testing.assert_allclose(s2sgrad.grad(lg.batch_loss)(W), _closed_form(W), rtol=1e-10)
        np.testing.assert_allclose(s2sgrad.hvp(lg.batch_loss, (W,), (t,))[0], hessian @ t, rtol=1e-10)
        np.testing.assert_allclose(s2sgrad.jvp(lg.batch_loss, (W,), (t,))[1], _closed_form(W) @ t,
                                   rtol=1e-10)
        np.testing.assert_allclose(s2sgrad.vjp(lg.batch_loss, W)[1](1.0)[0], _closed_form(W), rtol=1e-10)
        np.testing.assert_allclose(s2sgrad.hessian(lg.batch_loss)(W), hessian, rtol=1e-10)


def test_grad_made_per_call_follows_a_rebound_helper():
    # grad(f) made again takes what was made for f before (api._SWEEPS) only while the binding
    # of its generated module fits the values now: a helper rebound between the two is read again
    from s2sgrad import api

    lg.helper = lg.helper_a
    first = s2sgrad.grad(lg.calls_helper)(W)
    np.testing.assert_allclose(first, 2 * (np.sin(W) + W * np.cos(W)) + 1.0, rtol=1e-10)
    assert sum(1 for entry in api._SWEEPS.entries.values() if entry[0] is lg.calls_helper) == 1
    np.testing.assert_allclose(s2sgrad.grad(lg.calls_helper)(W), first, rtol=0)
    lg.helper = lg.helper_b
    np.testing.assert_allclose(s2sgrad.grad(lg.calls_helper)(W), 2 * np.exp(W) * lg.Y[:3] + 1.0,
                               rtol=1e-10)


def test_grad_made_per_call_follows_what_its_kept_sweeps_were_made_on():
    # a kept sweep (api._SWEEPS) is taken while its generated module's binding still fits the
    # user's values: a helper rebound to one s2sgrad refuses raises at once, as the first make
    # does, and is read again once it is rebound back
    lg.helper = lg.helper_a
    want = 2 * (np.cos(W) * W + np.sin(W)) + 1
    np.testing.assert_allclose(s2sgrad.grad(lg.calls_helper)(W), want, rtol=1e-10)
    lg.helper = lg.helper_refused
    for _ in range(2):
        with pytest.raises(s2sgrad.TransformError, match="try"):
            s2sgrad.grad(lg.calls_helper)(W)
    lg.helper = lg.helper_a
    np.testing.assert_allclose(s2sgrad.grad(lg.calls_helper)(W), want, rtol=1e-10)


SCALE_ARRAY = np.array([1.0, 2.0, 3.0])


def scaled_by_default(w, scale=2.0, *, weights=SCALE_ARRAY):
    return np.sum(np.sin(w) * scale * weights)


def test_defaults_are_the_values_the_function_was_defined_with():
    # generated code copied a default's text and evaluated it when loaded: a changed
    # __defaults__ was not seen, and a global the default names rebound after the def gave the
    # generated code the new value where Python keeps the old one (a wrong value and gradient,
    # in silence; session 25)
    global SCALE_ARRAY
    g = s2sgrad.grad(scaled_by_default)
    np.testing.assert_allclose(g(W), 2.0 * np.cos(W) * [1.0, 2.0, 3.0], rtol=1e-12)
    scaled_by_default.__defaults__ = (-3.0,)
    try:
        for grad in (g, s2sgrad.grad(scaled_by_default)):  # built before, and made again
            np.testing.assert_allclose(grad(W), -3.0 * np.cos(W) * [1.0, 2.0, 3.0], rtol=1e-12)
    finally:
        scaled_by_default.__defaults__ = (2.0,)
    g = s2sgrad.grad(scaled_by_default)
    np.testing.assert_allclose(g(W), 2.0 * np.cos(W) * [1.0, 2.0, 3.0], rtol=1e-12)
    kept = SCALE_ARRAY
    SCALE_ARRAY = np.array([5.0, 7.0, 9.0])  # the def keeps [1, 2, 3]
    try:  # code loaded before holds the default it was given; code made now is refused
        np.testing.assert_allclose(g(W), 2.0 * np.cos(W) * [1.0, 2.0, 3.0], rtol=1e-12)
        np.testing.assert_allclose(s2sgrad.value_and_grad(scaled_by_default)(W)[1],  # (kept)
                                   2.0 * np.cos(W) * [1.0, 2.0, 3.0], rtol=1e-12)
        with pytest.raises(s2sgrad.TransformError, match=r"the default of `weights` is not the value "
                           r"`SCALE_ARRAY` gives now") as info:
            s2sgrad.hessian(scaled_by_default)(W)
        assert "test_live_globals.py" in str(info.value) and "weights=SCALE_ARRAY" in str(info.value)
    finally:
        SCALE_ARRAY = kept
    np.testing.assert_allclose(s2sgrad.value_and_grad(scaled_by_default)(W)[1],
                               2.0 * np.cos(W) * [1.0, 2.0, 3.0], rtol=1e-12)
