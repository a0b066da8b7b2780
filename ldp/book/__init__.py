"""The book's code: above the library, everything the Jupyter Book computes, draws, claims and publishes.

The library (:mod:`ldp.oracles` ... :mod:`ldp.experiments`) is what a user of ``ldp`` imports to run the
protocols; this package is what the book adds on top of it, and the library never imports it.  Its own layers,
from the bottom up (import-linter contracts in ``pyproject.toml``):

====  ======================================================================
L10   ``artifact`` (the artifact appendix, with each claim's rerun command),
      ``rerun`` (the book build, and reruns of a chapter with your own
      parameters: ``python -m ldp rerun``), ``glue`` (what a chapter glues
      into its text), ``pages`` (writes the book's generated pages), then
      ``answer`` (the first page: the answer and the figures' gallery),
      then ``report`` (the reproduction report's page, and the pieces of
      MyST the pages share)
L9    ``chapters``: one package per chapter, ``cNN_name``, with what it
      computes, its figures and its claims; the claims registry
L8    ``claims`` (what a claim is, the decision rules, the measures they
      share, the result store a chapter saves into and the report reads)
      and ``plotting`` (how figures and tables look; saving a figure with
      its CSV)
====  ======================================================================

A chapter notebook needs two calls from here, both re-exported by this package: :func:`glue_all` (glue the
numbers its prose quotes) and :func:`claim_values` (the registry's verdicts on the claims it measures).
"""
from __future__ import annotations

from .glue import ChapterClock, claim_key, claim_values, glue_all

__all__ = ["glue_all", "claim_values", "claim_key", "ChapterClock"]
