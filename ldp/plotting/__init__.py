"""The look of the book's figures (:mod:`.style`) and the one way to save them (:mod:`.save`).

Each figure is made in its module of :mod:`ldp.figures` (``frame`` -> the tidy
table, ``draw`` -> a seaborn plot rendered by :func:`render`) and saved with
:func:`save_figure` (``NAME.svg``, ``NAME.pdf`` and ``NAME.csv``, the plotted data)
under ``_generated/figures``, the artefacts the book includes with a numbered
``{figure}`` directive.
"""
from .save import figure_data, save_figure, write_figure_data
from .style import (
    DATASET_STYLE,
    FONT_SIZE,
    FULL_WIDTH,
    HALF_WIDTH,
    METHOD_STYLE,
    THEME,
    interval,
    legend_above,
    method_scales,
    method_style,
    render,
    series_colors,
    use_style,
)

__all__ = ["save_figure", "figure_data", "write_figure_data", "METHOD_STYLE", "DATASET_STYLE", "FULL_WIDTH",
           "HALF_WIDTH", "FONT_SIZE", "THEME", "use_style", "method_style", "method_scales", "series_colors",
           "interval", "render", "legend_above"]
