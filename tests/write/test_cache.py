"""The disk cache of generated code: cold and warm decoration, corrupt entries, concurrent writers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import s2sgrad.pipeline
from s2sgrad.write import cache

MODULE = """\
import numpy as np
import s2sgrad


@s2sgrad.differentiable(wrt=("w", "b"))
def loss(w, b, x):
    return np.sum(np.tanh(x @ w + b) ** 2)
"""


def entries(directory: Path) -> list:
    return sorted(p for p in directory.rglob("*") if p.is_file())


def import_file(path: Path, name: str, monkeypatch):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("S2SGRAD_CACHE_DIR", str(directory))
    return directory


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "cached_model.py"
    path.write_text(MODULE)
    return path


def forbid_pipeline(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the pipeline ran although the cache held the entry")

    monkeypatch.setattr(s2sgrad.pipeline, "generate", refuse)


# ----- the store -------------------------------------------------------------------------------


def test_put_then_get_round_trips(tmp_path):
    key = cache.make_key("text", "options")
    assert cache.get(key, str(tmp_path)) is None
    assert cache.put(key, {"text": "x = 1\n", "deps": []}, str(tmp_path))
    assert cache.get(key, str(tmp_path)) == {"text": "x = 1\n", "deps": [], "format": 1, "key": key}
    assert [p.name for p in entries(tmp_path)] == [key[2:] + ".json"]


def test_keys_are_length_prefixed_hashes():
    assert cache.make_key("ab", "c") != cache.make_key("a", "bc")
    assert cache.make_key("a", "b") == cache.make_key("a", "b")
    assert len(cache.make_key("a")) == 64


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"\xff\xfe\x00", b"[1, 2]",
                                     b'{"format": 1, "key": "someone else", "text": "x"}'])
def test_corrupt_entries_are_misses_and_get_rewritten(tmp_path, garbage):
    key = cache.make_key("k")
    path = Path(cache.record_path(str(tmp_path), key))
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    assert cache.get(key, str(tmp_path)) is None
    assert cache.put(key, {"text": "y = 2\n"}, str(tmp_path))
    assert cache.get(key, str(tmp_path))["text"] == "y = 2\n"


def test_location_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("S2SGRAD_CACHE_DIR", str(tmp_path / "here"))
    assert cache.default_dir() == str(tmp_path / "here")
    monkeypatch.setenv("S2SGRAD_CACHE_DIR", "")
    assert cache.default_dir() is None
    assert not cache.put(cache.make_key("k"), {"text": ""})
    monkeypatch.delenv("S2SGRAD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert cache.default_dir() == str(tmp_path / "xdg" / "s2sgrad")


def test_an_unwritable_cache_does_not_fail_the_caller(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    assert not cache.put(cache.make_key("k"), {"text": ""}, str(blocker))
    assert cache.get(cache.make_key("k"), str(blocker)) is None


def test_concurrent_writers_and_readers_never_see_half_an_entry(tmp_path):
    key = cache.make_key("shared")
    big = {"text": "z = 0\n" * 20000}
    seen = []

    def write():
        for _ in range(20):
            assert cache.put(key, big, str(tmp_path))

    def read():
        for _ in range(200):
            got = cache.get(key, str(tmp_path))
            seen.append(None if got is None else got["text"] == big["text"])

    threads = [threading.Thread(target=write) for _ in range(4)] + [threading.Thread(target=read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert False not in seen
    assert [p.name for p in entries(tmp_path)] == [key[2:] + ".json"]  # no temporary files left


# ----- the decorator with the cache -------------------------------------------------------------


def test_cold_then_warm_decoration(cache_dir, model, monkeypatch):
    cold = import_file(model, "cached_model", monkeypatch)
    files = entries(cache_dir)
    assert len(files) == 1
    stored = json.loads(files[0].read_text())
    assert stored["text"] == cold.loss.source

    w, b, x = np.array([0.3, -0.2]), 0.1, np.array([[1.0, 2.0], [0.5, -1.0]])
    wanted = cold.loss.grad(w, b, x)  # b a number: the code made for numbers there, stored too
    files = entries(cache_dir)
    assert len(files) == 2

    forbid_pipeline(monkeypatch)
    warm = import_file(model, "cached_model", monkeypatch)
    assert warm.loss.source == cold.loss.source
    for got, want in zip(warm.loss.grad(w, b, x), wanted):
        np.testing.assert_allclose(got, want, rtol=0, atol=0)
    assert entries(cache_dir) == files


def test_an_edit_to_the_module_misses_the_cache(cache_dir, model, monkeypatch):
    import_file(model, "cached_model", monkeypatch)
    model.write_text(MODULE.replace("** 2", "** 3"))
    import linecache

    linecache.checkcache(str(model))
    edited = import_file(model, "cached_model", monkeypatch)
    assert "** 3" in edited.loss.source
    assert len(entries(cache_dir)) == 2


def test_a_corrupt_entry_is_ignored_and_rewritten(cache_dir, model, monkeypatch):
    first = import_file(model, "cached_model", monkeypatch)
    (path,) = entries(cache_dir)
    path.write_text('{"format": 1, "key": "')
    again = import_file(model, "cached_model", monkeypatch)
    assert again.loss.source == first.loss.source
    assert json.loads(path.read_text())["text"] == first.loss.source


def _run(code: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_an_edited_helper_in_another_module_misses_the_cache(tmp_path):
    (tmp_path / "helper_mod.py").write_text("import numpy as np\n\ndef h(x):\n    return x * x\n")
    (tmp_path / "user_mod.py").write_text(textwrap.dedent("""\
        import numpy as np
        import s2sgrad
        from helper_mod import h

        @s2sgrad.differentiable
        def f(x):
            return np.sum(h(x))
        """))
    env = dict(os.environ, S2SGRAD_CACHE_DIR=str(tmp_path / "cache"))
    code = "import user_mod; print(user_mod.f.grad(3.0))"
    assert _run(code, tmp_path, env).stdout == "6.0\n"
    assert _run(code, tmp_path, env).stdout == "6.0\n"
    (tmp_path / "helper_mod.py").write_text("import numpy as np\n\ndef h(x):\n    return x * x * x\n")
    assert _run(code, tmp_path, env).stdout == "27.0\n"


def test_concurrent_cold_imports_in_several_processes(tmp_path, model):
    env = dict(os.environ, S2SGRAD_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import cached_model, numpy as np; "
            "print(repr(cached_model.loss.grad(np.array([0.3, -0.2]), np.array(0.1), np.eye(2))))")
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1 and outputs[0][0].startswith("(array([")
    files = entries(tmp_path / "cache")
    assert len(files) == 1 and files[0].suffix == ".json"
    assert "def loss_grad(w, b, x, loss_bar=1.0):" in json.loads(files[0].read_text())["text"]


# ----- refusals are stored like generated code ----------------------------------------------------

CHOLESKY = """\
import numpy as np
from chol_helper import shift


