"""The look of the book's figures (:mod:`.style`) and the one way to save them (:mod:`.save`).

How a figure module draws and saves with them: README.md, "Figures".
"""
from .save import figure_data, save_figure, write_figure_data
from .style import (
    FONT_SIZE,
    FULL_WIDTH,
    METHOD_STYLE,
    THEME,
    count_label,
    interval,
    legend_above,
    method_scales,
    method_style,
    render,
    series_colors,
    variant_scale,
)

__all__ = ["save_figure", "figure_data", "write_figure_data", "METHOD_STYLE", "FULL_WIDTH", "FONT_SIZE", "THEME",
           "method_style", "method_scales", "series_colors",
           "count_label", "interval", "render", "legend_above", "variant_scale"]
