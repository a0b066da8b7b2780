r"""The gain of one fake report, in closed form and measured, for every frequency oracle.

A fake report that supports a target with probability ``s`` and any other
value with probability ``rho`` moves the target's estimate by
``g(s) = (s - q) / (p - q)`` and another value's by ``g(rho)`` (eq. (2);
:func:`ldp.attacks.gain`), so the target gains

.. math:: \Delta = g(s) - g(\rho) = \frac{s - \rho}{p - q}

on every value it was not built for: what moves it up the ranking.  For each
oracle and budget, :func:`gain_table` crafts ``n`` reports for ``r`` targets
(:func:`ldp.attacks.craft`: the real hash family and seed search), counts which
targets each supports and which of ``others`` random values
(:func:`ldp.attacks.support_matrix`), and reports the measured ``s``, ``rho``
and ``Delta`` with standard errors over the reports, beside the closed forms
of :func:`ldp.attacks.support_probability` and :func:`ldp.attacks.crafted_rho`
(``nan`` where there is none: Hadamard response with several targets).  The
estimator is linear in the supports, so the measured shares *are* the
measured gains.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..oracles import CMS, FLH, GRR, HR, OLH, OUE
from ..validation import check_int, check_rng
from .crafting import craft, crafted_rho, support_matrix, support_probability
from .fake import random_values

__all__ = ["ORACLE_NAMES", "make_oracle", "gain_table"]

#: the oracles of the gain table (chapter 09's); :func:`make_oracle` also makes ``"FLH"``
ORACLE_NAMES = ("GRR", "OUE", "OLH", "HR", "CMS")


def make_oracle(name: str, epsilon: float, *, m: int = 64, domain: int = 1024, pool_size: int = 4096):
    """The oracle ``name`` at ``epsilon``: GRR and OUE on ``domain`` values, the hashed ones on ``m``-bit values.

    ``"FLH"`` has a pool of ``pool_size`` members (seed 0): its ``p``, ``q``
    and ``d'`` are OLH's, so its closed-form gain is OLH's (with
    ``min(trials, h)`` searched members).
    """
    if name == "GRR":
        return GRR(epsilon, domain)
    if name == "OUE":
        return OUE(epsilon, domain)
    if name == "OLH":
        return OLH(epsilon, m=m)
    if name == "HR":
        return HR(epsilon, m=m)
    if name == "CMS":
        return CMS(epsilon, m=m)
    if name == "FLH":
        return FLH(epsilon, m=m, pool_size=pool_size)
    raise ValueError(f"oracle must be one of {ORACLE_NAMES + ('FLH',)}, got {name!r}")


def _others(o, targets: np.ndarray, count: int, rng) -> np.ndarray:
    """``count`` distinct values none of the targets."""
    if isinstance(o, (GRR, OUE)):
        pool = np.setdiff1d(np.arange(o.domain_size), targets.astype(np.int64))
        return np.sort(rng.choice(pool, size=min(count, pool.shape[0]), replace=False)).astype(np.uint64)
    v = np.unique(random_values(o.m, count, rng=rng))
    return v[~np.isin(v, targets)]


def gain_table(epsilons: Sequence[float], *, oracles: Sequence[str] = ORACLE_NAMES, rs: Sequence[int] = (1, 16),
               kinds: Sequence[str] = ("MGA", "input"), n: int = 5000, others: int = 64, trials: int = 64,
               domain: int = 1024, rng=None) -> pd.DataFrame:
    """Measured and closed-form net gain of a fake report, per oracle, budget, kind and number of targets.

    Parameters
    ----------
    epsilons : sequence of float
    oracles : sequence of str
        Names from :data:`ORACLE_NAMES`, or ``"FLH"`` (:func:`make_oracle`).
    rs : sequence of int
        Numbers of targets.
    kinds : sequence of str
        Kinds of fake report (:data:`ldp.attacks.KINDS`).
    n : int
        Crafted reports per point.
    others : int
        Values the reports were not built for, whose supports measure ``rho``.
    trials : int
        Seeds searched per report (OLH, HR with several targets).
    domain : int
        GRR's and OUE's domain size.
    rng : None, int, SeedSequence, BitGenerator or Generator

    Returns
    -------
    pandas.DataFrame
        ``oracle, epsilon, kind, r, p, q, s, rho, gain, gain_se, s_closed, rho_closed, gain_closed,
        reports`` (``gain``: ``Delta`` of the module notes, its mean over the reports).
    """
    n = check_int(n, "n", 2)
    root = check_rng(rng)
    rows = []
    for name in oracles:
        for eps in epsilons:
            o = make_oracle(name, float(eps), domain=domain)
            for r, s_point in zip(rs, root.spawn(len(rs))):
                s_t, s_c, s_o = s_point.spawn(3)
                if isinstance(o, (GRR, OUE)):
                    t = np.sort(s_t.choice(domain, size=int(r), replace=False)).astype(np.uint64)
                else:
                    t = np.unique(random_values(o.m, int(r), rng=s_t))
                for kind in kinds:
                    rep = craft(o, t, n, kind=kind, rng=s_c, trials=trials)
                    on = support_matrix(o, rep, t).mean(axis=1)  # share of the targets each report supports
                    off = support_matrix(o, rep, _others(o, t, others, s_o)).mean(axis=1)  # and of other values
                    net = (on - off) / (o.p - o.q)
                    spread = float(np.ptp(net))  # 0 up to rounding: every report gains the same (GRR, one target)
                    exact = spread <= 1e-9 * max(1.0, abs(float(net.mean())))
                    se = 0.0 if exact else float(net.std(ddof=1) / np.sqrt(n))
                    s_closed = support_probability(o, kind, int(r), trials)
                    rho_closed = crafted_rho(o, kind, int(r))
                    rows.append({"oracle": name, "epsilon": float(eps), "kind": kind, "r": int(r), "p": o.p, "q": o.q,
                                 "s": float(on.mean()), "rho": float(off.mean()), "gain": float(net.mean()),
                                 "gain_se": se, "s_closed": s_closed,
                                 "rho_closed": rho_closed, "gain_closed": (s_closed - rho_closed) / (o.p - o.q),
                                 "reports": n})
    return pd.DataFrame(rows)
