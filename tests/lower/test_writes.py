"""Calls that write into an argument (issue 24): np.add.at, ufuncs and reductions with ``out``,
np.copyto, np.put, np.place, np.putmask, np.fill_diagonal and the ndarray methods that change
their array are in-place updates of the written name, differentiated in every mode (against
finite differences; autograd cannot run them); the writes s2sgrad does not differentiate are
refused where they are written. Their gradient was zeros (the call was kept as an effect)."""

import numpy as np
import pytest
import write_inputs as wi
from s2sgrad.checks import numerical_grad

import s2sgrad

RNG = np.random.default_rng(24)
X = RNG.uniform(-1.0, 1.0, 6)
U = RNG.uniform(0.5, 1.5, 4)
A = RNG.uniform(-1.0, 1.0, (3, 3))

CASES = [
    (wi.add_at, (U,)),
    (wi.add_at_into_values, (X, U)),
    (wi.subtract_at, (X, U)),
    (wi.ufunc_out, (X,)),
    (wi.ufunc_out_positional, (X,)),
    (wi.ufunc_out_binary, (X, U)),
    (wi.reduction_out, (X,)),
    (wi.copyto, (X, U)),
    (wi.copyto_where, (X, U)),
    (wi.put, (X, U)),
    (wi.put_matrix, (X, U)),
    (wi.place, (X, U)),
    (wi.putmask, (X, U)),
    (wi.putmask_repeating, (X, U)),  # values repeat over flat positions, not broadcast
    (wi.fill_diagonal, (A,)),
    (wi.fill_method, (X, U)),
    (wi.sort_method, (X,)),
    (wi.put_method, (X, U)),
    (wi.out_none, (X,)),  # numpy's default: nothing is written
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_write_into_an_argument_is_differentiated(fn, args):
    argnums = tuple(range(len(args)))
    got = s2sgrad.grad(fn, argnums=argnums)(*args)
    for k in argnums:
        expected = numerical_grad(fn, args, k)
        np.testing.assert_allclose(got[k], expected, rtol=1e-5, atol=1e-7)
    assert any(np.any(g != 0) for g in got)  # it was zeros


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_forward_mode_and_second_order_of_a_write(fn, args):
    s2sgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, says", [
    (wi.shuffle, "`np.random.shuffle` changes `y` in place"),
    (wi.multiply_at, "only np.add.at and np.subtract.at are differentiated"),
    (wi.out_into_a_temporary, "is not a local array of this function"),
    (wi.copyto_into_a_global, "`W6`, which is not a local array"),
    (wi.write_nested, "differentiates such a call only as a statement of its own"),
    (wi.put_mode, "with `mode=` is not differentiated"),
    (wi.copyto_a_view, "may share its array with `z`"),
    (wi.out_read_through_the_returned_name, "may share its array with `z`"),
    (wi.out_with_where, "with both `out=` and `where=` is not differentiated"),
])
def test_a_write_s2sgrad_does_not_differentiate_is_refused_where_it_is_written(fn, says):
    args = (X, U)[:fn.__code__.co_argcount]
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(fn)(*args)
    text = str(info.value)
    assert says in text
    assert "write_inputs.py:" in text


def test_the_cli_reads_writes_without_running_the_file(tmp_path):
    from s2sgrad.cli import main

    source = tmp_path / "scatter.py"
    source.write_text("import numpy as np\nimport s2sgrad\n\n\n@s2sgrad.differentiable\n"
                      "def scatter(u, idx):\n    out = np.zeros(6)\n    np.add.at(out, idx, u)\n"
                      "    np.exp(out, out=out)\n    return np.sum(out)\n"
                      "\n\nraise SystemExit('the CLI ran the file')\n")
    assert main(["emit", str(source), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "scatter_grad.py").read_text()
    assert "s2s.getitem_vjp(u, out, idx)" in text and "np.exp(out_2)" in text


@pytest.mark.parametrize("fn", [wi.helper_writes_for_its_effect, wi.helper_writes_and_returns,
                                wi.helper_writes_into_a_value_whose_result_is_dropped])
def test_a_called_function_that_changes_its_parameter_in_place_is_refused(fn):
    # The caller's array changes; s2sgrad's helpers work on copies (or the call was run as
    # written and its change not differentiated: gradient 1.8 for 5.4 in silence).
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(fn)(X)
    assert "changes its parameter `a` in place" in str(info.value)
    assert "write_inputs.py:" in str(info.value)


def test_a_called_function_writing_into_its_own_copy_is_differentiated():
    got = s2sgrad.grad(wi.helper_writes_into_its_own_copy)(X)
    np.testing.assert_allclose(got, numerical_grad(wi.helper_writes_into_its_own_copy, (X,), 0),
                               rtol=1e-6, atol=1e-8)
