"""Figures of the book, one module per figure: ``frame(...)``, the tidy frame that is its CSV, and ``draw(frame)``.

* :mod:`~ldp.figures.scale_cost` -- time and peak memory of privatize, store and
  aggregate against ``n`` (chapter on scale);
* :mod:`~ldp.figures.flh_price` -- FLH's accuracy against OLH's over the
  ``epsilon`` grid (chapter on scale).
"""
from .flh_price import draw as flh_price_draw
from .flh_price import frame as flh_price_frame
from .scale_cost import draw as scale_cost_draw
from .scale_cost import frame as scale_cost_frame

# each figure module's frame and draw, under the figure's name (the modules themselves are not reference pages)
__all__ = ["scale_cost_frame", "scale_cost_draw", "flh_price_frame", "flh_price_draw"]
