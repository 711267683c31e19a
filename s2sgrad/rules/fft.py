"""The discrete Fourier transforms of ``np.fft``: linear, each adjoint the same transform of the
upstream with the input's resizing undone (runtime/fft.py), and the shifts, each the other's
transpose."""

from .table import defvjp


def _transform(kind: str, signature: str, args: str, helper: str):
    """The rule of ``np.fft.<kind>`` (linear in ``a``; ``args``: the size, axes and norm passed on
    to the adjoint ``helper`` of its signature)."""
    return defvjp(f"numpy.fft.{kind}{signature}", linear=("a",),
                  a=f"s2s.{helper}(g, a, '{kind}', {args})")


_ONE = ("(a, n=None, axis=-1, norm=None)", "n, axis, norm", "fft_vjp")
_TWO = ("(a, s=None, axes=(-2, -1), norm=None)", "s, axes, norm", "fft2_vjp")
_MANY = ("(a, s=None, axes=None, norm=None)", "s, axes, norm", "fftn_vjp")

RULES = (
    *(_transform(kind, *_ONE) for kind in ("fft", "ifft", "rfft", "irfft")),
    *(_transform(kind, *_TWO) for kind in ("fft2", "ifft2", "rfft2", "irfft2")),
    *(_transform(kind, *_MANY) for kind in ("fftn", "ifftn", "rfftn", "irfftn")),
    defvjp("numpy.fft.fftshift(x, axes=None)", linear=("x",), x="np.fft.ifftshift(g, axes)"),
    defvjp("numpy.fft.ifftshift(x, axes=None)", linear=("x",), x="np.fft.fftshift(g, axes)"),
)
