"""The CLI with dict arguments: an emitted file's ``<f>_grad`` takes a dict read by literal keys
(nested too, beside arrays) and returns the gradient as a dict of the argument's keys, equal to
autograd's; whole uses and second order are refused at emit time with a location."""

from __future__ import annotations

import numpy as np
import pytest

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")

from test_cli import import_generated, run, write  # noqa: E402

MODEL = '''\
import numpy as np
from s2sgrad import differentiable


@differentiable
def mlp(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


@differentiable(wrt=("net", "scale"))
def nested(net, scale, x):
    h = np.sin(x @ net["enc"]["W"]) * scale
    return np.sum(h @ net["dec"]["W"] ** 2) + 0.5 * np.sum(net["dec"]["b"] * h[0])
'''


def _tree_close(got, want):
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for key in want:
            _tree_close(got[key], want[key])
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.fixture
def generated(tmp_path, monkeypatch):
    write(tmp_path / "model.py", MODEL)
    result = run(["emit", "model.py", "-o", "gen"], tmp_path)
    assert result.returncode == 0, result.stderr
    return tmp_path, import_generated(monkeypatch, tmp_path, "gen", "model_grad")


def test_a_params_dict_gets_a_dict_gradient_equal_to_autograds(generated):
    root, gen = generated
    rng = np.random.default_rng(0)
    params = {"W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(4, 2)), "b2": rng.normal(size=2),
              "unused": {"k": rng.normal(size=3), "n": [1.5, rng.normal(size=2)]}}
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

    def mlp(params):
        h = anp.tanh(x @ params["W1"] + params["b1"])
        return anp.mean((h @ params["W2"] + params["b2"] - y) ** 2)

    got = gen.mlp_grad(params, x, y)
    want = autograd.grad(mlp)(params)
    _tree_close({k: got[k] for k in ("W1", "b1", "W2", "b2")}, {k: want[k] for k in ("W1", "b1", "W2", "b2")})
    # keys the code never reads get zeros of their own structure, as JAX gives
    assert got["unused"]["k"].shape == (3,) and not got["unused"]["k"].any()
    assert got["unused"]["n"][0] == 0.0 and type(got["unused"]["n"]) is list
    text = (root / "gen" / "model_grad.py").read_text()
    assert "def mlp_fwd(params_W1, params_W2, params_b1, params_b2, x, y):" in text
    assert 's2s.keyed_gradient(' in text


def test_nested_dicts_beside_an_array_argument(generated):
    _, gen = generated
    rng = np.random.default_rng(1)
    net = {"enc": {"W": rng.normal(size=(3, 4))}, "dec": {"W": rng.normal(size=(4, 2)),
                                                          "b": rng.normal(size=4)}}
    scale, x = rng.normal(size=4), rng.normal(size=(5, 3))

    def nested(net, scale):
        h = anp.sin(x @ net["enc"]["W"]) * scale
        return anp.sum(h @ net["dec"]["W"] ** 2) + 0.5 * anp.sum(net["dec"]["b"] * h[0])

    d_net, d_scale = gen.nested_grad(net, scale, x)
    want_net, want_scale = autograd.grad(nested, (0, 1))(net, scale)
    _tree_close(d_net, want_net)
    np.testing.assert_allclose(d_scale, want_scale, rtol=1e-9)
    scaled, _ = gen.nested_grad(net, scale, x, nested_bar=2.0)
    _tree_close(scaled, {"enc": {"W": 2 * want_net["enc"]["W"]},
                         "dec": {"W": 2 * want_net["dec"]["W"], "b": 2 * want_net["dec"]["b"]}})


def test_a_list_where_the_code_reads_an_array_is_refused_not_misread(generated):
    import s2sgrad

    _, gen = generated
    rng = np.random.default_rng(2)
    net = {"enc": {"W": rng.normal(size=(3, 4))},
           "dec": {"W": rng.normal(size=(4, 2)), "b": list(rng.normal(size=4))}}
    with pytest.raises(s2sgrad.GradientError, match="a list"):
        gen.nested_grad(net, rng.normal(size=4), rng.normal(size=(5, 3)))
    with pytest.raises(KeyError):  # the user's code reads a key the dict lacks: Python's error
        gen.nested_grad({"enc": {"W": net["enc"]["W"]}, "dec": {}}, rng.normal(size=4),
                        rng.normal(size=(5, 3)))


@pytest.mark.parametrize("body, message", [
    ('    total = 0.0\n    for key in params:\n        total = total + np.sum(params[key])\n'
     '    return total + np.sum(params["a"])\n', "`params` is used whole"),
    ('    p = params\n    return np.sum(p["a"] * params["b"])\n', "`params` is used whole"),
])
def test_a_dict_used_whole_is_refused_at_emit_time(tmp_path, body, message):
    write(tmp_path / "whole.py", "import numpy as np\nimport s2sgrad\n\n\n@s2sgrad.differentiable\n"
          "def f(params):\n" + body)
    result = run(["emit", "whole.py", "-o", "gen"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("whole.py:"), result.stderr
    assert message in result.stderr.splitlines()[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "gen").exists()


def test_second_order_of_a_dict_argument_is_refused_at_emit_time(tmp_path):
    write(tmp_path / "second.py", "import numpy as np\nimport s2sgrad\n\n\n"
          "@s2sgrad.differentiable(order=2)\ndef f(params):\n"
          '    return np.sum(params["a"] ** 3)\n')
    result = run(["emit", "second.py", "-o", "gen"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("second.py:5:1:"), result.stderr
    assert "order=2" in result.stderr


def test_check_is_clean_for_a_dict_argument(generated):
    root, _ = generated
    result = run(["emit", "--check", "model.py", "-o", "gen"], root)
    assert (result.returncode, result.stderr) == (0, "")
