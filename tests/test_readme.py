"""The README's code runs as written: its Python blocks, in order, in one module (a file, as
s2sgrad reads source), in a subprocess."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_readme_examples_run_as_written(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert len(blocks) >= 3
    script = tmp_path / "readme_examples.py"
    script.write_text("\n\n".join(blocks))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env={"S2SGRAD_CACHE_DIR": "", "PATH": "", "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "def loss_fwd(w, x, y)" in done.stdout  # the first example prints its generated code
