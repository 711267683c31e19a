"""Functions with several outputs (Rule.outputs) as a user writes them: a Gaussian log-likelihood
through slogdet, a PCA objective through eigh, a nuclear norm through svd(compute_uv=False), a
QR-based loss, the spectrum and modes of a non-symmetric matrix through eig; grad, jvp and hessian against autograd (against differences where autograd has no
rule), and the mechanism itself: an unread output's adjoint is zero, a kept result is indexed."""

from __future__ import annotations

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_every_mode
from s2sgrad.checks import numerical_grad

RNG = np.random.default_rng(27)
DATA = RNG.normal(size=(6, 3))
Y = RNG.normal(size=4)


def gaussian_loglik(L):
    cov = L @ L.T + np.eye(3)
    sign, logdet = np.linalg.slogdet(cov)
    quad = np.sum(DATA * np.linalg.solve(cov, DATA.T).T)
    return -0.5 * (DATA.shape[0] * logdet + quad) + 0.0 * sign


def gaussian_loglik_ag(L):
    cov = anp.dot(L, L.T) + anp.eye(3)
    sign, logdet = anp.linalg.slogdet(cov)
    quad = anp.sum(DATA * anp.linalg.solve(cov, DATA.T).T)
    return -0.5 * (DATA.shape[0] * logdet + quad) + 0.0 * sign


def pca_objective(A):
    cov = A @ A.T + np.diag([0.0, 1.0, 2.0])
    w, v = np.linalg.eigh(cov)
    top = v[:, 1:]
    return np.sum((DATA @ top) ** 2) + np.sum(w[1:])


def pca_objective_ag(A):
    cov = anp.dot(A, A.T) + anp.diag(anp.array([0.0, 1.0, 2.0]))
    w, v = anp.linalg.eigh(cov)
    top = v[:, 1:]
    return anp.sum(anp.dot(DATA, top) ** 2) + anp.sum(w[1:])


def nuclear_norm(A):
    return np.sum(np.linalg.svd(A, compute_uv=False)) + 0.1 * np.sum(A * A)


def nuclear_norm_ag(A):
    return anp.sum(anp.linalg.svd(A, compute_uv=False)) + 0.1 * anp.sum(A * A)


def svd_loss(A):
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    return np.sum(s ** 2 * np.arange(1.0, 4.0)) + np.sum((u @ vt) ** 3)


def svd_loss_ag(A):
    u, s, vt = anp.linalg.svd(A, full_matrices=False)
    return anp.sum(s ** 2 * anp.arange(1.0, 4.0)) + anp.sum(anp.dot(u, vt) ** 3)


def qr_loss(A):
    q, r = np.linalg.qr(A)
    return np.sum(np.log(np.abs(np.diagonal(r)))) + np.sum(q[:, 0] * Y) + np.sum(np.sin(q @ r))


def dynamics_loss(A):  # eig of a non-symmetric matrix with real eigenvalues: its spectrum and modes
    w, v = np.linalg.eig(A @ np.diag([1.0, 2.0, 3.5]) @ np.linalg.inv(A))
    return np.sum(w ** 2) + np.sum(v[:, 0] ** 2 * Y[:3]) + np.sum(np.linalg.eigvals(A + A.T) * Y[:3])


def dynamics_loss_ag(A):
    w, v = anp.linalg.eig(anp.dot(anp.dot(A, anp.diag(anp.array([1.0, 2.0, 3.5]))), anp.linalg.inv(A)))
    return anp.sum(w ** 2) + anp.sum(v[:, 0] ** 2 * Y[:3]) + anp.sum(anp.linalg.eig(A + A.T)[0] * Y[:3])


def _arg(shape):
    return RNG.normal(size=shape) + np.eye(*shape)


CASES = [
    (gaussian_loglik, gaussian_loglik_ag, (3, 3)),
    (pca_objective, pca_objective_ag, (3, 2)),
    (nuclear_norm, nuclear_norm_ag, (4, 3)),
    (svd_loss, svd_loss_ag, (4, 3)),
    (qr_loss, None, (4, 3)),
    (dynamics_loss, dynamics_loss_ag, (3, 3)),
]


