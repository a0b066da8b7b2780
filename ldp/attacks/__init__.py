"""Malicious users: fake reports, their effect on the protocols, and what a server can do (issue 22)."""
from .crafting import KINDS, craft, crafted_rho, gain, report_rho, support_matrix, support_probability
from .defences import Detection, SupportCountDetector, consistency_check, flagged_values
from .fake import PLACEMENTS, fake_reports, fake_users, fresh_targets, group_weights, lookalike_targets
from .simulate import Attack, Outcome, Scenario, planted
from .threat import honest_steps, predicted_fraction, smallest_fraction, threshold_grid
