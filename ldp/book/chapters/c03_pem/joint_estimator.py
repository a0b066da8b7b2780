"""The appendix's joint estimator for SPM (chapter 03): simulated against the true counts.

A table, not a figure: :func:`frame` is the result table ``03_pem/joint-estimator``
(from :func:`ldp.analysis.montecarlo.joint_estimator_simulation`) the chapter saves and
the claim reads.
"""
from __future__ import annotations

import pandas as pd

from ...claims import rules as R
from ...claims.claim import Alternative, Claim, Test

__all__ = ["CHAPTER", "NAME", "ENGINES", "frame", "CLAIMS"]

CHAPTER, NAME = "03_pem", "joint-estimator"
ENGINES = {f"{CHAPTER}/{NAME}": "OLH reports of simulated users (ldp.oracles)"}


def frame(table: pd.DataFrame) -> pd.DataFrame:
    """The saved table: ``answers, r, true_count, mean_estimate, se``, one row per subset of answers."""
    return table[["answers", "r", "true_count", "mean_estimate", "se"]]


def _m_joint(store, name: str = NAME):
    t = store.load(CHAPTER, name)
    return pd.DataFrame({"point": "answers " + t["answers"].astype(str), "observed": t["mean_estimate"],
                         "expected": t["true_count"], "se": t["se"]})


#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {"joint-estimator": (("answers", "r", "true_count", "mean_estimate", "se"),
                              "the simulation of the appendix's joint estimator, one row per subset of answers")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s4-joint-unbiased", section="Appendix", ref="joint estimation for SPM",
          quote=r"Given that $\tilde{n_a}$ and $\tilde{n^b}$ are unbiased, $\tilde{n^b_a}$ is unbiased.",
          says="unbiased",
          test=Test(what="mean joint estimate against the true count, every subset of answers", measure=_m_joint,
                    rule=R.WithinSE(), chapter=CHAPTER, reads=(f"{CHAPTER}/{NAME}",), rests_on=("6-appendix",),
                    other_readings=(Alternative(
                        "the appendix's p = 1/2, q = 1/(e^ε + 1) in the estimator, not the p, q of the OLH that runs "
                        "(integer "
                        "d')", "6-appendix", lambda store: _m_joint(store, f"{NAME}-appendix-pq")),))),
)
