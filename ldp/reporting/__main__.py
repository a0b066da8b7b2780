"""``python -m ldp.reporting``: evaluate the paper's claims against saved results (see ldp.reporting.pages.main)."""
import sys

from .pages import main

sys.exit(main())
