"""One module per figure: its data, its drawing, and what the paper says about it, decided by the registry.

Each module has ``frame(...)`` (the tidy frame that *is* the figure's CSV), ``draw(frame, ...)`` (a
seaborn plot of exactly that frame), ``CLAIMS`` (:class:`ldp.reporting.Claim`), ``NAME`` (or ``NAMES``),
``ENGINES`` and optionally ``TITLES``: README.md, "Figures", explains the pattern and shows a complete
example.  :data:`REGISTRY` collects every module's claims, in the paper's order; a verdict is computed in
one place, :func:`ldp.reporting.evaluate_claim`.  Figure modules import :mod:`ldp.reporting` and
:mod:`ldp.plotting`, never the reverse, and no figure module imports another (import-linter contracts).
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
