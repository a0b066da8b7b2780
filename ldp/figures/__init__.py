"""Figures of the book, one module per figure: ``frame(...)``, the tidy frame that is its CSV, and ``draw(frame)``.

* :mod:`~ldp.figures.scale_cost` -- time and peak memory of privatize, store and
  aggregate against ``n`` (chapter on scale);
* :mod:`~ldp.figures.flh_price` -- FLH's accuracy against OLH's over the
  ``epsilon`` grid (chapter on scale).
"""
from . import flh_price, scale_cost

__all__ = ["scale_cost", "flh_price"]
