"""``python -m s2sgrad``: the command line (see s2sgrad.cli)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
