"""``python -m ldp``: the package's command line (``rerun``; see :mod:`ldp.rerun`)."""
import sys

from .rerun import main

if __name__ == "__main__":
    sys.exit(main())
