"""Figures: one look (:mod:`.style`) and one way to save them (:mod:`.save`).

Each paper figure is drawn by one function of this package from the tidy
results frame its chapter computes, and saved with :func:`save_figure`
(``NAME.svg``, ``NAME.pdf`` and ``NAME.csv``, the plotted data) under
``_generated/figures``, the artefacts the book includes with a numbered
``{figure}`` directive.
"""
from .save import figure_data, save_figure, write_figure_data
from .style import (
    DATASET_STYLE,
    FONT_SIZE,
    FULL_WIDTH,
    HALF_WIDTH,
    METHOD_STYLE,
    bar_bounds,
    errorbar_lines,
    legend_outside,
    method_style,
    series_colors,
    use_style,
)

__all__ = ["save_figure", "figure_data", "write_figure_data", "METHOD_STYLE", "DATASET_STYLE", "FULL_WIDTH",
           "HALF_WIDTH", "FONT_SIZE", "use_style", "method_style", "series_colors", "legend_outside",
           "errorbar_lines", "bar_bounds"]
from .evaluation import engines_figure, method_panels, variance_figure  # noqa: E402  (nb-b: Figures 5, 6, 9)
from .validation import identification_figure, utility_figure  # noqa: E402  (nb-b: paper Figures 2-4)

__all__ += ["identification_figure", "utility_figure", "method_panels", "variance_figure", "engines_figure"]
