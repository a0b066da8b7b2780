"""What a protocol costs a deployment: bits per user, the server's time, the reports' memory (chapter 08).

Measured with the protocol engine (every report made and aggregated), beside the
count-level engine's time per run; :func:`report_bits` and :func:`bits_per_user`
count what a user sends.
"""
from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..oracles import CMS, HR, OLH
from .registry import resolve_protocol

__all__ = ["COLUMNS", "report_bits", "bits_per_user", "deployer_table"]

#: the columns of :func:`deployer_table`, by short name
COLUMNS = {"groups": "groups", "bits": "bits per user", "queries": "oracle queries",
           "server": "server: aggregation (s)", "clients": "all users: reports (s)", "memory": "reports (MB)",
           "counts": "count engine: one run (ms)"}


def report_bits(oracle) -> int:
    """Bits of one report of ``oracle``: HR and CMS say so; OLH sends its 64-bit seed and ``y`` in ``[d']``."""
    if isinstance(oracle, (HR, CMS)):
        return int(oracle.bits_per_report)
    if isinstance(oracle, OLH):
        return 64 + int(oracle.d_prime - 1).bit_length()
    raise TypeError(f"report_bits: no report size known for {type(oracle).__name__}")


def bits_per_user(plan) -> float:
    """Mean bits a user sends under ``plan``: one report per question of her group, averaged over the groups."""
    return sum(f * sum(report_bits(q.oracle()) for q in qs) for f, qs in zip(plan.fractions, plan.questions))


def deployer_table(protocols, data, *, epsilon: float, k: int, counts_ms: Mapping[str, float],
                   warmup=None) -> pd.DataFrame:
    """What each protocol costs, measured with the protocol engine (every report made and aggregated).

    Parameters
    ----------
    protocols : list of (name, kwargs, label)
        :func:`ldp.experiments.successors.protocols` (grid specs: name, keywords, label).
    data : ldp.datasets.Dataset
        The users (``data.m`` bits per value).
    epsilon, k : float, int
        The protocols' budget and number of heavy hitters.
    counts_ms : mapping
        Label -> mean wall time (ms) of one count-level run in the chapter's grid (a column of the table).
    warmup : ldp.datasets.Dataset, optional
        A small data set run once through each protocol before it is timed, so that the times leave
        out numba's compilation.

    Returns
    -------
    pandas.DataFrame
        One row per protocol (index ``protocol``), in the column names :data:`COLUMNS` gives: groups, bits per
        user, oracle queries, the server's time to aggregate, the time to make every user's reports, the
        reports' memory and the count engine's time per run.
    """
    rows = []
    for name, kw, label in protocols:
        P = resolve_protocol(name)[1](epsilon, k, data.m, **kw)
        if warmup is not None:
            P.aggregate(P.privatize(warmup, plan=P.plan(warmup.n, rng=1), rng=2), rng=3)
        plan = P.plan(data.n, rng=1)  # what the server publishes first
        t0 = time.perf_counter()
        reports = P.privatize(data, plan=plan, rng=2)
        t_client = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = P.aggregate(reports, rng=3)
        values = (len(res.group_sizes), bits_per_user(plan), res.queries, time.perf_counter() - t0, t_client,
                  reports.nbytes / 2**20, counts_ms.get(label, np.nan))
        rows.append({"protocol": label, **dict(zip(COLUMNS.values(), values))})
    return pd.DataFrame(rows).set_index("protocol")
