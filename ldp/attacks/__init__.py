"""Malicious users: fake reports, how many it takes to plant a value, and what a server can do.

Local differential privacy protects users from the server; nothing protects
the server from its users.  This package lets a deployer measure it with the
library's own protocols and reports:

* :mod:`~ldp.attacks.crafting` -- fake reports of one frequency oracle (GRR,
  OUE, OLH, HR, CMS, FLH): input manipulation, random perturbed values, maximal
  gain (with a hash-seed search), and what each does to an estimate
  (eq. (2)): :func:`craft`, :func:`gain`, :func:`support_probability`,
  :func:`crafted_rho`, :func:`support_matrix`;
* :mod:`~ldp.attacks.fake` -- fake users of a heavy-hitter protocol under a
  published plan: :func:`fake_reports` (a batch that merges with honest
  ones) and :func:`fake_wire` (the same as the wire bytes a deployment's
  server receives), :func:`fake_users` (the plan's groups, or groups they choose),
  :func:`fresh_targets`, :func:`lookalike_targets`, :func:`group_weights`;
* :mod:`~ldp.attacks.simulate` -- an attacked population run with either
  engine at any share of fake users (:class:`Scenario`, :class:`Attack`,
  :class:`Outcome`); the count engine with crafted users is
  :class:`ldp.engines.CraftedUsers`;
* :mod:`~ldp.attacks.threat` -- the smallest share of fake users that plants
  targets, measured (:func:`smallest_fraction`, :func:`threshold_grid`) and
  predicted (:func:`honest_steps`, :func:`predicted_fraction`);
* :mod:`~ldp.attacks.gains` -- the gain of one report per oracle, closed form
  beside measurement (:func:`~ldp.attacks.gains.gain_table`);
* :mod:`~ldp.attacks.defences` -- the server's checks: a detector of crafted
  reports that states its false-positive rate and keeps it
  (:class:`SupportCountDetector`), a consistency check of the release
  (:func:`consistency_check`), a test of FLH's public pool indices (:func:`index_uniformity`), and what
  they cost (:func:`detector_trial`);
* :mod:`~ldp.attacks.recover` -- a defence on aggregates after LDPRecover: the
  release's genuine counts recovered, values whose count may be the fake
  users' doing withheld (:func:`recover`);
* :mod:`~ldp.attacks.server` -- the server between the reports and the
  release: its checks, its defence, and when an attack counts as planted
  (:class:`Server`, ``smallest_fraction(..., server=)``);
* :mod:`~ldp.attacks.adaptive` -- attackers who know the checks (an honest
  index law, a cap on targets per report, every group at its share:
  :func:`adaptive_attacks`) and the fraction each needs with the checks and
  the defence off and on (:func:`adaptive_grid`, :func:`defence_price`,
  :func:`adaptive_summary`, :func:`undetected_fraction`);
* :mod:`~ldp.attacks.audit` -- the empirical privacy audit of the deployed
  client: an empirical epsilon and its Clopper-Pearson lower bound for every
  group kind of a protocol's plan (:func:`audit_protocol`, :func:`audit_grid`).

Every fake report here is a simulation seeded through ``rng`` (the attacker's
randomness); none of it touches an honest user's coins.  The audit's reports
are the deployed client's, with the operating system's coins.

References
----------
X. Cao, J. Jia, N. Z. Gong, "Data Poisoning Attacks to Local Differential
Privacy Protocols", USENIX Security 2021 (arXiv:1911.02046).
X. Sun, Q. Ye, H. Hu, J. Duan, T. Wo, J. Xu, R. Yang, "LDPRecover: Recovering
Frequencies from Poisoning Attacks against Local Differential Privacy", ICDE
2024 (arXiv:2403.09351).
H. H. Arcolezi, S. Gambs, "Revealing the True Cost of Locally Differentially
Private Protocols: An Auditing Perspective", PETS 2024 (LDP-Auditor).
"""
from .adaptive import (
    ATTACKERS,
    adaptive_attacks,
    adaptive_grid,
    adaptive_summary,
    defence_price,
    undetected_fraction,
)
from .audit import audit_grid, audit_group, audit_oracle, audit_protocol, audited_protocols, epsilon_lower_bound
from .crafting import KINDS, craft, crafted_rho, gain, report_rho, support_matrix, support_probability
from .defences import (
    Detection,
    SupportCountDetector,
    consistency_check,
    detector_rates,
    detector_trial,
    flagged_values,
    index_counts_test,
    index_uniformity,
)
from .fake import PLACEMENTS, fake_reports, fake_users, fake_wire, fresh_targets, group_weights, lookalike_targets
from .recover import Recovery, recover
from .server import Server
from .simulate import Attack, Outcome, Scenario, planted
from .threat import (
    honest_grid,
    honest_steps,
    predicted_fraction,
    predictions,
    smallest_fraction,
    threshold_grid,
)

__all__ = ["KINDS", "PLACEMENTS", "craft", "crafted_rho", "gain", "report_rho", "support_matrix",
           "support_probability", "Detection", "SupportCountDetector", "consistency_check", "detector_rates",
           "detector_trial", "flagged_values", "index_uniformity", "index_counts_test", "fake_reports", "fake_wire",
           "fake_users", "fresh_targets", "group_weights", "lookalike_targets", "Attack", "Outcome", "Scenario",
           "planted", "honest_grid", "honest_steps", "predicted_fraction", "predictions", "smallest_fraction",
           "threshold_grid", "Recovery", "recover", "Server", "ATTACKERS", "adaptive_attacks", "adaptive_grid",
           "adaptive_summary", "defence_price", "undetected_fraction", "audit_grid", "audit_group", "audit_oracle",
           "audit_protocol", "audited_protocols", "epsilon_lower_bound"]
