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

__all__ = ["report_bits", "bits_per_user", "deployer_table"]


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
        :func:`ldp.figures.after_pem.protocols` (grid specs: name, keywords, label).
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
        One row per protocol (index ``protocol``): ``groups``, ``bits per user``, ``oracle queries``,
        ``server s`` (aggregation), ``all clients s`` (every user's reports), ``reports MB``, ``counts-engine ms``.
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
        rows.append({"protocol": label, "groups": len(res.group_sizes), "bits per user": bits_per_user(plan),
                     "oracle queries": res.queries, "server s": time.perf_counter() - t0, "all clients s": t_client,
                     "reports MB": reports.nbytes / 2**20, "counts-engine ms": counts_ms.get(label, np.nan)})
    return pd.DataFrame(rows).set_index("protocol")
