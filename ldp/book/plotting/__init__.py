"""How the book's figures and tables look: the figures' style (:mod:`.style`), the one way to save a figure with
its plotted data (:mod:`.save`) and how tables write numbers, budgets and lists (:mod:`.tables`).

How a figure module draws and saves with them: README.md, "Figures".
"""
from .save import figure_data, save_figure, write_figure_data
from .style import (
    FONT_SIZE,
    FULL_WIDTH,
    METHOD_STYLE,
    SERIES_LIGHTNESS,
    SERIES_RAMP,
    THEME,
    count_label,
    interval,
    legend_above,
    lightness,
    method_scales,
    method_style,
    panel_legend,
    render,
    series_colors,
    variant_scale,
)
from .tables import compact_table, compress, format_number, share, table_view

__all__ = ["save_figure", "figure_data", "write_figure_data", "METHOD_STYLE", "FULL_WIDTH", "FONT_SIZE", "THEME",
           "method_style", "method_scales", "series_colors", "count_label", "interval", "render", "legend_above",
           "panel_legend", "SERIES_RAMP", "SERIES_LIGHTNESS", "lightness", "variant_scale",
           "compact_table", "format_number", "table_view", "share", "compress"]
