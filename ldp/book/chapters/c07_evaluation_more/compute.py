"""TODO docstring."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ....analysis import pem_config
from ....analysis.config import PEMConfig
from ....core.dataset import Dataset
from ....experiments import summarize


def eta_table(k: int, m: int, etas: Sequence[int], *, query_limit: int) -> pd.DataFrame:
    """PEM with the step fixed at each η (:func:`ldp.analysis.pem_config`): rounds, oracle queries, within the limit."""
    cfg = {e: pem_config(k, m, eta=e) for e in etas}
    return pd.DataFrame({"rounds g": [cfg[e].g for e in etas], "oracle queries": [cfg[e].queries for e in etas],
                         "within 2^20": [cfg[e].queries <= query_limit for e in etas]},
                        index=pd.Index(list(etas), name="eta"))


def config_label(config) -> str:
    """A PEM configuration's series label in panel (c)'s runs: ``"etas=12-12-12-12-12"``."""
    return "etas=" + "-".join(map(str, config.etas))


def assumption_summary(df8c: pd.DataFrame, chosen: Mapping[tuple[str, float], PEMConfig]) -> pd.DataFrame:
    """Panel (c)'s rows: per (assumption, ε) the configuration the optimiser chose and its measured F1.

    ``df8c`` holds the runs of each distinct configuration (protocol label :func:`config_label`),
    ``chosen`` maps ``(assumption, epsilon)`` to the optimiser's configuration.
    """

    per_config = summarize(df8c, by=["protocol", "epsilon"], metrics=["f1"]).set_index(["protocol", "epsilon"])
    return pd.DataFrame([{"assumption": a, "epsilon": e, "configuration": config_label(c),
                          "predicted F1": c.predicted_f1, **per_config.loc[(config_label(c), e)].to_dict()}
                         for (a, e), c in chosen.items()])


def assumption_configurations(s8c: pd.DataFrame) -> pd.DataFrame:
    """Panel (c)'s configurations: per assumption, each configuration the optimiser chose and at which budgets."""
    return (s8c.groupby(["assumption", "configuration"], sort=False)["epsilon"]
            .agg(lambda e: ", ".join(f"{x:g}" for x in e)).rename("at budgets ε").reset_index())


def k_for_threshold(rank_frequencies, theta: float) -> int:
    """``k(θ)``: the number of ranks whose frequency under the generating law is at least ``theta`` (at least 1)."""
    return max(1, int(np.count_nonzero(np.asarray(rank_frequencies) >= theta)))


def threshold_table(ds: Dataset, rank_frequencies, thetas: Sequence[float]) -> pd.DataFrame:
    """Per threshold: ``k(θ)`` under the law and the number of values at or above θ in the data."""
    return pd.DataFrame({"theta": list(thetas),
                         "k(theta) (law)": [k_for_threshold(rank_frequencies, t) for t in thetas],
                         "values >= theta in the data": [len(ds.above(t)) for t in thetas]}).set_index("theta")



def final_round_release(protocol, ds, *, theta: float, rng) -> dict[str, float]:
    """One run of a threshold-mode ``protocol`` on ``ds``: its final step and the false positives it predicts.

    Returns ``n_users`` and ``n_candidates`` of the last round, ``fp_expected``
    (candidates nobody holds whose support passes the release test: the
    binomial tail of a non-holder's support ``Bin(N, q)`` beyond the support
    that gives an estimate of ``theta n`` under eq. (2), times the candidates)
    and ``theta_sigmas`` (``theta`` in standard deviations of a non-holder's
    frequency estimate).
    """
    from scipy import stats

    last = protocol.run(ds, rng=rng, engine="counts").rounds[-1]
    o = last.question.oracle()
    N, D = last.n_users, last.n_candidates
    t_sup = np.ceil(N * o.q + theta * N * (o.p - o.q))  # smallest support with estimate >= theta n, eq. (2)
    sigma_freq = np.sqrt(N * o.q * (1 - o.q)) / (o.p - o.q) / N
    return {"n_users": int(N), "n_candidates": int(D), "fp_expected": float(D * stats.binom.sf(t_sup - 1, N, o.q)),
            "theta_sigmas": float(theta / sigma_freq)}

