"""The appendix of the paper: Proposition 1 and Lemma 1, and the simpler joint estimator for SPM.

* :func:`lemma1_E`, :func:`prop1_A`, :func:`prop1_P1`, :func:`prop1_P2`,
  :func:`prop1_condition`, :func:`prop1_grid`, :func:`prop1_summary`,
  :func:`prop1_identity_table`, :func:`prop1_identity_error` -- Proposition 1 (partitioning users beats
  splitting the budget) and Lemma 1, with eq. (6);
* :func:`spm_pq`, :func:`spm_joint_estimate_pair`, :func:`spm_joint_estimate`,
  :func:`spm_joint_estimates` -- the joint count estimates of "Simpler Joint
  Estimation".

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", appendix.
"""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
from scipy.stats import norm

from ..oracles.formulas import olh_pq, olh_variance
from ..validation import check_epsilons, check_int, check_population, check_pq
from .identification import eq5_argument, round_identification_probability

__all__ = ["lemma1_E", "prop1_A", "prop1_P1", "prop1_P2", "prop1_condition", "prop1_grid", "prop1_summary",
           "prop1_identity_table", "prop1_identity_error", "spm_pq", "spm_joint_estimate_pair", "spm_joint_estimate",
           "spm_joint_estimates"]


# ---------------------------------------------------------------------------
# Proposition 1 and Lemma 1
# ---------------------------------------------------------------------------
def lemma1_E(epsilon, *, d_prime="real"):
    """``E(eps) = ((e^eps - 1)/e^(eps/2))^2 = 4 sinh^2(eps/2)`` (appendix, Lemma 1).

    Accepts ``epsilon >= 0`` (``E(0) = 0``), scalar or array.  ``E`` is ``4 (p - q)^2 / (q (1 - q))``, i.e.
    4 / OLH's variance per user (eq. (2)), at the appendix's ``p = 1/2``, ``q = 1/(e^eps + 1)``
    (``d_prime="real"``); ``d_prime=None`` gives the same quantity for the OLH the library runs (the
    integer ``d' = ceil(e^eps + 1)``, :func:`ldp.oracles.olh_variance`), the other reading of the appendix.
    """
    e = np.asarray(epsilon, dtype=float)
    if not np.all(np.isfinite(e)) or np.any(e < 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    if not (isinstance(d_prime, str) and d_prime in ("real", "paper")):
        out = np.zeros(e.shape)
        if np.any(e > 0):
            out[e > 0] = 4.0 / olh_variance(e[e > 0], d_prime=d_prime)
        return out[()] if out.ndim == 0 else out
    out = np.expm1(e) ** 2 / np.exp(e)  # ((e^eps - 1)/e^(eps/2))^2
    return out[()] if out.ndim == 0 else out


def prop1_A(k, j, N):
    """``A = Phi^{-1}((k - j)/N)`` of the appendix (``< 0`` when ``k - j < N/2``)."""
    k, j, N = (np.asarray(x, dtype=float) for x in (k, j, N))
    if np.any(k < 1) or np.any(j < 1) or np.any(j > k) or np.any(N <= 0):
        raise ValueError("need 1 <= j <= k and N > 0")
    out = norm.ppf((k - j) / N)
    return out[()] if out.ndim == 0 else out


def _prop1_args(epsilon, g, f, n, A):
    e = check_epsilons(epsilon)
    g = np.asarray(g, dtype=float)
    if np.any(g < 1) or np.any(g != np.floor(g)):
        raise ValueError(f"g must be integers >= 1, got {g!r}")
    f = np.asarray(f, dtype=float)
    if np.any(f <= 0) or np.any(f > 1):
        raise ValueError(f"f must be frequencies in (0, 1], got {f!r}")
    n = check_population(n)
    A = np.asarray(A, dtype=float)
    if np.any(np.isnan(A)):
        raise ValueError("A must be a real number (Phi^{-1}((k-j)/N))")
    B = f / 2.0 * (1.0 - f / 2.0)   # B = f_j/2 (1 - f_j/2)
    C = f * np.sqrt(n) / 2.0        # C = f_j sqrt(n)/2, n = all users (see Notes of prop1_P1)
    return e, g, A, B, C


def prop1_P1(epsilon, g, f, n, A):
    """Argument of Phi in eq. (6) when the users are partitioned (appendix).

    ``P1 = A/sqrt(1 + B E(eps)) + C/sqrt(g/E(eps) + g B)``, with
    ``B = f/2 (1 - f/2)``, ``C = f sqrt(n)/2``: each of ``g`` groups of
    ``n/g`` users answers one question with the full ``eps``.

    Parameters
    ----------
    epsilon : float or array
        Total privacy budget.
    g : int or array
        Number of questions (groups).
    f : float or array
        Frequency ``f_j`` in (0, 1].
    n : float or array
        Total number of users.
    A : float or array
        ``Phi^{-1}((k-j)/N)`` (see :func:`prop1_A`).

    Returns
    -------
    float or ndarray

    Notes
    -----
    The appendix writes ``C = f_j sqrt(n[i])/2``; for ``P1`` and ``P2`` to be
    eq. (6) with ``n/g`` users at ``eps`` and ``n`` users at
    ``eps/g`` respectively, ``n`` here must be the total population (a group
    of ``n/g`` gives ``C sqrt(E/g)`` in the numerator, which is how ``g``
    enters ``P1``).  ``Phi(P1)`` is then the identification probability.
    Both use the appendix's OLH with ``p = 1/2``, ``q = 1/(e^eps + 1)``.

    References
    ----------
    [PEM] appendix, proof of Proposition 1, eq. (6).
    """
    e, g, A, B, C = _prop1_args(epsilon, g, f, n, A)
    E = lemma1_E(e)
    out = np.asarray(A / np.sqrt(1.0 + B * E) + C / np.sqrt(g / E + g * B))
    return out[()] if out.ndim == 0 else out


def prop1_P2(epsilon, g, f, n, A):
    """Argument of Phi in eq. (6) when each user splits ``eps`` over ``g`` questions.

    ``P2 = A/sqrt(1 + B E(eps/g)) + C/sqrt(1/E(eps/g) + B)`` (all ``n``
    users answer each question with ``eps/g``).  Parameters as in
    :func:`prop1_P1`.

    References
    ----------
    [PEM] appendix, proof of Proposition 1.
    """
    e, g, A, B, C = _prop1_args(epsilon, g, f, n, A)
    Eg = lemma1_E(e / g)
    out = np.asarray(A / np.sqrt(1.0 + B * Eg) + C / np.sqrt(1.0 / Eg + B))
    return out[()] if out.ndim == 0 else out


def prop1_condition(epsilon, g, f):
    """Proposition 1's sufficient condition, ``1/E(eps/g) - g/E(eps) - (g - 1) B`` (``>= 0``: it holds).

    With ``A <= 0``, ``P1 >= P2`` whenever this is ``>= 0``
    (:func:`prop1_P1`, :func:`prop1_P2`; the book's chapter 03 derives it):
    the terms of ``P1`` and ``P2`` in ``C`` compare as ``g/E(eps) + g B <=
    1/E(eps/g) + B``, and those in ``A`` always favour ``P1``.  ``B = f/2 (1 - f/2)``.

    References
    ----------
    [PEM] appendix, proof of Proposition 1 (which takes ``B ~ 0``, where the
    condition is Lemma 1).
    """
    e = check_epsilons(epsilon)
    g = np.asarray(g, dtype=float)
    f = np.asarray(f, dtype=float)
    B = f / 2.0 * (1.0 - f / 2.0)
    with np.errstate(divide="ignore"):
        out = np.asarray(1.0 / lemma1_E(e / g) - g / lemma1_E(e) - (g - 1.0) * B)
    return out[()] if out.ndim == 0 else out


def _eq5_argument(f, n_i, e, A, d_prime):
    """The argument of Phi in eq. (5) (printed slots ``A``, zero-frequency competitors), OLH's ``p, q`` at ``e``."""
    p, q = np.array([olh_pq(float(x), d_prime=d_prime) for x in np.ravel(e)]).T.reshape(2, *np.shape(e))
    return eq5_argument(f, n_i, p, q, A)


def prop1_grid(epsilons, gs, fs, n, A=None, *, k: int = 16, j: int | None = None, N: float | None = None,
               d_prime="real"):
    """Proposition 1 and Lemma 1 over a grid, as a pandas DataFrame.

    Parameters
    ----------
    epsilons, gs, fs : sequences
        Grid of total budgets, numbers of questions ``g >= 1`` and frequencies.
    n : float
        Total number of users.
    A : float, optional
        ``Phi^{-1}((k-j)/N)``; default computed from ``k``, ``j``, ``N``.
    k, j, N : optional
        Used when ``A`` is None: ``k = 16``, ``j = k // 2`` and
        ``N = k (2^10 - 1)`` (``eta = 10``) by default.
    d_prime : "real" or None, keyword-only
        ``"real"``: the appendix's OLH (``p = 1/2``, ``q = 1/(e^eps + 1)``, eq. (6)); ``None``: the OLH the
        library runs (integer ``d'``): ``P1``, ``P2`` are then eq. (5)'s arguments with its ``p, q``
        (``n/g`` users at ``eps``; ``n`` users at ``eps/g``) and the Lemma 1 columns use
        ``lemma1_E(..., d_prime=None)``; the other columns stay the appendix's.

    Returns
    -------
    pandas.DataFrame
        Columns ``epsilon, g, f, n, A, P1, P2, P1_gt_P2, prob_partition,
        prob_split, E_eps_over_g, E_eps_div_g, lemma1_holds, B0_condition``:
        ``prob_*`` are ``Phi(P1)``, ``Phi(P2)``; ``lemma1_holds`` is
        ``E(eps/g) < E(eps)/g`` (strict, so False at ``g = 1``);
        ``B0_condition`` is ``P1 > P2`` with ``B = 0`` (the case the proof covers);
        ``condition`` is :func:`prop1_condition` (``>= 0``: the sufficient
        condition holds).
    """
    import pandas as pd

    if A is None:
        k = check_int(k, "k", 1)
        j = max(1, k // 2) if j is None else check_int(j, "j", 1, k)
        N = k * (2**10 - 1) if N is None else N
        A = float(prop1_A(k, j, N))
    ee, gg, ff = np.meshgrid(np.asarray(epsilons, float), np.asarray(gs, float), np.asarray(fs, float),
                             indexing="ij")
    ee, gg, ff = ee.ravel(), gg.ravel(), ff.ravel()
    if isinstance(d_prime, str) and d_prime in ("real", "paper"):
        P1, P2 = prop1_P1(ee, gg, ff, n, A), prop1_P2(ee, gg, ff, n, A)
    else:
        P1, P2 = _eq5_argument(ff, n / gg, ee, A, d_prime), _eq5_argument(ff, float(n), ee / gg, A, d_prime)
    E1, E2 = lemma1_E(ee / gg, d_prime=d_prime), lemma1_E(ee, d_prime=d_prime) / gg
    C = ff * math.sqrt(float(n)) / 2
    P1_B0 = A + C * np.sqrt(lemma1_E(ee) / gg)
    P2_B0 = A + C * np.sqrt(E1)
    return pd.DataFrame(dict(epsilon=ee, g=gg.astype(int), f=ff, n=float(n), A=A, P1=P1, P2=P2,
                             P1_gt_P2=P1 > P2, prob_partition=norm.cdf(P1), prob_split=norm.cdf(P2),
                             E_eps_over_g=E1, E_eps_div_g=E2, lemma1_holds=E1 < E2,
                             B0_condition=P1_B0 > P2_B0, condition=prop1_condition(ee, gg, ff)))


def prop1_summary(grid) -> dict:
    """What :func:`prop1_grid`'s frame says about Proposition 1 and Lemma 1, as named numbers.

    Returns
    -------
    dict
        ``prop1_cells`` (grid size); ``prop1_share``, ``prop1_fail_share``
        (shares with ``P1 > P2`` and without); ``prop1_fail_min_eps``,
        ``prop1_fail_min_f`` (smallest budget and frequency where it fails),
        ``prop1_fail_min_arg`` (smallest argument of Phi there) and
        ``prop1_fail_tail_digits`` (``d`` with ``1 - Phi(arg) < 10^-d``), each
        ``inf`` (``0`` for the digits) if it never fails; ``lemma_share``,
        ``b0_share`` (shares where Lemma 1 and the ``B = 0`` inequality hold);
        ``lemma_max_ratio`` (largest ``E(eps/g) / (E(eps)/g)``),
        ``lemma_max_strong`` (largest ``g^2 E(eps/g) / E(eps)``);
        ``condition_share`` (share where the sufficient condition holds),
        ``condition_violations`` (cells where it holds, ``A <= 0`` and yet
        ``P1 < P2``: 0 if the proposition's proof is right).
    """
    fails = grid[~grid.P1_gt_P2]
    holds = grid.condition >= 0
    out = {"prop1_cells": int(len(grid)), "prop1_share": float(grid.P1_gt_P2.mean()),
           "prop1_fail_share": float(1 - grid.P1_gt_P2.mean()),
           "prop1_fail_min_eps": float(fails.epsilon.min()) if len(fails) else math.inf,
           "prop1_fail_min_f": float(fails.f.min()) if len(fails) else math.inf}
    arg = float(np.minimum(fails.P1, fails.P2).min()) if len(fails) else math.inf
    out["prop1_fail_min_arg"] = arg                                   # smallest argument of Phi there
    # 1 - Phi(arg) underflows; its decimal exponent from log-survival
    out["prop1_fail_tail_digits"] = int(np.floor(-norm.logsf(arg) / np.log(10))) if len(fails) else 0
    out.update(lemma_share=float(grid.lemma1_holds.mean()), b0_share=float(grid.B0_condition.mean()),
               lemma_max_ratio=float((grid.E_eps_over_g / grid.E_eps_div_g).max()),
               lemma_max_strong=float((grid.E_eps_over_g * grid.g / grid.E_eps_div_g).max()),  # g^2 E(eps/g)/E(eps)
               condition_share=float(holds.mean()),
               condition_violations=int((holds & (grid.A <= 0) & (grid.P1 < grid.P2)).sum()))
    return out


def prop1_identity_table(grid, *, k: int = 16, j: int = 8, N: float | None = None, epsilons=(0.5, 2.0, 6.0),
                         slots="formula"):
    """Eq. (6) against eq. (5) on :func:`prop1_grid`'s rows at the budgets nearest ``epsilons``, as a DataFrame.

    Eq. (6) is the grid's ``prob_partition``, ``Phi(P1)``; eq. (5) is
    :func:`ldp.analysis.round_identification_probability` with the appendix's ``p = 1/2``,
    ``q = 1/(e^eps + 1)``, ``n/g`` users and ``slots`` (default the printed ``(k - j)/N``, which eq. (6)
    keeps).  ``k``, ``j``, ``N`` must be those the grid's ``A`` was computed from (:func:`prop1_grid`'s
    defaults by default).

    Returns
    -------
    pandas.DataFrame
        ``g, epsilon, f, eq6, eq5, difference`` (``eq6 - eq5``), one row per grid cell at those budgets.
    """
    import pandas as pd

    N = k * (2**10 - 1) if N is None else N
    eps_all = np.unique(grid.epsilon.to_numpy())
    parts = []
    for g in np.unique(grid.g.to_numpy()):
        sub = grid[grid.g == g]
        for e in epsilons:
            rows = sub[np.isclose(sub.epsilon, eps_all[np.argmin(np.abs(eps_all - e))])]
            p, q = olh_pq(float(rows.epsilon.iloc[0]), d_prime="real")
            direct = round_identification_probability(rows.f.to_numpy(), float(rows.n.iloc[0]) / int(g), N + k, k,
                                                      p, q, k=k, ranks=j, slots=slots)
            eq6 = rows.prob_partition.to_numpy()
            parts.append(pd.DataFrame({"g": int(g), "epsilon": rows.epsilon.to_numpy(), "f": rows.f.to_numpy(),
                                       "eq6": eq6, "eq5": direct, "difference": eq6 - direct}))
    return pd.concat(parts, ignore_index=True)


def prop1_identity_error(grid, *, k: int = 16, j: int = 8, N: float | None = None,
                         epsilons=(0.5, 2.0, 6.0)) -> float:
    """Largest ``|Phi(P1) - eq. (5)|`` on :func:`prop1_grid`'s rows at the budgets nearest ``epsilons``.

    The largest ``|difference|`` of :func:`prop1_identity_table` (same arguments).
    """
    table = prop1_identity_table(grid, k=k, j=j, N=N, epsilons=epsilons)
    return float(np.max(np.abs(table["difference"].to_numpy()), initial=0.0))


# ---------------------------------------------------------------------------
# Simpler joint estimation for SPM (appendix)
# ---------------------------------------------------------------------------
def spm_pq(epsilon: float, *, reading: str = "appendix") -> tuple[float, float]:
    """OLH ``(p, q)`` for the joint estimator.

    ``reading="appendix"``: ``p = 1/2``, ``q = 1/(e^eps + 1)`` (real
    ``d' = e^eps + 1``); ``reading="section2"``: ``d' = ceil(e^eps + 1)``,
    ``p = e^eps/(e^eps + d' - 1)``, ``q = 1/d'``.  ``epsilon`` is the budget
    of one report (SPM gives each of its three reports ``eps/3``).
    """
    if reading == "appendix":
        return olh_pq(epsilon, d_prime="real")
    if reading == "section2":
        return olh_pq(epsilon)
    raise ValueError(f"reading must be 'appendix' or 'section2', got {reading!r}")


def spm_joint_estimate_pair(I_ab, n_a, n_b, n, p, q):
    """Appendix's joint count estimate of a pattern pair ``(a, b)``.

    ``n_ab = (I_ab - (n_a + n_b) q (p - q) - n q^2) / (p - q)^2``

    Parameters
    ----------
    I_ab : array_like
        Reports supporting both ``a`` (segment i) and ``b`` (segment j).
    n_a, n_b : array_like
        Unbiased estimates of the counts of ``a`` and ``b`` in the same group.
    n : float
        Users in the group.
    p, q : float
        Support probabilities (see :func:`spm_pq`).

    Returns
    -------
    ndarray or float
        Unbiased when ``n_a``, ``n_b`` are and each report supports
        independently with probability ``p`` (own pattern) or ``q``.

    References
    ----------
    [PEM] appendix, "Simpler Joint Estimation".
    """
    p, q = check_pq(p, q, closed=True)
    n = float(check_population(n))
    I_ab, n_a, n_b = (np.asarray(x, dtype=float) for x in (I_ab, n_a, n_b))
    out = (I_ab - (n_a + n_b) * q * (p - q) - n * q**2) / (p - q) ** 2  # appendix, n~_a^b
    return out[()] if out.ndim == 0 else out


def spm_joint_estimate(I_V, subset_sums, n, p, q):
    """Appendix's joint estimate for ``|V| = r`` answers (inclusion-exclusion).

    ``n_V = (I_V - sum_{i=0}^{r-1} n*_{V(i)} q^(r-i) (p-q)^i) / (p-q)^r``

    Parameters
    ----------
    I_V : array_like
        Reports supporting all ``r`` answers of ``V``.
    subset_sums : sequence of array_like, length r - 1
        ``subset_sums[i-1] = n*_{V(i)}``: the sum of the joint estimates over
        all size-``i`` subsets of ``V`` (``i = 1..r-1``); ``n*_{V(0)} = n``.
    n : float
        Users in the group.
    p, q : float
        Support probabilities.

    Returns
    -------
    ndarray or float

    Notes
    -----
    With ``r = 1`` this is OLH's ``(I - n q)/(p - q)`` and with ``r = 2`` it
    is :func:`spm_joint_estimate_pair`.  The appendix reuses the letter ``n``
    for ``|V|``; here ``r = |V|``.

    References
    ----------
    [PEM] appendix, "Simpler Joint Estimation".
    """
    p, q = check_pq(p, q, closed=True)
    n = float(check_population(n))
    r = len(subset_sums) + 1
    acc = n * q**r                                         # i = 0: n*_{V(0)} = n
    for i, s in enumerate(subset_sums, start=1):
        acc = acc + np.asarray(s, dtype=float) * q ** (r - i) * (p - q) ** i
    out = (np.asarray(I_V, dtype=float) - acc) / (p - q) ** r  # appendix, n~_V
    return out[()] if out.ndim == 0 else out


def spm_joint_estimates(supports, n, p, q) -> dict:
    """Joint estimates for every subset of a set of answers, recursively.

    Parameters
    ----------
    supports : mapping
        ``{subset: I_S}`` for every non-empty subset ``S`` of ``V`` (keys:
        frozensets, or tuples/sets, of answer labels): ``I_S`` counts the
        reports supporting every answer in ``S``.
    n, p, q
        As in :func:`spm_joint_estimate`.

    Returns
    -------
    dict
        ``{frozenset(S): n~_S}`` for every non-empty subset.
    """
    sup = {frozenset(k): v for k, v in supports.items()}
    if not sup:
        raise ValueError("supports must not be empty")
    V = frozenset().union(*sup)
    for r in range(1, len(V) + 1):
        for members in combinations(sorted(V, key=repr), r):
            if frozenset(members) not in sup:
                raise ValueError(f"supports lacks the subset {set(members)!r}; every non-empty subset of V is needed")
    est: dict = {}
    for r in range(1, len(V) + 1):
        for members in combinations(sorted(V, key=repr), r):
            S = frozenset(members)
            sums = [sum(est[frozenset(T)] for T in combinations(members, i)) for i in range(1, r)]
            est[S] = spm_joint_estimate(sup[S], sums, n, p, q)
    return est