def f(s):
    L = np.linalg.cholesky(shift(np.eye(3) * s))
    return np.sum(L)
"""


def test_a_forward_mode_refusal_is_stored_and_served_without_the_pipeline(tmp_path, cache_dir,
                                                                          monkeypatch):
    from s2sgrad import derive
    from s2sgrad.read.capture import from_function

    (tmp_path / "chol_helper.py").write_text("def shift(a):\n    return a + 1.0\n")
    (tmp_path / "chol_user.py").write_text(CHOLESKY)
    monkeypatch.syspath_prepend(str(tmp_path))
    f = import_file(tmp_path / "chol_user.py", "chol_user", monkeypatch).f
    with pytest.raises(s2sgrad.TransformError) as cold:
        derive.code_for(f, from_function(f), ("s",), mode="fwd")
    (stored,) = entries(cache_dir)
    assert "cholesky" in json.loads(stored.read_text())["refused"]["message"]
    forbid_pipeline(monkeypatch)
    with pytest.raises(s2sgrad.TransformError) as warm:
        derive.code_for(f, from_function(f), ("s",), mode="fwd")
    assert str(warm.value) == str(cold.value) and warm.value.location == cold.value.location
    # an edit to the file of a function it calls in another module: the refusal is stale
    (tmp_path / "chol_helper.py").write_text("def shift(a):\n    return a + 2.0\n")
    with pytest.raises(AssertionError, match="the pipeline ran"):
        derive.code_for(f, from_function(f), ("s",), mode="fwd")


def test_a_new_process_reads_the_refusal_and_the_gradient_without_libcst(tmp_path):
    (tmp_path / "chol_helper.py").write_text("def shift(a):\n    return a + 1.0\n")
    (tmp_path / "chol_user.py").write_text(CHOLESKY)
    env = dict(os.environ, S2SGRAD_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import sys, s2sgrad, chol_user; g = s2sgrad.grad(chol_user.f)(2.0); "
            "print(round(float(g), 9), 'libcst' in sys.modules, 'black' in sys.modules)")
    cold = _run(code, tmp_path, env)
    assert cold.returncode == 0, cold.stderr
    warm = _run(code, tmp_path, env)
    assert warm.stdout.split()[0] == cold.stdout.split()[0]
    assert warm.stdout.split()[1:] == ["False", "False"], warm.stdout


def test_the_installation_fingerprint_reads_the_package_only():
    """The cache is invalidated by an edit of s2sgrad's own files, never by the files beside the
    package (the repository's tests and virtual environment, or the rest of site-packages for an
    installed wheel: hashing those made the first transform of a process slow and an edited test
    invalidate every entry)."""
    from s2sgrad import derive

    package = Path(derive.__file__).resolve().parent
    files = [Path(p).resolve() for p in derive.package_sources()]
    assert Path(derive.__file__).resolve() in files
    assert package / "runtime" / "__init__.py" in files
    assert all(package in f.parents for f in files)
    assert len(files) == len({str(f) for f in files}) < 400


def test_the_suite_never_writes_into_the_users_cache_directory(monkeypatch):
    """tests/conftest.py gives a run without S2SGRAD_CACHE_DIR a temporary cache of its own."""
    where = cache.default_dir()
    monkeypatch.delenv(cache.ENV_VAR)
    users = cache.default_dir()
    assert where is None or os.path.realpath(where) != os.path.realpath(users)


# ----- the functions the API appends (jacfwd, jacrev, hessian, hvp) are stored too -----------------

SECOND = """\
import numpy as np


