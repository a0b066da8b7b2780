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
from .oracles import (  # noqa: E402
    PAPER_EXAMPLES,
    dprime_penalty_values,
    ldp_ratio_check,
    oracle_example_values,
    oracle_examples,
    oracle_examples_table,
    oracle_simulation,
    plot_variance_dprime,
    variance_dprime_frame,
)

__all__ += ["PAPER_EXAMPLES", "dprime_penalty_values", "ldp_ratio_check", "oracle_example_values", "oracle_examples",
            "oracle_examples_table", "oracle_simulation", "plot_variance_dprime", "variance_dprime_frame"]
from .methods import (  # noqa: E402
    all_methods_bars,
    all_methods_protocols,
    all_methods_values,
    compress,
    configuration_table,
    configuration_values,
    demo_runs,
    demo_summary,
    demo_values,
    plot_all_methods,
    protocol_variants,
    rounds_frame,
    share,
)

__all__ += ["all_methods_bars", "all_methods_protocols", "all_methods_values", "compress", "configuration_table",
            "configuration_values", "demo_runs", "demo_summary", "demo_values", "plot_all_methods",
            "protocol_variants", "rounds_frame", "share"]
from .engines import (  # noqa: E402
    Probes,
    agreement_values,
    assignment_check,
    correlation_table,
    engine_agreement_frame,
    engine_records,
    f1_table,
    group_support_moments,
    plot_engine_agreement,
    speed_table,
    speed_values,
    support_display,
    support_table,
)

__all__ += ["Probes", "agreement_values", "assignment_check", "correlation_table", "engine_agreement_frame",
            "engine_records", "f1_table", "group_support_moments", "plot_engine_agreement", "speed_table",
            "speed_values", "support_display", "support_table"]
from .tables import compact_table, format_number  # noqa: E402

__all__ += ["compact_table", "format_number"]
from .pem import optimizer_figure, optimizer_frame, prop1_figure, readings_figure  # noqa: E402, I001  (chapter 03)
__all__ += ["readings_figure", "optimizer_frame", "optimizer_figure", "prop1_figure"]
from .evaluation import engines_figure, method_panels, variance_figure  # noqa: E402  (nb-b: Figures 5, 6, 9)
from .validation import identification_figure, utility_figure  # noqa: E402  (nb-b: paper Figures 2-4)

__all__ += ["identification_figure", "utility_figure", "method_panels", "variance_figure", "engines_figure"]
from .evaluation_more import (  # noqa: E402
    PEM_OPTIMISED,
    assumption_configurations,
    assumption_summary,
    claims_table,
    config_label,
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

__all__ += ["PEM_OPTIMISED", "assumption_summary", "claims_table", "config_label", "assumption_configurations",
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
