"""Regression tests for gradients that were once wrong in silence (issue 11), each checked
against finite differences and autograd, in every mode that accepts the program."""

import re

import numpy as np
import pytest
import silent_inputs as si
from conftest import assert_gradients
from s2sgrad.checks import numerical_grad

import s2sgrad

RNG = np.random.default_rng(11)
A2, B3 = RNG.normal(size=2), RNG.normal(size=3)


@pytest.mark.parametrize("fn, args", [
    (si.tuple_to_helper, (A2, B3)),
    (si.list_to_helper, (A2, B3)),
    (si.tuple_to_helper_with_keyword, (A2, RNG.normal(size=2))),
    (si.nested_helper_tuple, (A2, RNG.normal(size=2))),
])
def test_a_sequence_passed_to_a_helper_keeps_its_gradient(fn, args):
    # A tuple display passed to a helper lost its adjoint (zeros); items of different shapes
    # made the helper's adjoint of the sequence fail, and two reads of it concatenated.
    got = assert_gradients(fn, *args, argnums=(0, 1))
    assert all(np.all(g != 0) for g in got)


@pytest.mark.parametrize("fn, args, argnums", [
    (si.active_then_constant, (np.array([0.687, 0.97, -0.312, 0.513]), -0.555), (0,)),
    (si.tuple_joined_twice, (A2, RNG.normal(size=2)), (0, 1)),
    (si.list_summed_twice, (A2, RNG.normal(size=2)), (0, 1)),
])
def test_the_adjoint_of_a_sequence_adds_element_by_element(fn, args, argnums):
    # A sequence's adjoint (s2s.Parts) updated with += was extended, not added to: the first
    # item's adjoint was dropped (seed 62165); the helpers returning one adjoint per item
    # returned plain lists, which + concatenated.
    got = assert_gradients(fn, *args, argnums=argnums)
    assert all(np.any(g != 0) for g in got)


X2, Y2 = np.array([0.3, -0.7]), np.array([1.0, 2.0])


