"""The paper's analysis of PEM (section 4.2-4.4, section 5 and the appendix) as code.

Modules, in the order of the paper:

* :mod:`~ldp.analysis.config` -- :class:`PEMConfig`, :func:`pem_config`,
  :func:`pem_default_config`, :func:`min_query_limit`: a PEM configuration
  (gamma, eta[i], n[i], |C_i|) and the section 4.2.2 / 4.3 rule for it;
* :mod:`~ldp.analysis.frequencies` -- :func:`zipf_frequencies`,
  :func:`exponential_frequencies` (the project's rank-frequency laws) and
  :func:`assumed_frequencies` (the optimizer's assumption);
* :mod:`~ldp.analysis.identification` --
  :func:`round_identification_probability`,
  :func:`identification_probability` (eq. (5)), :func:`utility_weights`,
  :func:`utility_score` (eq. (4));
* :mod:`~ldp.analysis.montecarlo` -- :func:`model_monte_carlo`, the
  Monte-Carlo of the section 4.2.3 model that eq. (5) approximates;
* :mod:`~ldp.analysis.optimizer` -- :func:`candidate_configs`,
  :func:`evaluate_configs`, :func:`optimize_pem` (section 4.3's search);
* :mod:`~ldp.analysis.appendix` -- Proposition 1, Lemma 1 and the joint
  estimator for SPM;
* :mod:`~ldp.analysis.validation5` -- :func:`validation_setting`, the
  section 5 defaults (text against caption readings).

The oracles' ``p``, ``q``, ``d'`` and variances (section 2.2, eqs. (1)-(3))
are those of :mod:`ldp.oracles.formulas`, re-exported here
(:func:`olh_pq`, :func:`olh_variance`, :func:`default_d_prime`,
:func:`grr_pq`, :func:`grr_variance`, :func:`min_population`).

Configuration helpers and the optimizer take ``epsilon, k, m`` in that order
(as ``ldp.PEM(epsilon, k, m)``) and everything else by keyword, e.g.
``optimize_pem(epsilon, k, m, n=n)``, ``pem_config(k, m, eta=10)``.
Interpretation choices are listed in the docstrings and in the project's
interpretation notes.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2, 4.2-4.4, 5 and the appendix.
"""
from ..oracles.formulas import default_d_prime, grr_pq, grr_variance, min_population, olh_pq, olh_variance
from .appendix import (
    lemma1_E,
    prop1_A,
    prop1_grid,
    prop1_P1,
    prop1_P2,
    spm_joint_estimate,
    spm_joint_estimate_pair,
    spm_joint_estimates,
    spm_pq,
)
from .config import PEMConfig, min_query_limit, pem_config, pem_default_config
from .frequencies import assumed_frequencies, exponential_frequencies, heavy_frequencies, zipf_frequencies
from .identification import (
    identification_probability,
    round_identification_probability,
    utility_score,
    utility_weights,
)
from .montecarlo import model_monte_carlo
from .optimizer import candidate_configs, evaluate_configs, optimize_pem
from .validation5 import validation_setting

__all__ = [
    # configurations (sections 4.1-4.3)
    "PEMConfig", "pem_config", "pem_default_config", "min_query_limit",
    # oracles (section 2.2), from ldp.oracles.formulas
    "default_d_prime", "olh_pq", "grr_pq", "grr_variance", "olh_variance", "min_population",
    # rank-frequency laws
    "zipf_frequencies", "exponential_frequencies", "assumed_frequencies", "heavy_frequencies",
    # identification probability and utility (section 4.2)
    "round_identification_probability", "identification_probability", "utility_weights", "utility_score",
    "model_monte_carlo",
    # optimizer (section 4.3)
    "candidate_configs", "evaluate_configs", "optimize_pem",
    # appendix
    "lemma1_E", "prop1_A", "prop1_P1", "prop1_P2", "prop1_grid",
    "spm_pq", "spm_joint_estimate_pair", "spm_joint_estimate", "spm_joint_estimates",
    # section 5
    "validation_setting",
]
