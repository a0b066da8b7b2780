"""``python -m ldp``: the package's command line (``rerun``, ``kernel``; see :mod:`ldp.book.rerun.cli`)."""
import sys

from .book.rerun.cli import main

if __name__ == "__main__":
    sys.exit(main())
