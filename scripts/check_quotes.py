"""Check the claims registry's quotes against the paper's LaTeX source (run by hand: the tests cannot read it).

    .venv/bin/python scripts/check_quotes.py path/to/pem-paper.tex

prints, for every claim of :data:`ldp.book.chapters.REGISTRY`, whether its quote occurs
verbatim in the source (whitespace collapsed) and in which section, and exits 1 if
any quote is not found or sits in another section than the claim says.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

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


def check_quotes(tex: str, claims: Sequence) -> pd.DataFrame:
    """Check each claim's quote against the paper's LaTeX source ``tex`` (run by hand; tests cannot read it).

    A quote is verbatim if it occurs in the source once whitespace is collapsed.  Returns one
    row per claim: ``id``, ``found``, ``sections`` (where the quote occurs, by the LaTeX's
    numbering), ``section`` (the claim's) and ``section_ok``.
    """
    parts = paper_sections(tex)
    rows = []
    for c in claims:
        where = [label for label, text in parts if _normalise(c.quote) in text]
        rows.append({"id": c.id, "found": bool(where), "sections": ", ".join(where), "section": c.section,
                     "section_ok": c.section in where})
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    from ldp.book.chapters import REGISTRY

    table = check_quotes(Path(args[0]).read_text(encoding="utf-8"), REGISTRY.claims)
    print(table.to_string(index=False))
    return 0 if (table["found"] & table["section_ok"]).all() else 1


if __name__ == "__main__":
    sys.exit(main())
