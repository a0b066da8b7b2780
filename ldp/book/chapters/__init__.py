"""The book's chapters, one package each: what a chapter computes, draws and claims, in one folder.

A chapter ``notebooks/NN_name.ipynb`` has the package ``cNN_name``: ``compute`` (its computations, above the
library) and one module per figure or result table. A figure module has ``frame(...)`` (the tidy frame that *is* the
figure's CSV), ``draw(frame, ...)`` (a seaborn plot of exactly that frame), ``CLAIMS``
(:class:`ldp.book.claims.Claim`), ``NAME`` (or ``NAMES``), ``ENGINES`` and optionally ``TITLES`` and ``TABLES`` (the
result tables its claims read besides figure CSVs); README.md, "Figures", explains the pattern. :data:`REGISTRY`
collects every chapter's claims in the paper's order of sections; a verdict is computed in one place,
:func:`ldp.book.claims.evaluate_claim`. A chapter imports the claims machinery (:mod:`ldp.book.claims`), the
figures' look (:mod:`ldp.book.plotting`), the library, and earlier chapters only (import-linter contracts).

The chapters, in the book's order: ``c01_frequency_oracles``, ``c02_existing_methods``, ``c03_pem``,
``c04_count_engine``, ``c05_validation``, ``c06_evaluation``, ``c07_evaluation_more``, ``c08_after_pem``,
``c09_malicious_users``, ``c10_scale``.
"""
from __future__ import annotations

from ..claims.claim import Registry, section_major
from . import (
    c01_frequency_oracles,
    c02_existing_methods,
    c03_pem,
    c04_count_engine,
    c05_validation,
    c06_evaluation,
    c07_evaluation_more,
    c08_after_pem,
    c09_malicious_users,
    c10_scale,
)

__all__ = ["CHAPTERS", "MODULES", "REGISTRY", "CLAIMS", "get_claim"]

#: the chapters, in the book's order
CHAPTERS = (c01_frequency_oracles, c02_existing_methods, c03_pem, c04_count_engine, c05_validation, c06_evaluation,
            c07_evaluation_more, c08_after_pem, c09_malicious_users, c10_scale)
#: every figure (and result table) module, chapter by chapter: the registry's order
MODULES = tuple(m for chapter in CHAPTERS for m in chapter.FIGURES)

#: the claims of every module in the paper's order of sections (a chapter may measure a sentence of an earlier
#: section), what computed each figure, the titles of our own figures and the result tables
REGISTRY = Registry(sentences=tuple(sorted((c for m in MODULES for c in getattr(m, "CLAIMS", ())),
                                           key=lambda c: section_major(c.section))),
                    engines={k: v for m in MODULES for k, v in m.ENGINES.items()},
                    titles={k: v for m in MODULES for k, v in getattr(m, "TITLES", {}).items()},
                    tables={chapter.CHAPTER: {name: doc for m in chapter.FIGURES
                                              for name, doc in getattr(m, "TABLES", {}).items()}
                            for chapter in CHAPTERS})
#: every claim (each sentence, then its parts and details), in the paper's order of sections
CLAIMS = REGISTRY.claims
get_claim = REGISTRY.get
