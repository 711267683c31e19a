"""Functions of complex numbers, in both modes.

The convention is autograd's and JAX's (README, "What is supported"): for a real ``f`` of a complex
``z = x + iy`` the gradient is ``df/dx - i df/dy``. Each gradient is compared with autograd (the
same function with ``np`` bound to autograd.numpy) and with central differences along the real
and the imaginary axis; each tangent with the directional derivative ``real(sum(grad * t))`` and
with central differences along ``t``.
"""

from __future__ import annotations

import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s

Z = np.array([1.0 + 2.0j, 0.5 - 1.0j, -0.3 + 0.2j])
T = np.array([0.3 - 0.1j, 1.0 + 0.5j, -0.2j])
C = np.array([2.0 + 1.0j, -1.0 + 0.5j, 0.25 - 2.0j])


def abs_squared(z): return np.sum(np.abs(z) ** 2)
def abs_plain(z): return np.sum(np.abs(z) * np.array([1.0, 2.0, 3.0]))
def absolute_of_product(z): return np.sum(np.absolute(z * z + 1j))
def real_of_square(z): return np.sum(np.real(z * z))
def imag_of_square(z): return np.sum(np.imag(z * z) * np.array([1.0, -2.0, 0.5]))
def conj_times_constant(z): return np.sum(np.real(np.conj(z) * C))
def conjugate_times_z(z): return np.real(np.sum(z * np.conjugate(z) * C))
def angle_of(z): return np.sum(np.angle(z) * np.array([1.0, 2.0, 3.0]))
def angle_in_degrees(z): return np.sum(np.angle(z * z, deg=True))
def exp_holomorphic(z): return np.sum(np.real(np.exp(z) * z))
def abs_of_quotient(z): return np.sum(np.abs(1.0 / (z + 3.0)))
def abs_of_dot(z): return np.abs(np.dot(z, z * C))
def real_output_times_complex(z):
    r = np.abs(z)  # real, but its adjoint picks up an imaginary part from w
    w = r * (1.0 + 1.0j)
    return np.sum(np.real(w * z))
def several_real_parts(z): return np.sum(np.real(z)) + np.sum(np.real(z * z)) + np.sum(np.imag(z))
def norm_of(z): return np.linalg.norm(z * C)
def var_and_std(z): return np.var(z) + np.std(z * C)
def methods(z): return np.sum(z.real * z.imag) + np.sum(np.real(z.conj() * C))
def vdot_both(z): return np.real(np.vdot(z, z * C)) + np.imag(np.vdot(C, z))
def real_if_close_kept(z): return np.sum(np.abs(np.real_if_close(z * C)) ** 2)  # stays complex
# a full sum's adjoint (one number) reaches real/imag's rule unbroadcast: its adjoint takes the
# operand's shape before a product's rule reads it (once a matmul of a 0-d adjoint)
def real_of_outer(z): return np.sum(np.real(np.outer(z, z * C))) + np.sum(np.imag(np.outer(C, z)))


# the slopes forward mode's tangents of abs and angle use (their rules serve s2sgrad.hvp)
def slopes(z): return np.sum(np.real(s2s.abs_slope(z) * C + s2s.angle_slope(z, True) * C[::-1]))


REVERSE = [abs_squared, abs_plain, absolute_of_product, real_of_square, imag_of_square,
           conj_times_constant, conjugate_times_z, angle_of, angle_in_degrees, exp_holomorphic,
           abs_of_quotient, abs_of_dot, real_output_times_complex, several_real_parts, norm_of,
           var_and_std, methods, vdot_both, slopes, real_if_close_kept, real_of_outer]
# autograd's angle rule takes no deg=, its arrays have no .real, it has no vdot
NO_AUTOGRAD = {angle_in_degrees, methods, vdot_both, slopes}
# forward mode has no rule for these (grad then uses reverse mode)
NO_FORWARD = {norm_of, var_and_std, vdot_both, slopes}


