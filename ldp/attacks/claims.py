"""Chapter 09's claims, all ours, as plain data: what the registry needs to decide them.

The claims registry (:mod:`ldp.reporting.claims`) is being rebuilt (issue 20);
until these are ported into it, the chapter states the numbers each measure
returns but no verdict.  Each :class:`ClaimSpec` holds what a registry entry
needs: a stable id, the sentence claimed (ours, so no paper quote), the
figure whose tidy frame (:mod:`ldp.figures.malicious`, saved as the figure's
CSV) the measure reads, the measure itself (frame -> the rule's input table,
in the column layout of :mod:`ldp.reporting.rules`), and the stated rule with
its parameters.  Porting one is a matter of wrapping ``measure`` to read the
CSV from the result store and building the rule from ``rule`` and ``params``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["ClaimSpec", "CLAIMS", "CHAPTER"]

CHAPTER = "09_malicious_users"


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of ours: its sentence, the figure frame it reads, the measure and the stated rule.

    Attributes
    ----------
    id : str
    sentence : str
        What is claimed, as the chapter states it.
    figure : str
        The figure (its CSV is the measure's input).
    measure : callable
        ``measure(frame) -> DataFrame``: the rule's input (columns as
        :mod:`ldp.reporting.rules` names them).
    rule : str
        ``"within-se"``, ``"within-tolerance"`` or ``"ordering"``
        (:class:`~ldp.reporting.rules.WithinSE`,
        :class:`~ldp.reporting.rules.WithinTolerance`,
        :class:`~ldp.reporting.rules.OrderingHolds`).
    params : mapping
        The rule's parameters.
    setting : mapping
        Chapter parameters the claim's setting needs.
    ours : bool
        Always True here: none of these is the paper's.
    """

    id: str
    sentence: str
    figure: str
    measure: Callable[[pd.DataFrame], pd.DataFrame]
    rule: str
    params: Mapping = field(default_factory=dict)
    setting: Mapping = field(default_factory=dict)
    ours: bool = True
    chapter: str = CHAPTER


def _gain(frame: pd.DataFrame) -> pd.DataFrame:
    """Measured against closed-form gain at every (oracle, epsilon, targets) with a closed form."""
    c = frame[frame["source"] == "closed form"].set_index(["oracle", "epsilon", "targets"])["gain"]
    m = frame[frame["source"] == "measured"].set_index(["oracle", "epsilon", "targets"])
    j = m.join(c.rename("closed")).dropna(subset=["closed"]).reset_index()
    return pd.DataFrame({"point": [f"{o}, eps {e:g}, {t} target(s)" for o, e, t in
                                   zip(j["oracle"], j["epsilon"], j["targets"])],
                         "observed": j["gain"], "expected": j["closed"], "se": j["err"] / 2})


def _se(frame: pd.DataFrame) -> pd.Series:
    return frame["sd"] / np.sqrt(frame["runs"].clip(lower=1))


def _mga_below_input(frame: pd.DataFrame) -> pd.DataFrame:
    """Input manipulation's mean share (a) against maximal gain's (b), per (data set, protocol, epsilon)."""
    key = ["dataset", "protocol", "epsilon"]
    a = frame[frame["kind"] == "input"].set_index(key)
    b = frame[frame["kind"] == "MGA"].set_index(key)
    j = a.join(b, suffixes=("_a", "_b"), how="inner").reset_index()
    points = [f"{d}, {p}, eps {e:g}" for d, p, e in zip(j["dataset"], j["protocol"], j["epsilon"])]
    return pd.DataFrame({"point": points,
                         "a": j["mean_a"], "se_a": j["sd_a"] / np.sqrt(j["runs_a"].clip(lower=1)),
                         "b": j["mean_b"], "se_b": j["sd_b"] / np.sqrt(j["runs_b"].clip(lower=1))})


