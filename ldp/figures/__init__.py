"""One module per figure: its data, its drawing, and what the paper says about it, decided by the registry.

Every figure of the book (and every result table a claim reads) has one module
here, which holds all of it:

``frame(...)``
    The tidy frame that *is* the figure's CSV: one row per plotted point, bar or
    line vertex, built from the chapter's results (a :func:`ldp.experiments.summarize`
    frame, a simulation's table).  Nothing else decides what the figure shows.
``draw(frame, ...)``
    The matplotlib figure, a seaborn plot (:mod:`seaborn.objects`) of exactly that
    frame: means and intervals are precomputed columns (:func:`ldp.plotting.interval`),
    so the CSV stays the plotted rows.  :func:`ldp.plotting.render` draws it at the
    book's size and style.
``CLAIMS``
    The paper's claims about the figure (:class:`ldp.reporting.Claim`, every field by
    keyword), whose ``measure`` reads the figure's CSV back from the run's
    :class:`~ldp.reporting.ResultStore` (:mod:`ldp.reporting.measures` has the shared
    readers) and whose ``rule`` decides it.
``NAME`` (or ``NAMES``), ``ENGINES``, optionally ``TITLES``
    The figure's label, what computed it (for the scorecard) and, for a figure that
    is not the paper's, what the paper calls what it shows.

:data:`REGISTRY` collects every module's claims, in the paper's order.  A verdict
is computed in one place, :func:`ldp.reporting.evaluate_claim`: the report page,
a rerun's claims table and a chapter's sentences about a claim
(:func:`ldp.book.claim_values`, glued as ``claim_<id>_verdict`` and its numbers)
all read it.  Figure modules import :mod:`ldp.reporting` and :mod:`ldp.plotting`,
never the reverse, and no figure module imports another (import-linter contracts).

Adding a figure
---------------
A new module ``ldp/figures/my_figure.py``, listed in :data:`MODULES`::

    NAME = "fig-topic-what"
    ENGINES = {NAME: "count engine (10 runs)"}

    def frame(summary):                       # the CSV: identifying columns first
        return summary[["dataset", "protocol", "epsilon", "f1_mean", "f1_std"]]

    def draw(data):
        d = interval(data, "f1_mean", "f1_std")  # bars cut at 0 and 1
        plot = (so.Plot(d, x="epsilon", y="f1_mean", color="protocol").facet(col="dataset")
                .add(so.Line()).add(so.Range(), ymin="lo", ymax="hi")
                .scale(color=method_scales(list(dict.fromkeys(d["protocol"])))["color"]))
        return render(plot, height=3.0)

    def _m_pem_best(store):                   # reads the CSV the chapter saved: store.figure(NAME)
        ...

    CLAIMS = (Claim(id="figX-pem-best", section="6.2.1", ref="Figure X", quote=r"...", paper="...",
                    tested="...", measure=_m_pem_best, rule=R.OrderingHolds(), chapter="06_evaluation",
                    figure=NAME),)

and in the chapter::

    data = my_figure.frame(summary)
    save_figure(my_figure.draw(data), my_figure.NAME, data=data)   # NAME.svg, .pdf, .csv
    ...
    glue_all(claim_values("06_evaluation"))   # last cell: the registry's verdicts and numbers

so that the prose says ``{glue:text}`claim_figX_pem_best_verdict``` and never types a verdict.
A layer of a seaborn plot that has its own ``data`` re-states every variable it uses
(``x``, ``y``, ``col``, ...) and drops an inherited mapping with ``color=None``: seaborn
joins a layer's data with the plot's on the index otherwise.
"""
from __future__ import annotations

from ..reporting.claims import Registry
from . import (
    after_pem,
    all_methods,
    design,
    engine_agreement,
    eval_datasets,
    eval_engines,
    eval_variance,
    eval_vary,
    flh_price,
    identification,
    joint_estimator,
    malicious_detector,
    malicious_gain,
    malicious_placement,
    malicious_threshold,
    oracle_examples,
    oracle_variance,
    pem_optimizer,
    pem_prop1,
    pem_readings,
    scale_cost,
    threshold,
    utility,
)

__all__ = ["MODULES", "REGISTRY", "CLAIMS", "get_claim"]

#: every figure (and result table) module, in the paper's order: the registry's order
MODULES = (oracle_examples, oracle_variance, all_methods, pem_readings, pem_optimizer, pem_prop1, joint_estimator,
           engine_agreement, identification, utility, eval_datasets, eval_vary, eval_variance, eval_engines, threshold,
           design, after_pem, malicious_gain, malicious_threshold, malicious_placement, malicious_detector,
           scale_cost, flh_price)

#: the claims of every module, what computed each figure and the titles of our own figures
REGISTRY = Registry(claims=tuple(c for m in MODULES for c in getattr(m, "CLAIMS", ())),
                    engines={k: v for m in MODULES for k, v in m.ENGINES.items()},
                    titles={k: v for m in MODULES for k, v in getattr(m, "TITLES", {}).items()})
#: every claim, in the paper's order, then ours
CLAIMS = REGISTRY.claims
get_claim = REGISTRY.get
