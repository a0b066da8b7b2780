"""Check the registry's quotes against the paper's LaTeX source (by hand: the tests cannot read it)."""
from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from .base import Claim

__all__ = ["paper_sections", "check_quotes"]

_SECTIONING = re.compile(r"\\(section|subsection|subsubsection)\*?\{|\\appendix\b")


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def paper_sections(tex: str) -> list[tuple[str, str]]:
    """The LaTeX source cut at its sectioning commands: (section number, whitespace-normalised text) pairs.

    Sections are numbered by the structure (``\\section`` 1, 2, ...,
    ``\\subsection`` 1.1, ...); everything after ``\\appendix`` is "Appendix".
    """
    parts, counters, label, start = [], [0, 0, 0], "0", 0
    for m in _SECTIONING.finditer(tex):
        parts.append((label, _normalise(tex[start:m.start()])))
        if m.group(0).startswith("\\appendix"):
            label = "Appendix"
        elif label != "Appendix":
            level = ("section", "subsection", "subsubsection").index(m.group(1))
            counters[level] += 1
            counters[level + 1:] = [0] * (2 - level)
            label = ".".join(str(c) for c in counters[:level + 1])
        start = m.start()
    parts.append((label, _normalise(tex[start:])))
    return parts


def check_quotes(tex: str, claims: Sequence[Claim] | None = None) -> pd.DataFrame:
    """Check each claim's quote against the paper's LaTeX source ``tex`` (run by hand; tests cannot read it).

    A quote is verbatim if it occurs in the source once whitespace (line
    breaks, indentation) is collapsed.  Returns one row per claim: ``id``,
    ``found``, ``sections`` (where the quote occurs, by the LaTeX's
    numbering), ``section`` (the registry's) and ``section_ok``.
    """
    if claims is None:
        from . import CLAIMS

        claims = CLAIMS
    parts = paper_sections(tex)
    rows = []
    for c in claims:
        q = _normalise(c.quote)
        where = [label for label, text in parts if q in text]
        rows.append({"id": c.id, "found": bool(where), "sections": ", ".join(where), "section": c.section,
                     "section_ok": c.section in where})
    return pd.DataFrame(rows)

