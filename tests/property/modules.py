"""A generated program's source -> a module imported from a real file (s2sgrad reads source
from files), registered in ``sys.modules`` under its name."""

from __future__ import annotations

import importlib.util
import sys


def load(directory, source: str, name: str):
    """Write ``source`` to ``directory/<name>.py`` and import it as the module ``name``."""
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