@pytest.mark.parametrize("fn,twin,shape", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_jvp_and_hessian_agree_with_autograd(fn, twin, shape):
    assert_every_mode(fn, _arg(shape), twin, RNG.normal(size=shape))


def unread_output(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * 2.0


def kept_result(a):
    res = np.linalg.eigh(a)
    return np.sum(res[0] ** 3) + np.sum(res[1][:, 0] ** 4)


def kept_split(x):
    parts = np.split(x, 3)
    return np.sum(parts[0] * parts[2])


def test_slogdet_of_one_matrix_and_of_a_stack():
    grad = s2sgrad.grad(logdet_scaled)
    for shape in [(3, 3), (3, 3), (2, 3, 3), (2, 3, 3), (4, 4)]:  # each twice: then made for it
        a = RNG.normal(size=shape) + 4 * np.eye(shape[-1])
        np.testing.assert_allclose(grad(a), numerical_grad(logdet_scaled, (a,), 0), rtol=1e-6, atol=1e-8)


def logdet_scaled(a):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(logdet * 1.5)


def test_an_unread_output_has_a_zero_adjoint_and_a_kept_result_is_indexed():
    a = _arg((3, 3)) + 3 * np.eye(3)
    np.testing.assert_array_equal(s2sgrad.grad(unread_output)(a), np.zeros((3, 3)))
    for fn, x in ((kept_result, a + a.T), (kept_split, RNG.normal(size=6))):
        np.testing.assert_allclose(s2sgrad.grad(fn)(x), numerical_grad(fn, (x,), 0), rtol=1e-5, atol=1e-6)
        t = RNG.normal(size=x.shape)
        np.testing.assert_allclose(s2sgrad.jvp(fn, (x,), (t,))[1], np.sum(s2sgrad.grad(fn)(x) * t),
                                   rtol=1e-8)


def unpacked_generated(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w) + np.sum(v[0] ** 2)


def test_the_generated_code_reads_each_output_by_its_own_name():
    text = s2sgrad.source(s2sgrad.grad(unpacked_generated))
    assert "w, v = np.linalg.eigh(a)" in text
    assert "g[" not in text and "ans[" not in text  # the displays were substituted
    assert "s2s.eigh_gaps(w)" in text


def full_svd(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(u[:, 0] * 2.0) + np.sum(s)


def test_svd_with_full_matrices_of_a_non_square_matrix_is_refused_when_it_runs():
    with pytest.raises(ValueError, match="full_matrices=False"):
        s2sgrad.grad(full_svd)(RNG.normal(size=(4, 3)))
    square = RNG.normal(size=(3, 3))  # square: the full factors are the thin ones
    np.testing.assert_allclose(s2sgrad.grad(full_svd)(square), numerical_grad(full_svd, (square,), 0),
                               rtol=1e-5, atol=1e-6)


def qr_mode(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q) + np.sum(r)


def test_qr_with_a_mode_is_refused_with_its_location():
    with pytest.raises(s2sgrad.TransformError, match="mode="):
        s2sgrad.grad(qr_mode)


# ----- third order: grad of grad of grad, each level generated code read again --------------------

DIRECTION = np.random.default_rng(5).normal(size=(3, 3))
FIRST = SECOND = None  # set by the test: the gradients the levels above call


def eigh_cubic(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w ** 3) + np.sum(v[:, 0] ** 4)


def qr_cubic(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.sin(q)) + np.sum(r ** 3)


def along_first(a):
    return np.sum(FIRST(a) * DIRECTION)


def along_second(a):
    return np.sum(SECOND(a) * DIRECTION)


@pytest.mark.slow  # 5-10 s each: the slow tier (CI runs it)
@pytest.mark.parametrize("fn", [eigh_cubic, qr_cubic, svd_loss], ids=lambda f: f.__name__)
def test_third_derivatives_read_the_generated_code_again(fn):
    global FIRST, SECOND
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    FIRST = s2sgrad.grad(fn)
    SECOND = s2sgrad.grad(along_first)
    third = s2sgrad.grad(along_second)(a)
    np.testing.assert_allclose(third, numerical_grad(along_second, (a,), 0), rtol=1e-4, atol=1e-5)


# ----- complex matrices: the singular values alone by the convention, the rest refused -----------

def singular_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) * np.arange(1.0, 4.0))


def singular_values_ag(a):
    return anp.sum(anp.linalg.svd(a, compute_uv=False) * anp.arange(1.0, 4.0))


def test_complex_singular_values_follow_the_convention():
    a = RNG.normal(size=(4, 3)) + 1j * RNG.normal(size=(4, 3))
    got = s2sgrad.grad(singular_values)(a)
    np.testing.assert_allclose(got, autograd.grad(singular_values_ag)(a), rtol=1e-8, atol=1e-10)
    eps, want = 1e-6, np.zeros_like(a)  # df/dx - 1j df/dy
    for i in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[i] = eps
        dx = (singular_values(a + step) - singular_values(a - step)) / (2 * eps)
        dy = (singular_values(a + 1j * step) - singular_values(a - 1j * step)) / (2 * eps)
        want[i] = dx - 1j * dy
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def complex_eigh(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w) + np.sum(np.abs(v[0]) ** 2)


def complex_qr(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.abs(r))


def complex_slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet


def complex_eigvalsh(a):
    return np.sum(np.linalg.eigvalsh(a) * np.arange(3.0))


def complex_svd(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s) + np.sum(np.abs(u[0]))


def rotation_spectrum(a):  # a rotation's eigenvalues are complex: eig's rule covers real ones
    return np.sum(np.abs(np.linalg.eig(a)[0]))


def test_eig_with_complex_eigenvalues_in_reverse_mode_and_refused_in_forward_mode():
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    got = s2sgrad.grad(rotation_spectrum)(rotation)
    np.testing.assert_allclose(got, numerical_grad(rotation_spectrum, (rotation,), 0), rtol=1e-6, atol=1e-8)
    assert got.dtype == np.float64  # a real matrix's gradient is real
    with pytest.raises(s2sgrad.GradientError, match=r"np\.linalg\.eig \(real eigenvalues\)"):
        s2sgrad.jvp(rotation_spectrum, (rotation,), (np.eye(3),))


def eigh_phases(a):  # reads the eigenvectors' phases, which numpy leaves arbitrary (its first
    w, v = np.linalg.eigh(a)  # row comes out real: a function of it alone does not turn them)
    return np.sum(np.real(v[1]))


def complex_differences(fn, a, eps=1e-6):
    """d fn/d Re a - 1j d fn/d Im a, entry by entry (the convention's gradient)."""
    out = np.zeros_like(a)
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = eps
        along_re = (fn(a + step) - fn(a - step)) / (2 * eps)
        along_im = (fn(a + 1j * step) - fn(a - 1j * step)) / (2 * eps)
        out[index] = along_re - 1j * along_im
    return out


def test_eigh_of_a_hermitian_matrix_in_reverse_mode_and_its_phases_refused():
    a = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    a = a + np.conj(a.T)  # eigh reads the lower triangle, as numpy does
    got = s2sgrad.grad(complex_eigh)(a)
    np.testing.assert_allclose(got, complex_differences(complex_eigh, a), rtol=1e-6, atol=1e-8)
    twin = autograd.grad(lambda b: anp.sum(anp.linalg.eigh(b)[0]) + anp.sum(anp.abs(anp.linalg.eigh(b)[1][0]) ** 2))
    np.testing.assert_allclose(got, twin(a), rtol=1e-10, atol=1e-12)
    with pytest.raises(s2sgrad.GradientError, match="phases of its eigenvectors"):
        s2sgrad.grad(eigh_phases)(a)
    with pytest.raises(s2sgrad.GradientError, match="real matrices only"):  # forward mode: real only
        s2sgrad.jvp(complex_eigh, (a,), (a,))


@pytest.mark.parametrize("fn", [complex_qr, complex_slogdet, complex_eigvalsh],
                         ids=lambda f: f.__name__)
def test_complex_matrices_are_refused_when_the_derivative_runs(fn):
    a = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    grad = s2sgrad.grad(fn)
    for _ in range(2):  # the code for any shape, then the code made for one matrix (Rule.ranked)
        with pytest.raises(s2sgrad.GradientError, match="real matrices only"):
            grad(a + np.conj(a.T))


def svd_factors(a):  # reads u and vt only through functions that leave the phases alone
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return (np.sum(s * np.arange(1.0, 4.0)) + np.sum(np.abs(u[0]) ** 3)
            + np.sum(np.abs(vt[:, 0]) ** 2 * np.arange(3.0)) + np.sum(np.real(u @ vt) ** 2 * DATA[:np.shape(a)[0], :1]))


def svd_factors_ag(a):
    u, s, vt = anp.linalg.svd(a, full_matrices=False)
    return (anp.sum(s * anp.arange(1.0, 4.0)) + anp.sum(anp.abs(u[0]) ** 3)
            + anp.sum(anp.abs(vt[:, 0]) ** 2 * anp.arange(3.0))
            + anp.sum(anp.real(anp.dot(u, vt)) ** 2 * DATA[:anp.shape(a)[0], :1]))


def svd_phases(a):  # the real part of u's row turns with the phases numpy leaves arbitrary
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.real(u[1]))


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_of_a_complex_matrix_in_reverse_mode_to_second_order_and_its_phases_refused(shape):
    a = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    got = s2sgrad.grad(svd_factors)(a)
    np.testing.assert_allclose(got, complex_differences(svd_factors, a), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, autograd.grad(svd_factors_ag)(a), rtol=1e-10, atol=1e-12)
    direction = RNG.normal(size=shape) + 1j * RNG.normal(size=shape)
    first = s2sgrad.grad(svd_factors)

    def along(b):
        return np.real(np.sum(first(b) * direction))

    np.testing.assert_allclose(s2sgrad.grad(along)(a), complex_differences(along, a), rtol=1e-5, atol=1e-6)
    with pytest.raises(s2sgrad.GradientError, match="phases of its singular vectors"):
        s2sgrad.grad(svd_phases)(a)
    # forward mode: the singular values alone (their tangent is Re(diag(U^H da V))); the factors'
    # tangents cannot see whether the function turns the phases, so they stay real-only
    value, tangent = s2sgrad.jvp(singular_values, (a,), (direction,))
    np.testing.assert_allclose(tangent, np.real(np.sum(s2sgrad.grad(singular_values)(a) * direction)),
                               rtol=1e-10)
    with pytest.raises(s2sgrad.GradientError, match="real matrices only"):
        s2sgrad.jvp(svd_factors, (a,), (direction,))


