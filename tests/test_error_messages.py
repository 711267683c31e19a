"""Refusals point at the user's code and say what to do: the call that handed s2sgrad something
it cannot take, a method of the user's own class, a missing rule with what the table offers
instead, and a traceback without s2sgrad's own frames."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad

HERE = "tests/test_error_messages.py"
with open(os.path.join(os.path.dirname(__file__), "test_error_messages.py")) as _handle:
    LINES = _handle.read().splitlines()


def where(marker):
    """(line, column) of ``snippet`` on the line marked ``# <marker>`` (column of the snippet)."""
    hits = [i for i, text in enumerate(LINES) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, marker
    return hits[0] + 1, LINES[hits[0]]


def assert_located(err, marker, snippet, message, hint):
    """``err`` starts with this file's ``path:line:col:`` at ``snippet`` on the marked line, quotes
    that line with the caret under ``snippet``, and its message and hint match."""
    text = str(err)
    line, quoted = where(marker)
    col = quoted.index(snippet) + 1
    head, shown, caret = text.splitlines()[:3]
    assert head.startswith(f"{HERE}:{line}:{col}: "), text
    assert shown.strip() == quoted.strip(), text
    assert caret.index("^") == 4 + col - 1, text
    assert re.search(message, head), text
    hint_line = [ln for ln in text.splitlines() if ln.startswith("  hint: ")]
    assert hint_line and re.search(hint, hint_line[0]), text
    return text


def loss(x):
    return np.sum(np.sin(x) * x)


# ----- 1. a function s2sgrad returned, given back to it ---------------------------------------

AGAIN = "is a function s2sgrad returned that it cannot transform again yet"


def test_grad_of_a_vector_valued_grad_says_the_output_is_not_scalar():
    g = s2sgrad.grad(loss)  # s2sgrad transforms it again, but its output is x's shape
    with pytest.raises(s2sgrad.GradientError, match=r"grad requires s2sgrad\.grad\(loss\) to return a real scalar"):
        s2sgrad.grad(g)(np.ones(3))


@pytest.mark.parametrize("api", ["jvp", "hvp", "hessian", "vjp", "value_and_grad"])
def test_every_entry_point_refuses_a_returned_function(api):
    x = np.ones(3)
    _, g = s2sgrad.vjp(loss, x)  # a pullback: no generated function stands for it
    with pytest.raises(s2sgrad.TransformError) as info:
        if api == "jvp":
            s2sgrad.jvp(g, (x,), (x,))  # entry-jvp
        elif api == "hvp":
            s2sgrad.hvp(g, (x,), (x,))  # entry-hvp
        elif api == "hessian":
            s2sgrad.hessian(g)  # entry-hessian
        elif api == "vjp":
            s2sgrad.vjp(g, x)  # entry-vjp
        else:
            s2sgrad.value_and_grad(g)  # entry-value_and_grad
    assert_located(info.value, f"entry-{api}", f"s2sgrad.{api}(g",
                   rf"the pullback of s2sgrad\.vjp\(loss\) {AGAIN}",
                   r"a pullback of vjp is not one: transform a function that calls s2sgrad\.vjp")


def test_the_decorators_attributes_are_transformed_again():
    @s2sgrad.differentiable(order=2)
    def decorated(x):
        return np.sum(x * x * x)

    def along_itself(x):
        return np.sum(decorated.hvp(x, tangents=x))  # sum(6 x * x): its gradient is 12 x

    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(s2sgrad.grad(along_itself)(x), 12.0 * x)
    np.testing.assert_allclose(s2sgrad.grad(decorated)(x), 3 * x * x)
    # .hessian stands for s2sgrad.hessian's generated code: its Jacobian is the third derivative
    np.testing.assert_allclose(s2sgrad.jacfwd(decorated.hessian)(x),
                               np.einsum("i,ij,ik->ijk", 6.0 * np.ones(2), np.eye(2), np.eye(2)))
    # .grad and .value_and_grad stand for generated code: transformed again, not refused
    np.testing.assert_allclose(s2sgrad.jvp(decorated.grad, (x,), (x,))[1], 6 * x * x)
    (value, grad), (dvalue, dgrad) = s2sgrad.jvp(decorated.value_and_grad, (x,), (x,))
    np.testing.assert_allclose((value, dvalue), (np.sum(x ** 3), np.sum(3 * x ** 3)))
    np.testing.assert_allclose((grad, dgrad), (3 * x * x, 6 * x * x))


# ----- 2. methods and attributes of the user's own classes -----------------------------------


class Model:
    def __init__(self):
        self.W = np.arange(9.0).reshape(3, 3) / 10

    def predict(self, x):
        return np.tanh(self.W @ x)

    def loss(self, x, scale=1.0):
        return np.sum(np.tanh(self.W @ x) ** 2) * scale

    def calls_own_method(self, x):
        return np.sum(self.predict(x))  # own-method

    def reads_weights(self, x):
        return np.sum(self.W @ x)  # reads-weights


MODEL = Model()


def calls_model(x):
    return MODEL.loss(x)  # calls-model


def test_a_method_of_a_user_object_names_the_class_and_what_to_do(monkeypatch):
    x = np.array([0.3, -0.2, 0.5])
    u = np.tanh(MODEL.W @ x)  # MODEL.loss is read (lower/methods.py): d/dx sum(tanh(Wx)^2)
    np.testing.assert_allclose(s2sgrad.grad(calls_model)(x), MODEL.W.T @ (2 * u * (1 - u * u)))
    monkeypatch.setattr(Model, "loss", lambda self, x, scale=1.0: np.sum(x))  # replaced: not read
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(calls_model)
    text = assert_located(info.value, "calls-model", "MODEL.loss(x)",
                          r"`MODEL\.loss` is a method of `Model` \(your class\) that s2sgrad "
                          "cannot read here: its class is not defined in this file, or the method "
                          "was replaced at run time",
                          r"module-level `def` that takes the arrays.*s2sgrad\.grad\(MODEL\.loss\)")
    assert "register_gradient" not in text and "no Python source" not in text


def test_a_bound_method_calling_the_objects_own_method_is_differentiated():
    """Refused before: ``self.predict`` of a bound method. The object is an argument of the
    function (``self``), of a class of this file, so its methods are read (lower/methods.py)."""
    x = np.array([0.3, -0.2, 0.5])
    got = s2sgrad.grad(MODEL.calls_own_method)(x)
    np.testing.assert_allclose(got, numerical_grad(lambda x: MODEL.calls_own_method(x), (x,), 0),
                               rtol=1e-6, atol=1e-8)


def test_differentiating_the_object_itself_names_the_attribute():
    gradient = s2sgrad.grad(Model.reads_weights)  # the unbound function: `self` is differentiated
    with pytest.raises(s2sgrad.TransformError) as info:  # refused at a call with an array there
        gradient(np.ones(3), np.ones(3))  # (a pytree there, a dataclass, has fields to read)
    text = assert_located(info.value, "reads-weights", "self.W",
                          r"`self\.W` reads an attribute numpy arrays do not have from `self`",
                          r"pass `W` as an argument.*s2sgrad\.grad\(obj\.method\)")
    assert "the method `.W`" not in text and "register_gradient" not in text


def test_grad_of_a_bound_method_differentiates_its_explicit_arguments():
    x = np.array([0.3, -0.2, 0.5])
    got = s2sgrad.grad(MODEL.loss)(x)
    expected = numerical_grad(lambda x: MODEL.loss(x), (x,), 0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    value, both = s2sgrad.value_and_grad(MODEL.loss, argnums=(0, 1))(x, 2.0)
    assert value == pytest.approx(MODEL.loss(x, 2.0))
    np.testing.assert_allclose(both[0], 2 * expected, rtol=1e-6, atol=1e-8)
    assert both[1] == pytest.approx(MODEL.loss(x))
    assert s2sgrad.grad(MODEL.loss, argnums=-1)(x, 3.0) == pytest.approx(MODEL.loss(x))
    # a float argument takes forward mode; the object's attributes are read at each call
    other = Model()
    g = s2sgrad.grad(other.loss, argnums=1)
    assert g(x, 1.0) == pytest.approx(other.loss(x))
    other.W = other.W * 2
    assert g(x, 1.0) == pytest.approx(other.loss(x))


def test_a_bound_method_argnums_counts_explicit_parameters():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(MODEL.loss, argnums=2)  # method-argnums
    assert_located(info.value, "method-argnums", "s2sgrad.grad(MODEL.loss, argnums=2)",
                   r"argnums 2 does not fit 'loss' \(defined at tests/test_error_messages\.py:\d+\), "
                   r"which has 2 parameter\(s\): x, scale", "parameter positions")


def test_other_entry_points_refuse_a_bound_method_at_the_call():
    x = np.ones(3)
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.jvp(MODEL.loss, (x,), (x,))  # jvp-method
    assert_located(info.value, "jvp-method", "s2sgrad.jvp(MODEL.loss, (x,), (x,))",
                   r"Model\.loss is a bound method", r"s2sgrad\.grad and s2sgrad\.value_and_grad")


def test_the_cli_says_a_method_call_on_an_object_is_not_followed(tmp_path):
    """The command line reads a method of an object the file binds once to a call of its class
    (tests/lower/test_user_classes.py); of any other object it cannot know the class."""
    (tmp_path / "objects.py").write_text(textwrap.dedent("""\
        import numpy as np
        from s2sgrad import differentiable


        class Model:
            def loss(self, x):
                return np.sum(x * x)


        model = Model() if np else None  # not one call of the class: not known statically


        @differentiable
        def f(x):
            return model.loss(x)
        """))
    root = os.path.dirname(os.path.dirname(os.path.abspath(s2sgrad.__file__)))
    env = dict(os.environ, S2SGRAD_CACHE_DIR="", PYTHONPATH=root)
    done = subprocess.run([sys.executable, "-m", "s2sgrad", "emit", "objects.py", "-o", "gen"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("objects.py:15:12: no derivative rule for `model.loss`")
    assert "hint: if `model` is one of your objects: s2sgrad reads a method only where it knows " \
        "the object's class" in done.stderr


# ----- 3. locations: the call site, paths, the repeated call, the lambda ----------------------


def test_a_numpy_function_is_refused_at_the_call():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(np.sin)  # numpy-function
    text = assert_located(info.value, "numpy-function", "s2sgrad.grad(np.sin)",
                          r"s2sgrad differentiates Python functions; got ufunc", "call it inside one")
    assert "<unknown>" not in text


def test_argnums_is_located_at_the_call_with_a_relative_path():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(loss, argnums=3)  # bad-argnums
    text = assert_located(info.value, "bad-argnums", "s2sgrad.grad(loss, argnums=3)",
                          r"argnums 3 does not fit 'loss' \(defined at tests/test_error_messages"
                          r"\.py:\d+\), which has 1 parameter\(s\): x", "parameter positions")
    assert os.path.abspath(HERE) not in text


def test_a_refusal_in_a_lambda_points_into_it():
    gradient = s2sgrad.grad(lambda x: np.sum(np.sort(x) * x.no_such_method()))  # the-lambda
    with pytest.raises(s2sgrad.TransformError) as info:  # read as a def of its body
        gradient(np.ones(3))
    assert_located(info.value, "the-lambda", "x.no_such_method", "calls a method numpy arrays do "
                   "not have", "module-level `def`")


def repeated_call(x):
    y = np.linalg.lstsq(x, x)[0] + np.linalg.lstsq(x, x)[0]  # repeated
    return np.sum(y)


def second_is_the_problem(x):
    c = np.eye(3)
    y = np.linalg.lstsq(c, c)[0] + np.linalg.lstsq(x, x)[0]  # second-only
    return np.sum(y)


def test_the_caret_points_at_the_first_refused_occurrence():
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(repeated_call)
    assert_located(info.value, "repeated", "np.linalg.lstsq(x, x)", "numpy.linalg.lstsq", "pinv")
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.jvp(repeated_call, (np.eye(3),), (np.eye(3),))
    assert_located(info.value, "repeated", "np.linalg.lstsq(x, x)", "numpy.linalg.lstsq", "grad")


def test_the_caret_points_at_the_occurrence_that_is_refused():
    line, quoted = where("second-only")
    col = quoted.index("np.linalg.lstsq(x, x)") + 1
    for run in (lambda: s2sgrad.grad(second_is_the_problem),
                lambda: s2sgrad.jvp(second_is_the_problem, (np.eye(3),), (np.eye(3),))):
        with pytest.raises(s2sgrad.TransformError) as info:
            run()
        assert str(info.value).startswith(f"{HERE}:{line}:{col}: "), str(info.value)


def window_of_the_step_before(x, w):
    total = 0.0
    for k in range(len(w)):
        if k > 0:
            total = total + np.sum(x[j:j + 2] * w[k])  # stale-index
        j = k + 1
    return total


def scale_of_the_step_before(x, w):
    total = 0.0
    for k in range(len(w)):
        if k > 0:
            total = total + np.sum(x * w[k]) * c  # stale-value
        c = np.sin(w[k])
    return total


def test_a_value_the_step_before_assigned_is_refused_where_it_is_read():
    # An index's name read before the step assigns it would be read, in the backward sweep, as
    # the step assigned it (a gradient at the wrong place): refused as a value's is.
    for fn, marker, snippet in [(window_of_the_step_before, "stale-index", "j:j + 2"),
                                (scale_of_the_step_before, "stale-value", "c  #")]:
        with pytest.raises(s2sgrad.TransformError) as info:
            s2sgrad.grad(fn, argnums=(0, 1))
        assert_located(info.value, marker, snippet.split("  ")[0], "is read before it is assigned",
                       "in a loop, before the loop too")


def import_file(path, monkeypatch):
    import importlib.util

    name = f"s2sgrad_errors_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_a_file_outside_the_working_directory_is_named_by_its_absolute_path(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    module = elsewhere / "outside.py"
    module.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(np.linalg.lstsq(x, x)[0])\n\n\n"
                      "def square(x):\n    return np.sum(x * x)\n")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    outside = import_file(module, monkeypatch)
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(outside.f)
    assert str(info.value).startswith(f"{module}:5:19: no derivative rule for `numpy.linalg.lstsq`")
    assert "np.linalg.pinv" in str(info.value)
    text = s2sgrad.source(s2sgrad.grad(outside.square))
    assert "# source: outside.py:square" in text  # a generated header never holds an absolute path
    assert str(tmp_path) not in text


# ----- 4. what the rule table offers instead --------------------------------------------------


def lstsq_loss(a):
    return np.sum(np.linalg.lstsq(a, a)[0])  # lstsq


@pytest.mark.parametrize("fn,marker,snippet,name,advice", [
    (lstsq_loss, "lstsq", "np.linalg.lstsq(a, a)", "numpy.linalg.lstsq",
     r"write `np\.linalg\.solve\(a\.T @ a, a\.T @ b\)`.*`np\.linalg\.pinv\(a\) @ b`"),
])
def test_a_missing_rule_names_what_exists(fn, marker, snippet, name, advice):
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(fn)
    assert_located(info.value, marker, snippet, rf"no derivative rule for `{name}`",
                   rf"{advice}.*; or give it a rule with s2sgrad\.register_gradient\('{name}'\)")


def test_the_advice_names_functions_that_have_rules():
    from s2sgrad.rules import DEFAULT_TABLE

    for name, advice in DEFAULT_TABLE.instead.items():
        assert DEFAULT_TABLE.get(name) is None, name
        numpy_names = re.findall(r"\bnp\.([\w.]+)\(", advice)
        own = re.findall(r"\bs2sgrad\.(\w+)\(", advice)
        assert numpy_names or own, advice
        for short in numpy_names:
            assert DEFAULT_TABLE.get(f"numpy.{short}") is not None, (name, short)
        for short in own:
            assert short in s2sgrad.__all__, (name, short)


def test_close_names_come_from_the_table():
    from s2sgrad.rules import DEFAULT_TABLE

    assert DEFAULT_TABLE.suggest("numpy.nanmedian") == \
        "similar names with a rule: `np.nanmean`, `np.nanmin`"
    assert DEFAULT_TABLE.suggest("ndarray.cumprodd") == "similar names with a rule: `.cumprod`"
    assert DEFAULT_TABLE.suggest("numpy.linalg.cond") == ""
    assert DEFAULT_TABLE.suggest("numpy.fft.hfft") == ""


# ----- 5. tracebacks show the user's frames ---------------------------------------------------

SCRIPT = """\
import numpy as np
import s2sgrad


def f(x):
    return np.sum(np.linalg.lstsq(x, x)[0])


def main():
    return s2sgrad.grad(f)


main()
"""


def run_script(tmp_path, env_value):
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, S2SGRAD_CACHE_DIR="")
    env.pop("S2SGRAD_TRACEBACK", None)
    if env_value is not None:
        env["S2SGRAD_TRACEBACK"] = env_value
    root = os.path.dirname(os.path.dirname(os.path.abspath(s2sgrad.__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    return done.stderr


def test_a_refusal_traceback_shows_only_the_users_frames(tmp_path):
    err = run_script(tmp_path, None)
    package = os.path.dirname(os.path.abspath(s2sgrad.__file__))
    frames = re.findall(r'^  File "([^"]+)", line (\d+), in (\S+)$', err, re.M)
    # Before 3.11 a re-raise always adds the raising frame: the boundary's one line stays.
    boundary = [] if sys.version_info >= (3, 11) else [("boundary.py", "entry")]
    assert [(os.path.basename(f), n) for f, _, n in frames] == \
        [("user_script.py", "<module>"), ("user_script.py", "main")] + boundary, err
    if not boundary:
        assert package not in err
    assert "The above exception" not in err and "During handling" not in err
    assert textwrap.dedent("""\
        s2sgrad.TransformError: user_script.py:6:19: no derivative rule for `numpy.linalg.lstsq`""") in err


def test_full_tracebacks_come_back_with_the_variable(tmp_path):
    err = run_script(tmp_path, "full")
    package = os.path.dirname(os.path.abspath(s2sgrad.__file__))
    frames = re.findall(r'^  File "([^"]+)"', err, re.M)
    assert sum(f.startswith(package) for f in frames) >= 3, err
    assert "user_script.py:6:19: no derivative rule" in err