def _below(protocol: str, other: str, dataset: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """``protocol``'s mean maximal-gain share (a) against ``other``'s (b), per epsilon on ``dataset``."""
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        f = frame[(frame["kind"] == "MGA") & (frame["dataset"] == dataset)].set_index(["epsilon", "protocol"])
        rows = []
        for e in sorted(set(f.index.get_level_values("epsilon"))):
            if (e, protocol) not in f.index or (e, other) not in f.index:
                continue
            a, b = f.loc[(e, protocol)], f.loc[(e, other)]
            rows.append({"point": f"{dataset}, eps {e:g}", "a": a["mean"], "se_a": a["sd"] / np.sqrt(max(a["runs"], 1)),
                         "b": b["mean"], "se_b": b["sd"] / np.sqrt(max(b["runs"], 1))})
        return pd.DataFrame(rows)
    return measure


def _prediction(protocol: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        f = frame[(frame["protocol"] == protocol) & np.isfinite(frame["predicted"]) & (frame["predicted"] > 0)]
        points = [f"{d}, {k}, eps {e:g}" for d, k, e in zip(f["dataset"], f["kind"], f["epsilon"])]
        return pd.DataFrame({"point": points,
                             "value": f["mean"] / f["predicted"], "target": 1.0})
    return measure


def _lookalike(frame: pd.DataFrame) -> pd.DataFrame:
    a = frame[(frame["panel"] == "a")].set_index(["strategy", "epsilon"])
    rows = []
    for e in sorted(set(a.index.get_level_values("epsilon"))):
        try:
            fresh, look = a.loc[("fresh, plan's groups", e)], a.loc[("look-alike, chosen groups", e)]
        except KeyError:
            continue
        rows.append({"point": f"eps {e:g}", "a": 0.5 * fresh["value"],
                     "se_a": 0.5 * fresh["sd"] / np.sqrt(max(fresh["runs"], 1)), "b": look["value"],
                     "se_b": look["sd"] / np.sqrt(max(look["runs"], 1))})
    return pd.DataFrame(rows)


def _flagged(min_eps: float) -> Callable[[pd.DataFrame], pd.DataFrame]:
    def measure(frame: pd.DataFrame) -> pd.DataFrame:
        b = frame[(frame["panel"] == "b") & (frame["strategy"] == "look-alike, chosen groups")
                  & (frame["epsilon"] >= min_eps - 1e-12)]
        return pd.DataFrame({"point": [f"eps {e:g}" for e in b["epsilon"]], "value": b["value"], "target": 1.0})
    return measure


def _fpr(frame: pd.DataFrame) -> pd.DataFrame:
    """The stated rate (a) against the measured false-positive rate (b) of every detector run."""
    f = frame.dropna(subset=["fpr"])
    se = np.sqrt(f["fpr"] * (1 - f["fpr"]) / f["honest"].clip(lower=1))
    return pd.DataFrame({"point": f["run"], "a": f["alpha"], "se_a": 0.0, "b": f["fpr"], "se_b": se})


def _done_when(frame: pd.DataFrame) -> pd.DataFrame:
    target = {"MGA": frame["runs"].max(), "input": 0}
    return pd.DataFrame({"point": frame["kind"], "value": frame["planted"],
                         "target": [target[k] for k in frame["kind"]]})


#: the chapter's claims (ours), in the order the chapter states them
CLAIMS = (
    ClaimSpec("malicious-gain-closed-form",
              "The net gain of one maximal-gain report, (s - rho) / (p - q), equals its closed form for GRR, OUE, "
              "OLH, Hadamard response and the count-mean sketch at every budget measured.",
              "fig-malicious-gain", _gain, "within-se", {"t": 3.0}),
    ClaimSpec("malicious-mga-needs-fewer",
              "Maximal-gain fake users need no larger a share than input manipulators to plant one fresh target, "
              "for every protocol, budget and data set measured.",
              "fig-malicious-threshold", _mga_below_input, "ordering",
              {"share": 1.0, "floor": None, "ceiling": None, "what": "input share >= maximal-gain share"}),
    ClaimSpec("malicious-spm-below-pem",
              "On the synthetic set, maximal-gain fake users plant one fresh target in SPM's release with no "
              "larger a share than in PEM's, at every epsilon.",
              "fig-malicious-threshold", _below("PEM", "SPM", "Synthetic"), "ordering",
              {"share": 1.0, "floor": None, "ceiling": None, "what": "PEM's share >= SPM's share"}),
    ClaimSpec("malicious-prediction-pem",
              "For PEM, the first-order prediction B / (n g + B) of the share of fake users that plants one target "
              "is within 25 % of the measured share.",
              "fig-malicious-threshold", _prediction("PEM"), "within-tolerance",
              {"tol": 0.25, "what": "measured over predicted share"}),
    ClaimSpec("malicious-lookalike-chosen",
              "Fake users who choose their group plant a look-alike of a frequent value in PEM with at most half "
              "the share a fresh target needs in the plan's groups.",
              "fig-malicious-placement", _lookalike, "ordering",
              {"share": 1.0, "floor": None, "ceiling": None, "what": "half the fresh share >= look-alike share"}),
    ClaimSpec("malicious-consistency-flags-chosen",
              "From epsilon = 2 up, PEM's consistency check flags the look-alike planted by fake users who choose "
              "their group.",
              "fig-malicious-placement", _flagged(2.0), "within-tolerance",
              {"tol": 0.1, "what": "share of runs flagged"}),
    ClaimSpec("malicious-detector-fpr",
              "The support-count detector's false-positive rate on honest reports is at most the rate it states.",
              "detector-runs", _fpr, "ordering",
              {"share": 1.0, "floor": None, "ceiling": None, "what": "stated rate >= measured rate"}),
    ClaimSpec("malicious-done-when",
              "At epsilon = 2 with n = 10^6 synthetic users, 1.5 % maximal-gain fake users put one fresh target "
              "in PEM's top 16 in at least 3 of 4 runs, 1.5 % input manipulators in at most 1 of 4.",
              "done-when", _done_when, "within-tolerance", {"tol": 1.0, "what": "runs out of 4"},
              {"eps_fixed": 2.0, "n_synthetic": 1_000_000, "fraction_check": 0.015, "runs_check": 4}),
)
