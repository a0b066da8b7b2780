"""``python -m ldp.reporting``: evaluate the paper's claims against saved results (see ldp.reporting.report.main)."""
import sys

from .report import main

sys.exit(main())