def eig_modes(a):  # reads the eigenvectors only through functions that leave their phases alone
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 3) + np.sum(np.abs(v[0]) ** 3) + np.sum(np.real(w * w) * np.arange(3.0))


def eig_modes_ag(a):
    w, v = anp.linalg.eig(a)
    return anp.sum(anp.abs(w) ** 3) + anp.sum(anp.abs(v[0]) ** 3) + anp.sum(anp.real(w * w) * anp.arange(3.0))


def eigvals_energy(a):
    return np.sum(np.abs(np.linalg.eigvals(a) * np.arange(1.0, 4.0)) ** 2)


def eig_phases(a):
    w, v = np.linalg.eig(a)
    return np.sum(np.real(v[1]))


@pytest.mark.parametrize("kind", ["complex", "real with complex eigenvalues"])
def test_eig_and_eigvals_of_complex_spectra_in_reverse_mode_to_second_order(kind):
    a = RNG.normal(size=(3, 3)) + (1j * RNG.normal(size=(3, 3)) if kind == "complex" else 0.0)
    if kind != "complex":
        a = np.array([[0.2, -1.0, 0.3], [1.1, 0.1, -0.4], [0.5, 0.2, 1.5]])  # a pair of complex eigenvalues
        assert np.iscomplexobj(np.linalg.eigvals(a))
    differences = complex_differences if kind == "complex" else (lambda f, x: numerical_grad(f, (x,), 0))
    direction = RNG.normal(size=(3, 3)) + (1j * RNG.normal(size=(3, 3)) if kind == "complex" else 0.0)
    for fn in (eig_modes, eigvals_energy):
        first = s2sgrad.grad(fn)
        got = first(a)
        assert np.iscomplexobj(got) == (kind == "complex")
        np.testing.assert_allclose(got, differences(fn, a), rtol=1e-6, atol=1e-7)

        def along(b):
            return np.real(np.sum(first(b) * direction))

        np.testing.assert_allclose(s2sgrad.grad(along)(a), differences(along, a), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2sgrad.grad(eig_modes)(a), autograd.grad(eig_modes_ag)(a), rtol=1e-9, atol=1e-11)
    # forward mode: the eigenvalues alone of any matrix; eig's eigenvectors real-only
    value, tangent = s2sgrad.jvp(eigvals_energy, (a,), (direction,))
    np.testing.assert_allclose(tangent, np.real(np.sum(s2sgrad.grad(eigvals_energy)(a) * direction)), rtol=1e-10)
    with pytest.raises(s2sgrad.GradientError, match="real matrices only"):
        s2sgrad.jvp(eig_modes, (a,), (direction,))
    if kind == "complex":
        with pytest.raises(s2sgrad.GradientError, match="phases of its eigenvectors"):
            s2sgrad.grad(eig_phases)(a)
