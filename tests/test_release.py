"""Early release in the backward sweep: ``del`` after a name's last top-level read, the residuals
handed over to the backward so that those ``del`` lines free memory, and helpers that consume the
lists a loop collected. Placement rules on hand-built code, then the behaviour end to end."""

import sys
import tracemalloc

import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s
from s2sgrad.differentiate.release import release
from s2sgrad.program import Nest, Restore, lift, render


def _released(code, owned, kept, returns):
    """release over the IR of ``code`` (lines as text): (the lines it gives, the names freed)."""
    out, released = release(list(lift(code)), owned, kept, returns)
    return render(out, ""), released


def _lines(code):
    return render(lift(code), "")


def test_released_after_last_top_level_read():
    code = ["# y = f(x)", "a_bar = g * b", "c_bar = a_bar * 2", "d_bar = c_bar + b", "e = d_bar * 3"]
    out, released = _released(code, ("b",), frozenset({"g"}), ["e"])
    assert out == ["# y = f(x)", "a_bar = g * b", "c_bar = a_bar * 2", "del a_bar",
                   "d_bar = c_bar + b", "del b, c_bar", "e = d_bar * 3"]
    assert released == {"a_bar", "b", "c_bar"}


def test_nothing_released_right_before_the_return_or_for_kept_and_returned_names():
    code = ["a = x * 2", "b = a * 3"]
    out, released = _released(code, ("x",), frozenset({"x"}), ["b"])
    assert out == code and not released  # `a` dies with the frame; `x` is kept; `b` returned


def test_names_read_in_a_block_are_released_after_the_block_only_when_certainly_bound():
    loop = Nest("for h in reversed(tape):", ("h_bar = h_bar * h", "w = h * 2"))
    code = ["h_bar = g * 1.0", loop, "z = h_bar * 2", "y = z + 1"]
    out, released = _released(code, ("tape",), frozenset(), ["y"])
    # tape (a residual) and h_bar (bound above the loop) go after their last reads; `h` and `w`
    # are bound only inside the loop, which may run no iteration: never released.
    assert out == _lines(["h_bar = g * 1.0", loop, "del tape", "z = h_bar * 2", "del h_bar",
                          "y = z + 1"])
    assert "h" not in released and "w" not in released


def test_no_del_between_an_if_and_its_else():
    then = Nest("if c:", ("y = a * 2",))
    other = Nest("else:", ("y = a * 3",))
    code = ["a = g * 2", then, other, "z = y + 1", "w = z * 2"]
    out, _ = _released(code, (), frozenset(), ["w"])
    assert out == _lines(["a = g * 2", then, other, "del a", "z = y + 1", "w = z * 2"])


def test_restore_lines_bind_names():
    restore = Restore(None, ("h",), "loop1_saved")
    code = [restore, "a = h * 2", "b = a + 1"]
    out, released = _released(code, ("loop1_saved",), frozenset(), ["b"])
    assert out == _lines([restore, "del loop1_saved", "a = h * 2", "del h", "b = a + 1"])
    assert released == {"loop1_saved", "h"}


def chain(x):
    return np.sum(np.tanh(x) * np.exp(-x**2) + np.sin(x) ** 2)


def test_generated_backward_frees_residuals_after_their_last_use():
    text = s2sgrad.source(s2sgrad.grad(chain))
    backward = text[text.index("def chain_bwd"):text.index("def chain_grad")]
    assert "del residuals" in backward
    assert backward.index("del sin_x") < backward.index("tanh_x * exp_neg_x_pow_2 * x")
    wrapper = text[text.index("def chain_grad"):]
    assert "chain_bwd(chain_fwd(x)[1]" in wrapper  # handed over, not held by the wrapper


def test_pullback_still_runs_twice():
    x = np.linspace(-1.0, 1.0, 7)
    out, pullback = s2sgrad.vjp(chain, x)
    first = pullback(1.0)[0]
    second = pullback(2.0)[0]
    np.testing.assert_allclose(second, 2.0 * first, rtol=1e-14)


def _peak(fn, *args):
    fn(*args)
    fn(*args)  # the second call makes the code for these shapes (specialize.py): measure the third
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_value_and_grad_peak_is_that_of_a_careful_hand_written_gradient():
    # Allocation sizes, not timings: deterministic. The hand-written value and gradient of this
    # chain needs five arrays of x's size at its peak; holding every residual to the end took seven.
    # Python 3.10 keeps a call's arguments on the caller's stack until it returns, so there the
    # residual tuple (tanh, exp, sin of x) outlives the backward's `del` lines: one array more.
    x = np.linspace(-2.0, 2.0, 200_000)
    peak = _peak(s2sgrad.value_and_grad(chain), x)
    arrays = 5.2 if sys.version_info >= (3, 11) else 6.2
    assert peak <= arrays * x.nbytes, peak / x.nbytes


def test_loop_products_consume_their_collections():
    rng = np.random.default_rng(3)
    b = rng.normal(size=(4, 5))
    lefts = [rng.normal(size=4) for _ in range(6)]
    gs = [rng.normal(size=5) for _ in range(6)]
    expected = sum(np.outer(a, g) for a, g in zip(lefts, gs))
    lefts_in, gs_in = list(lefts), list(gs)
    np.testing.assert_allclose(s2s.matmul_vjp_b_sum(gs_in, lefts_in, b), expected, rtol=1e-13)
    assert lefts_in == [] and gs_in == []


@pytest.mark.parametrize("rank", [1, 2])
def test_loop_products_fall_back_with_the_left_operands_restored(rank):
    # Integer upstreams are not stacked: the pairwise path runs on left operands put back from
    # the stack already built (vectors as its rows, matrices as its blocks).
    rng = np.random.default_rng(4)
    b = rng.normal(size=(3, 2))
    if rank == 1:
        lefts = [rng.normal(size=3) for _ in range(3)]
        gs = [np.array([1, 2]), np.array([3, 4]), np.array([5, 6])]
    else:
        lefts = [rng.normal(size=(1, 3)), rng.normal(size=(2, 3))]
        gs = [np.array([[1, 2]]), np.array([[3, 4], [5, 6]])]
    expected = sum(s2s.matmul_vjp_b(g, a, b) for a, g in zip(lefts, gs))
    np.testing.assert_allclose(s2s.matmul_vjp_b_sum(list(gs), list(lefts), b), expected, rtol=1e-13)