def test_a_default_naming_an_enclosing_value_is_its_value():
    fn = si.make_with_default(3.0)
    assert_gradients(fn, X2, Y2)
    np.testing.assert_allclose(s2sgrad.grad(fn)(X2, Y2), 3.0 * Y2)
    np.testing.assert_allclose(s2sgrad.grad(fn)(X2, Y2, 5.0), 5.0 * Y2)
    s2sgrad.check_grads(fn, (X2, Y2), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("c", [1.5, -0.25])
def test_a_closure_calling_a_closure_sees_its_free_values(c):
    fn = si.make_calling_closures(c)
    got = assert_gradients(fn, X2)
    np.testing.assert_allclose(got[0], c * (np.cos(X2) * X2 + np.sin(X2)))
    s2sgrad.check_grads(fn, (X2,), order=2, modes=("rev", "fwd"))


def test_a_helper_closure_value_and_a_local_of_the_same_name_stay_apart():
    fn = si.make_shadowing_closures(0.5)
    np.testing.assert_allclose(s2sgrad.grad(fn)(X2), 10.0 * 0.5 * 2.0 * np.cos(X2))


FACTORY = """\
import numpy as np
import s2sgrad


def make(fn):
    def f(x):
        return np.sum(fn(x))

    return f


print(repr(s2sgrad.grad(make(np.{name}))(0.5)))
"""


def test_the_disk_cache_keys_closure_values(tmp_path):
    # make(np.sin) cached, then make(np.cos) in a later process: the same inner def, another rule.
    import subprocess
    import sys

    (tmp_path / "factory_sin.py").write_text(FACTORY.format(name="sin"))
    (tmp_path / "factory_cos.py").write_text(FACTORY.format(name="cos"))
    env = {**__import__("os").environ, "S2SGRAD_CACHE_DIR": str(tmp_path / "cache")}
    out = {}
    for name in ("sin", "sin", "cos"):
        (tmp_path / "factory.py").write_text(FACTORY.format(name=name))
        run = subprocess.run([sys.executable, "factory.py"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True)
        out.setdefault(name, []).append(float(run.stdout))
    assert out["sin"] == [np.cos(0.5), np.cos(0.5)]
    assert out["cos"] == [-np.sin(0.5)]
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 4  # sin, cos: reverse and forward


STALE = """\
import numpy as np


def f(x):
    return np.sum(x ** {power})
"""


def _module_from(path, name):
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_a_reloaded_module_is_differentiated_from_its_new_text(tmp_path, monkeypatch):
    import importlib
    import os

    monkeypatch.setenv("S2SGRAD_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "stale_reload.py"
    path.write_text(STALE.format(power=2))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("stale_reload")
    assert s2sgrad.grad(module.f)(3.0) == 6.0
    path.write_text(STALE.format(power=3))
    os.utime(path, (1, 1))  # a new mtime even within the file system's time resolution
    module = importlib.reload(module)
    assert s2sgrad.grad(module.f)(3.0) == 27.0
    assert "x**3" in s2sgrad.source(s2sgrad.grad(module.f))


def test_a_file_edited_but_not_reloaded_is_refused(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("S2SGRAD_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "stale_edit.py"
    path.write_text(STALE.format(power=2))
    module = _module_from(path, "stale_edit")
    assert s2sgrad.grad(module.f)(3.0) == 6.0
    path.write_text(STALE.format(power=3))
    os.utime(path, (1, 1))
    with pytest.raises(s2sgrad.TransformError, match=r"stale_edit.py:4:1: the file holding f has "
                       r"changed since f was defined(.|\n)*hint: reload the module"):
        s2sgrad.grad(module.f)


ALIASED = {  # function -> (line, column) of the update, the updated and the other name
    "a1": (7, 5, "z", "y"), "a2": (11, 5, "z", "y"), "a3": (15, 5, "z", "y"),
    "a4": (34, 9, "y", "w"), "a5": (46, 5, "z", "y"), "a6": (55, 9, "row", "xs"),
    "a7": (100, 5, "first", "h"),
    "a8": (121, 13, "y", "t"),  # bound in one branch, changed in the other on a later trip
    "a9": (131, 5, "w", "z"),  # after an early return: was accepted, a wrong gradient (seed 59)
    "a10": (148, 9, "z", "y"),  # in a loop, the same array on every trip
    "a11": (160, 5, "cur", "keep"),  # after a loop that may end at a break
}


@pytest.mark.parametrize("name", sorted(ALIASED))
def test_an_in_place_update_of_a_shared_array_is_refused(name):
    import alias_inputs

    line, col, owner, other = ALIASED[name]
    with pytest.raises(s2sgrad.TransformError) as info:  # when transformed, or (where code for
        # calls passing numbers is made: a number is immutable) at a call with an array
        s2sgrad.grad(getattr(alias_inputs, name))(np.full((3, 3), 0.5))
    text = str(info.value)
    assert text.startswith(f"tests/inputs/alias_inputs.py:{line}:{col}: `{owner}` may share its array "
                           f"with `{other}`"), text
    assert f"copy first (`{owner} = {other}.copy()`)" in text


# ok10: a view bound on one path, a write on the other; ok11: a new array each trip, the last
# trip's kept by another name (was refused: a binding added to what a name may be); ok12: a loop's
# carry rebinding the name an update made (was refused: taken for the update; seed 45 at second
# order, in generated code)
@pytest.mark.parametrize("name", ["ok1", "ok2", "ok3", "ok4", "ok5", "ok6", "ok7", "ok8", "ok9",
                                  "ok10", "ok11", "ok12"])
def test_updates_no_other_live_name_sees_are_differentiated(name):
    import alias_inputs

    fn = getattr(alias_inputs, name)
    x = np.array([0.5, -1.0, 2.0])
    assert_gradients(fn, x, autograd_oracle=name == "ok2")  # autograd has no .copy or += on boxes


def test_a_name_returned_twice_gets_both_cotangents():
    # The second occurrence's cotangent was dropped (`y_bar, _ = f_bar`).
    x = np.array([0.3, 0.5])
    np.testing.assert_allclose(s2sgrad.grad(si.uses_same_twice)(x), 5.0 * np.cos(x))
    _, pullback = s2sgrad.vjp(si.same_twice, x)
    np.testing.assert_allclose(pullback((np.ones(2), 2.0 * np.ones(2)))[0], 3.0 * np.cos(x))


def test_second_order_through_a_helper_returning_nested_tuples():
    # The helper's forward-mode code returns ((value...), (tangent...)): reverse mode over it
    # dropped the nested cotangents (found by the program generator, seed 7083).
    x = np.array([[0.3, 0.5], [0.1, -0.4]])
    s2sgrad.check_grads(si.indexes_a_pair, (x,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", [si.last_list_after_loop, si.last_slice_after_loop])
def test_a_loop_value_read_after_the_loop_whose_shape_changes_per_iteration(fn):
    # Its adjoint was zeroed for the earlier iterations with the wrong iteration's value (a list
    # of another length: IndexError; found by the program generator, seed 7097).
    assert_gradients(fn, np.array([0.3, -0.5, 0.8]))


@pytest.mark.parametrize("fn", [si.widened_in_a_loop, si.widened_by_a_loop_target,
                                si.widened_in_a_while_loop])
def test_a_name_read_before_a_loop_that_rebinds_it_to_another_shape(fn):
    # One shape record held the last value's shape: the read before the loop unbroadcast its
    # adjoint to the wrong shape (a wrong gradient in silence; found at second order by the
    # program generator, seed 129: the first-order backward sweep rebinds a loop target).
    x = np.array([0.3, -0.5, 0.9])
    assert_gradients(fn, x)
    s2sgrad.check_grads(fn, (x,), order=2, modes=("rev", "fwd"))


def test_a_break_in_a_loop_inside_a_loop_else_is_restructured():
    # The loops in a loop's `else` were left as written, so their `break` was refused
    # (found by the program generator, seed 20006).
    x = np.array([0.3, -0.2, 0.9, 0.1])
    assert_gradients(si.break_in_a_loop_else, x)
    s2sgrad.check_grads(si.break_in_a_loop_else, (x,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn, x", [
    (si.row_at_break, np.array([[0.1, 0.2], [0.4, 0.3], [-0.2, 0.1]])),
    (si.index_at_break, np.array([0.1, 0.7, 0.2, 0.9])),
])
def test_a_loop_target_keeps_its_value_at_a_break(fn, x):
    # The restructured loop went on binding its target after the break (the value and the
    # gradient were those of the last row; found by the program generator, seed 20001).
    np.testing.assert_allclose(s2sgrad.value_and_grad(fn)(x)[0], fn(x))
    assert_gradients(fn, x)
    s2sgrad.check_grads(fn, (x,), order=2, modes=("rev", "fwd"))


def test_unpacked_loop_targets_keep_their_values_at_a_break():
    x, y = np.array([0.1, 0.3, 0.7, 0.2]), np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(s2sgrad.value_and_grad(si.pair_at_break)(x, y)[0], si.pair_at_break(x, y))
    assert_gradients(si.pair_at_break, x, y)


def test_one_name_with_two_values_in_a_function_and_its_helper_is_refused():
    # The generated code of both shares one namespace: the helper would have read the caller's.
    with pytest.raises(s2sgrad.TransformError, match=r"`SCALE` is one value in "
                       r"reads_global_and_a_closure_of_the_same_name and another in "
                       r"make_shadowing_global.<locals>.inner"):
        s2sgrad.grad(si.reads_global_and_a_closure_of_the_same_name)(X2)


def test_a_name_a_nested_loop_carries_is_recorded_for_the_other_path():
    # The branch that does not run the loop zeroed the adjoint of `p6` from a value never
    # recorded: UnboundLocalError in the generated code (found by the program generator, seed 30038).
    import seed30038_program as prog

    from s2sgrad.checks import numerical_grad

    args = INPUTS_30038
    got = s2sgrad.grad(prog.f, argnums=(0, 1, 2))(*args)
    for i in range(3):
        np.testing.assert_allclose(got[i], numerical_grad(prog.f, args, i), rtol=1e-5, atol=1e-6)
    assert_gradients(si.loop_name_reused_in_a_branch, np.array([[0.3, -0.2], [0.5, 0.1]]),
                     np.array([0.2, 0.4]))


INPUTS_30038 = (
    np.array([[0.608, 0.405, 0.903, 0.678], [0.096, 0.617, -0.45, 0.683],
              [-0.211, 0.941, -0.556, -0.334]]),
    np.array([0.501, 0.361, 0.674, -0.579]), 0.501, True)


def test_a_helper_returning_a_tuple_of_constants():
    # `return -0.75, -2.0` became `return -0.75, -2.0, ()` in the forward sweep (program
    # generator, seed 30132).
    x = np.array([0.3, 0.5])
    np.testing.assert_allclose(s2sgrad.grad(si.uses_constant_pair)(x), [-0.75, -0.75])


def test_a_ragged_tuple_argument_with_a_zero_adjoint():
    # s2s.zeros_like of a tuple of arrays of two shapes raised (program generator, seed 50115).
    x, v = np.array([[0.3, 0.5], [0.1, 0.2]]), np.array([0.2, 0.4, 0.6])
    assert_gradients(si.passes_a_ragged_pair, x, v)


def carried_by_an_inner_loop(x):
    c = x * 2.0
    total = x * 0.0
    for i in range(2):
        for j in range(1):
            total = total + c * 1.0
            c = x * 0.0
    return np.sum(total * total)


def test_a_value_an_inner_loop_carries_is_carried_by_the_outer_loop_too():
    # Found by the property test's grad-of-grad check (reading generated backward loops, which
    # carry adjoints through nested loops): the inner loop handed `c` back under its entry name,
    # so the outer loop did not carry it, and its backward reset c's adjoint each iteration and
    # dropped the contribution of `c = x * 2.0`: zeros, silently.
    x = np.array([0.3, -0.4])
    np.testing.assert_allclose(s2sgrad.grad(carried_by_an_inner_loop)(x),
                               numerical_grad(carried_by_an_inner_loop, (x,), 0), rtol=1e-7)


@pytest.mark.parametrize("fn, line, says", [
    (si.calls_an_indexed_pullback, "pullback = s2sgrad.vjp(sine_cubed, x)[1]", "s2sgrad.vjp"),
    (si.calls_a_computed_function, "return np.sum(fn(scale))", "a value this function computes"),
    (si.calls_a_function_variable, "return np.sum(fn(x))", "calls the value of the variable `fn`"),
])
def test_a_call_of_a_computed_value_is_refused_in_both_modes(fn, line, says):
    # The call `pullback(1.0)` read no value that carries a derivative, so it was taken as a
    # constant: grad of a loss calling vjp's pullback gave a gradient without the Hessian term
    # (zeros when the pullback's value was all of it), silently. The called value is now an
    # operand of the call, and a call s2sgrad cannot see into is refused where it is written
    # (`out, pullback = s2sgrad.vjp(f, x)` itself is differentiated: tests/test_composition.py).
    x = np.array([0.3, -0.7, 1.1])
    args = (x, 2.0) if fn is si.calls_a_computed_function else (x,)
    for transform in (lambda: s2sgrad.grad(fn)(*args),
                      lambda: s2sgrad.jvp(fn, args, (x,) + args[1:])):
        with pytest.raises(s2sgrad.TransformError, match=re.escape(says)) as info:
            transform()
        assert line in str(info.value) and "silent_inputs.py:" in str(info.value)


def test_grad_through_a_gradient_that_slices_a_list():
    # The adjoint of lst[:-1] indexes a list of adjoints by (slice(None, -1),) when reversed
    # again: list indices must be integers (generator seed 371, grad of value_and_grad).
    x = np.array([0.3, -0.5, 0.8])
    got = s2sgrad.grad(si.direction_of_slices_a_list)(x)
    np.testing.assert_allclose(got, numerical_grad(si.direction_of_slices_a_list, (x,), 0),
                               rtol=1e-6, atol=1e-8)
    s2sgrad.check_grads(si.slices_a_list, (x,), order=2, modes=("rev", "fwd"))


def powers_of_a_counter(x):
    t = 0.0
    for i in range(3):
        t = t + np.sum(x ** (i + 1))
    return t


def test_a_counter_exponent_read_back_from_a_tape_adds_no_nan_at_second_order():
    # the exponent i + 1 comes back from the loop's tape with a zero tangent; d x**y / dy is
    # log(x) x**y, not real for x < 0: a zero tangent times it must add 0, not NaN
    x = np.array([0.3, -0.5, 0.7, -1.2])
    np.testing.assert_allclose(s2sgrad.hessian(powers_of_a_counter)(x), np.diag(2.0 + 6.0 * x),
                               rtol=1e-12)
    s2sgrad.check_grads(powers_of_a_counter, (x,), order=2, modes=("rev", "fwd"))


@pytest.mark.parametrize("fn", [si.list_display_scaled, si.tuple_display_added])
@pytest.mark.parametrize("args", [(1.5, -0.75), (np.float64(0.3), np.float64(2.0)),
                                  (np.array([0.2, -0.4]), np.array([1.1, 0.6]))])
def test_a_list_display_given_to_an_elementwise_function_is_an_array(fn, args):
    # The scalar analysis took an elementwise function's result as a number when its only other
    # operands were numbers, skipping list and tuple displays (arrays of them): the product's
    # adjoint was not summed back to a number's shape (13 for 10: session 17). (autograd keeps
    # its boxes inside the list and cannot run these.)
    assert_gradients(fn, *args, argnums=(0, 1), autograd_oracle=False)
    s2sgrad.check_grads(fn, args, order=2, modes=("rev",))  # forward mode refuses a display operand


def test_a_value_named_underscore_is_never_overwritten_by_a_discarded_adjoint():
    # The backward sweep unpacked the cotangent of a tuple output's constant item into `_`,
    # overwriting the user's value `_` that a later line of the sweep read (a wrong gradient,
    # silent); at second order the same happened to a generated `_` (generator seed 68).
    # Discards take a name nothing else has (lower/naming.Namer.discard).
    x = np.array([0.3, 0.7, -0.4])
    _, pullback = s2sgrad.vjp(si.underscore_and_a_constant_output, x)
    np.testing.assert_allclose(pullback((1.0, 0.5))[0], np.sin(x) + x * np.cos(x), rtol=1e-12)
    y = np.array([0.5, -1.1, 0.2])
    assert_gradients(si.underscore_read_after_an_unpack, x, y, argnums=(0, 1))
    s2sgrad.check_grads(si.underscore_read_after_an_unpack, (x, y), order=2, modes=("rev", "fwd"))
    assert_gradients(si.underscore_read_after_a_loop, x)  # a loop with no tape counts with `_`
