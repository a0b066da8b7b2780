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
from .evaluation_more import (  # noqa: E402
    PEM_OPTIMISED,
    assumption_summary,
    claims_table,
    config_label,
    configuration_table,
    design_figure,
    design_findings,
    eta_table,
    final_round_release,
    k_for_threshold,
    table_view,
    threshold_figure,
    threshold_findings,
    threshold_release_table,
    threshold_table,
    without_missing,
)

__all__ += ["PEM_OPTIMISED", "assumption_summary", "claims_table", "config_label", "configuration_table",
            "design_figure", "design_findings", "eta_table", "final_round_release", "k_for_threshold",
            "without_missing", "table_view", "threshold_figure", "threshold_findings", "threshold_release_table",
            "threshold_table"]
from .after_pem import (  # noqa: E402
    AFTER_PEM_PANELS,
    after_pem_figure,
    after_pem_findings,
    after_pem_protocols,
    bits_per_user,
    deployer_table,
    f1_summary_table,
    pem_standing,
    pem_verdict,
    report_bits,
)

__all__ += ["AFTER_PEM_PANELS", "after_pem_figure", "after_pem_findings", "after_pem_protocols", "bits_per_user",
            "deployer_table", "f1_summary_table", "pem_standing", "pem_verdict", "report_bits"]
