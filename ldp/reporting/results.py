"""Where the claims read their numbers: :class:`ResultStore` (:mod:`ldp.experiments.results`), re-exported here."""
from ..experiments.results import EXTRA_TABLES, MODES, MissingResult, ResultStore

__all__ = ["ResultStore", "MissingResult", "EXTRA_TABLES", "MODES"]
