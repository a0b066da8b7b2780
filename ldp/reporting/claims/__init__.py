"""The claims registry: every claim of sections 2-6 of the paper, and ours about what came after, as data.

:data:`CLAIMS` holds one :class:`Claim` per statement the paper makes in words
or numbers, including the trend each figure's text describes, in the paper's
order, followed by our own claims (``ours=True``) about PEM against the
protocols that came after it (chapter 08).  One module per part of the paper:

* :mod:`.oracles`: sections 2 and 3 (frequency oracles, Figure 1);
* :mod:`.pem`: section 4 and the appendix (configuration, Proposition 1, Lemma 1);
* :mod:`.validation`: section 5 (Figures 2-4);
* :mod:`.evaluation`: sections 6.1, 6.2.1, 6.2.2, 6.2.6 (data sets, Figures 5, 6, 9,
  and the anomalies of Figures 5 and 6);
* :mod:`.evaluation_more`: sections 6.2.3-6.2.5, 6.2.7 (Figures 7, 8);
* :mod:`.after_pem`: ours, chapter 08 (TreeHist and SFP on the grids of Figures 5 and 6).

:mod:`.base` holds the :class:`Claim` record, the paper's numbers (read from
``book/_ext/paper_numbers.yml``) and the readers the modules share;
:mod:`.quotes` checks the quotes against the paper's LaTeX source.
"""
from __future__ import annotations

from . import after_pem, evaluation, evaluation_more, oracles, pem, validation
from .base import (
    FIGURE_ENGINES,
    FIGURE_TITLES,
    MIN_VAR_RUNS,
    STAND_INS,
    Claim,
    Measurement,
    MissingInput,
    NotCovered,
    display_quote,
    paper_numbers,
)
from .quotes import check_quotes, paper_sections

__all__ = ["Claim", "Measurement", "NotCovered", "MissingInput", "CLAIMS", "STAND_INS", "FIGURE_ENGINES",
           "FIGURE_TITLES", "get_claim", "display_quote", "MIN_VAR_RUNS", "check_quotes", "paper_sections",
           "paper_numbers"]

#: every claim, in the paper's order, then ours
CLAIMS: tuple[Claim, ...] = (oracles.CLAIMS + pem.CLAIMS + validation.CLAIMS + evaluation.CLAIMS
                             + evaluation_more.CLAIMS + after_pem.CLAIMS)

_BY_ID = {c.id: c for c in CLAIMS}
if len(_BY_ID) != len(CLAIMS):  # pragma: no cover - a registry error, caught at import
    raise RuntimeError("two claims share an id")


def get_claim(claim_id: str) -> Claim:
    """The claim with id ``claim_id`` (KeyError naming the known ids otherwise)."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise KeyError(f"no claim {claim_id!r}; known: {', '.join(_BY_ID)}") from None