def _twin(fn):
    namespace = dict(fn.__globals__, np=anp)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def complex_differences(fn, z, eps=1e-6):
    """``df/dx - i df/dy`` at ``z``, by central differences."""
    out = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e[k] = eps
        dx = (fn(z + e) - fn(z - e)) / (2 * eps)
        dy = (fn(z + 1j * e) - fn(z - 1j * e)) / (2 * eps)
        out[k] = dx - 1j * dy
    return out


@pytest.mark.parametrize("fn", REVERSE, ids=lambda f: f.__name__)
def test_gradient_of_real_function_of_complex_input(fn):
    got = s2sgrad.grad(fn)(Z)
    assert got.dtype == Z.dtype and got.shape == Z.shape
    np.testing.assert_allclose(got, complex_differences(fn, Z), rtol=1e-6, atol=1e-8)
    if fn not in NO_AUTOGRAD:
        np.testing.assert_allclose(got, autograd.grad(_twin(fn))(Z), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn", [f for f in REVERSE if f not in NO_FORWARD], ids=lambda f: f.__name__)
def test_tangent_of_real_function_of_complex_input(fn):
    value, tangent = s2sgrad.jvp(fn, (Z,), (T,))
    assert np.isrealobj(tangent), tangent
    eps = 1e-6
    np.testing.assert_allclose(tangent, (fn(Z + eps * T) - fn(Z - eps * T)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(tangent, np.real(np.sum(s2sgrad.grad(fn)(Z) * T)), rtol=1e-10)
    np.testing.assert_allclose(value, fn(Z))


def j_real(z): return np.real(z)
def j_imag(z): return np.imag(z)
def j_conj(z): return np.conj(z)
def j_abs(z): return np.abs(z)
def j_angle(z): return np.angle(z)


@pytest.mark.parametrize("fn, want", [
    (j_real, np.real(T)),
    (j_imag, np.imag(T)),
    (j_conj, np.conj(T)),
    (j_abs, np.real(np.conj(Z) * T) / np.abs(Z)),
    (j_angle, np.imag(np.conj(Z) * T) / np.abs(Z) ** 2),
], ids=["real", "imag", "conj", "abs", "angle"])
def test_tangents_of_functions_that_are_not_holomorphic(fn, want):
    _, tangent = s2sgrad.jvp(fn, (Z,), (T,))
    assert np.iscomplexobj(tangent) == (fn is j_conj)
    np.testing.assert_allclose(tangent, want, rtol=1e-12)


def test_abs_at_zero_has_zero_derivative_in_both_modes():
    z = np.array([0.0 + 0.0j, 3.0 - 4.0j, -1.0 + 0.0j])
    np.testing.assert_allclose(s2sgrad.grad(abs_plain)(z), [0.0, 2.0 * (3.0 + 4.0j) / 5.0, -3.0])
    _, tangent = s2sgrad.jvp(j_abs, (z,), (np.array([1.0 + 1.0j, 1.0j, 2.0 + 1.0j]),))
    np.testing.assert_allclose(tangent, [0.0, -0.8, -2.0])


def real_via_complex(x): return np.abs(np.add(x, 1.0 + 2.0j)) + np.real(np.add(x, 2.0j) * (1.0 - 1.0j))
def real_via_complex_summed(x): return np.sum(real_via_complex(x))


def test_real_input_through_complex_values_gets_a_real_gradient():
    # a Python float (forward mode), and a real array (reverse mode)
    got = s2sgrad.grad(real_via_complex)(2.0)
    assert type(got) is float
    want = float(autograd.grad(_twin(real_via_complex))(2.0))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, 3.0 / np.sqrt(13.0) + 1.0, rtol=1e-12)
    x = np.array([2.0, -1.0])
    got = s2sgrad.grad(real_via_complex_summed)(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, (x + 1.0) / np.abs(x + 1.0 + 2.0j) + 1.0, rtol=1e-12)


def abs_cubed(x): return np.sum(np.abs(x) ** 3 + np.abs(x) * 2.0) + np.sum(np.angle(x))


def test_hessian_vector_product_through_abs_and_angle():
    # reverse mode over the forward-mode code, which calls s2s.abs_slope and s2s.angle_slope
    x = np.array([0.5, -1.5, 2.0])
    v = np.array([1.0, 0.5, -2.0])
    (hv,) = s2sgrad.hvp(abs_cubed, (x,), (v,))
    np.testing.assert_allclose(hv, 6.0 * np.abs(x) * v, rtol=1e-12)


def prod_all(z): return np.prod(z)
def prod_all_scaled(z): return 2.0j * np.prod(z) + np.sum(z)
def prod_axis(z): return np.prod(z, axis=0)
def prod_keepdims(z): return np.prod(z, keepdims=True)


@pytest.mark.parametrize("fn", [prod_all, prod_all_scaled, prod_axis, prod_keepdims],
                         ids=lambda f: f.__name__)
def test_tangent_of_a_complex_product_keeps_its_imaginary_part(fn):
    # forward mode reads np.prod by reverse mode over the gradient (transpose.py); its seed was
    # a real 0.0 for one number, so the seed's adjoint, the tangent, lost its imaginary part
    z = np.array([1 + 2j, 0.5 - 1j, 2 + 0.3j])
    t = np.array([0.3 - 0.1j, 1 + 1j, -0.2 + 0.5j])
    value, tangent = s2sgrad.jvp(fn, (z,), (t,))
    eps = 1e-7
    want = (fn(z + eps * t) - fn(z - eps * t)) / (2 * eps)
    assert np.iscomplexobj(tangent) and np.shape(tangent) == np.shape(want)
    np.testing.assert_allclose(tangent, want, rtol=1e-6)
    np.testing.assert_allclose(value, fn(z))


def s_exp_times(z): return np.exp(z) * z
def s_abs(z): return np.abs(z) * 2.0
def s_conj_sum(z, w): return np.sum(np.conj(z) * w + z)
def s_angle(z): return np.angle(z)
def s_max_prod(z): return np.max(z) * np.prod(z)  # np.prod: forward mode by reverse over the gradient
def s_real_if_close(z): return np.real_if_close(z * 1j)


@pytest.mark.parametrize("fn, args, tangents", [
    (s_exp_times, (1.0 + 2.0j,), (0.3 - 0.5j,)),
    (s_abs, (1.0 + 2.0j,), (0.3 + 0.5j,)),
    (s_conj_sum, (1.0 - 2.0j, 0.5), (0.3 + 0.5j, -1.5)),
    (s_conj_sum, (1.0, 0.5 + 1.0j), (0.25, 1.0 - 0.5j)),
    (s_angle, (-1.0 + 0.5j,), (0.2 + 0.7j,)),
    (s_max_prod, (1.0 + 2.0j,), (0.3 - 0.5j,)),
    (s_real_if_close, (1.0 + 2.0j,), (0.3 - 0.5j,)),
], ids=["exp_times", "abs", "conj_sum", "conj_sum_second", "angle", "max_prod", "real_if_close"])
def test_jvp_at_a_python_complex_number(fn, args, tangents):
    # jvp took complex arrays but refused a Python complex (the argument check shared with grad,
    # whose gradient of one has no Python type to come back as); a tangent of one is a number
    value, tangent = s2sgrad.jvp(fn, args, tangents)
    eps = 1e-7
    plus = fn(*(a + eps * t for a, t in zip(args, tangents)))
    minus = fn(*(a - eps * t for a, t in zip(args, tangents)))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    want = sum(autograd.make_jvp(_twin(fn), argnum=i)(*args)(t)[1] for i, t in enumerate(tangents))
    np.testing.assert_allclose(tangent, want, rtol=1e-10)