def f(x):
    return np.sin(x) * x


def h(x):
    return np.sum(np.sin(x) * x ** 2)
"""

APPENDED = ("import sys, numpy as np, s2sgrad, second_user as m\n"
            "x = np.array([0.5, 1.0, 2.0])\n"
            "out = [s2sgrad.jacfwd(m.f)(x), s2sgrad.jacrev(m.f)(x), s2sgrad.hessian(m.h)(x),\n"
            "       s2sgrad.hvp(m.h, (x,), (x,))[0]]\n"
            "print(repr([np.round(o, 12).tolist() for o in out]))\n"
            "print(sorted(n for n in ('libcst', 'black') if n in sys.modules))\n")


def test_a_new_process_reads_jacobians_and_hessians_without_libcst_or_black(tmp_path):
    """The function jacfwd, jacrev, hessian or hvp appends to a generated module
    (write/entries.py reads that module with libcst and formats with black) is kept in the disk
    cache with the code: a warm start imports neither."""
    (tmp_path / "second_user.py").write_text(SECOND)
    env = dict(os.environ, S2SGRAD_CACHE_DIR=str(tmp_path / "cache"))
    cold = _run(APPENDED, tmp_path, env)
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.splitlines()[1] == "['black', 'libcst']"
    warm = _run(APPENDED, tmp_path, env)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.splitlines() == [cold.stdout.splitlines()[0], "[]"]


def test_an_appended_function_is_served_from_the_disk_cache_without_entries(tmp_path, cache_dir,
                                                                             monkeypatch):
    from s2sgrad import derive

    (tmp_path / "second_user.py").write_text(SECOND)
    m = import_file(tmp_path / "second_user.py", "second_user", monkeypatch)
    x = np.array([0.5, 1.0, 2.0])
    cold = s2sgrad.jacfwd(m.f)(x), s2sgrad.hessian(m.h)(x)
    kept = [json.loads(p.read_text()) for p in entries(cache_dir)]
    assert sum("entry" in record for record in kept) == 2
    monkeypatch.setattr(derive, "_MADE", type(derive._MADE)())  # a new process's memo

    def refuse():
        raise AssertionError("write/entries.py ran although the cache held its function")

    monkeypatch.setattr(derive, "_entries", refuse)
    forbid_pipeline(monkeypatch)
    warm = s2sgrad.jacfwd(m.f)(x), s2sgrad.hessian(m.h)(x)
    for got, want in zip(warm, cold):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(cold[0], np.diag(np.sin(x) + x * np.cos(x)), rtol=1e-12)
