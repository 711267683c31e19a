"""Rules of the helpers of s2sgrad/runtime/fft.py: each ``<family>_vjp`` and ``<family>_apply``
is linear, each the other's transpose (the transforms' matrices are symmetric)."""

from ..table import defvjp


def _pair(family: str, size: str, axes: str):
    """The rules of ``s2s.<family>_vjp`` and ``s2s.<family>_apply`` (``size``, ``axes``: their
    parameters with their defaults)."""
    names = f"{size.split('=')[0]}, {axes.split('=')[0]}, norm"
    return (
        defvjp(f"s2sgrad.runtime.{family}_vjp(value, a, kind, {size}, {axes}, norm=None)",
               linear=("value",), constant_in=("a",),
               value=f"s2s.{family}_apply(g, kind, {names})"),
        defvjp(f"s2sgrad.runtime.{family}_apply(x, kind, {size}, {axes}, norm=None)",
               linear=("x",), x=f"s2s.{family}_vjp(g, x, kind, {names})"),
    )


RULES = (
    *_pair("fft", "n=None", "axis=-1"),
    *_pair("fft2", "s=None", "axes=(-2, -1)"),
    *_pair("fftn", "s=None", "axes=None"),
)
