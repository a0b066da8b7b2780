"""``python -m ldp``: the package's command line (``rerun``, ``kernel``; see :mod:`ldp.rerun.cli`)."""
import sys

from .rerun.cli import main

if __name__ == "__main__":
    sys.exit(main())
