"""``python -m ldp.figures``: evaluate the registry's claims against a build's or a rerun's saved results."""
import sys

from ..reporting.pages import main
from . import REGISTRY

sys.exit(main(REGISTRY))
