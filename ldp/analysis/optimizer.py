"""The PEM configuration optimizer (section 4.3): candidate configurations, their predicted utility, the best one.

* :func:`candidate_configs` -- every configuration within a query limit;
* :func:`evaluate_configs` -- their predicted F1 and NCR (eq. (4) with eq. (5));
* :func:`optimize_pem` -- the best one for a target metric.

Arguments follow ``epsilon, k, m`` (the order of ``ldp.PEM(epsilon, k, m)``),
everything after the first ones keyword-only.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 4.2-4.4.
"""
from __future__ import annotations

import numpy as np

from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int, check_population
from .config import PEMConfig, balanced_bits, check_k_m, default_gamma, domain_sizes, min_query_limit, split_bits
from .frequencies import assumed_frequencies
from .identification import check_competitors, config_probabilities, slot_offset, support_pq, utility_weights

__all__ = ["candidate_configs", "evaluate_configs", "optimize_pem"]

_EXP_WHY = "e**epsilon must be a finite double"


def _query_cost(sizes, mode: str) -> int:
    if mode == "paper":  # 2^(gamma+eta) * g generalised: g times the largest round
        return len(sizes) * max(sizes)
    return sum(sizes)  # "exact": sum_i |D_i|


def _search_values(given, name: str, default: list[int], search: list[int], lo: int, hi: int | None) -> list[int]:
    """``None`` -> ``default``, ``"search"`` -> ``search``, else the sorted distinct checked integers."""
    if given is None:
        return default
    if isinstance(given, str):
        if given != "search":
            raise ValueError(f"{name} must be None, 'search' or a sequence of integers, got {given!r}")
        return search
    return sorted({check_int(x, f"{name}[...]", lo, hi) for x in given})


def candidate_configs(k: int, m: int, *, query_limit: int = 2**20, gammas=None, cand_sizes=None,
                      eta_layout: str = "both", query_count: str = "paper") -> list[PEMConfig]:
    """All PEM configurations the optimizer considers, each within the query limit.

    Parameters
    ----------
    k, m : int
        Number of heavy hitters and value length in bits.
    query_limit : int, default 2**20
        Bound on the query count (see ``query_count``).
    gammas : None, "search" or sequence of int
        ``None``: ``[ceil(log2 k)]`` (section 4.2.2); ``"search"``: that value
        +-2 (clipped to ``[0, m-1]``); or explicit values.
    cand_sizes : None, "search" or sequence of int
        ``|C_i|`` for the rounds before the last (the last keeps ``k``).
        ``None``: ``[k]``; ``"search"``: ``{ceil(k/2), k, 2k, 4k}``.
    eta_layout : {"leftover", "balanced", "both"}
        ``"leftover"``: ``eta`` bits per round, the last round the leftover
        (section 4.3); ``"balanced"``: ``g`` rounds with ``eta[i]``
        differing by at most one (the larger ones last); "both" (default).
    query_count : {"paper", "exact"}
        ``"paper"``: ``g * max_i |D_i|`` (equals section 4.3's
        ``2^(gamma+eta) g`` for the default configuration and bounds
        ``sum |D_i|``); ``"exact"``: ``sum_i |D_i|``.

    Returns
    -------
    list of PEMConfig
        Sorted by (gamma, g, etas, cand size); equal group fractions.
    """
    k, m = check_k_m(k, m)
    query_limit = check_int(query_limit, "query_limit", 1)
    if query_count not in ("paper", "exact"):
        raise ValueError(f"query_count must be 'paper' or 'exact', got {query_count!r}")
    if eta_layout not in ("leftover", "balanced", "both"):
        raise ValueError(f"eta_layout must be 'leftover', 'balanced' or 'both', got {eta_layout!r}")
    g0 = default_gamma(k, m)
    gam = _search_values(gammas, "gammas", [g0], list(range(max(0, g0 - 2), min(m - 1, g0 + 2) + 1)), 0, m - 1)
    cs = _search_values(cand_sizes, "cand_sizes", [k], sorted({-(-k // 2), k, 2 * k, 4 * k}), 1, None)
    log_lim = query_limit.bit_length()
    seen, out = set(), []
    for gamma in gam:
        L = m - gamma
        layouts = []
        # a round's domain is at least 2^(eta_i), so eta_i <= log2(limit); g >= L/log2(limit)
        max_eta = min(L, log_lim)
        if eta_layout in ("leftover", "both"):
            layouts += [split_bits(L, e) for e in range(1, max_eta + 1)]
        if eta_layout in ("balanced", "both"):
            layouts += [balanced_bits(L, g) for g in sorted({-(-L // e) for e in range(1, max_eta + 1)})]
        for etas in layouts:
            for c in cs:
                cands = (c,) * (len(etas) - 1) + (k,)
                key = (gamma, etas, cands)
                if key in seen:
                    continue
                seen.add(key)
                ds = domain_sizes(gamma, etas, cands)
                if any(ci > di for ci, di in zip(cands, ds)):
                    continue
                if _query_cost(ds, query_count) > query_limit:
                    continue
                out.append(PEMConfig(k=k, m=m, gamma=gamma, etas=etas, cand_sizes=cands))
    out.sort(key=lambda c: (c.gamma, c.g, c.etas, c.cand_sizes))
    return out


def _model(epsilon, k, m, n, distribution, *, d_prime, slots, competitors, zipf_exponent, support):
    """The checked arguments of :func:`ldp.analysis.identification.config_probabilities` after the configuration.

    Shared by :func:`evaluate_configs` and :func:`optimize_pem`: ``(n, f, p, q, offset, competitors)``.
    """
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    n = float(check_population(n))
    f = assumed_frequencies(distribution, k, n=n, m=m, zipf_exponent=zipf_exponent, support=support)
    p, q = support_pq(e, d_prime=d_prime)
    return n, f, p, q, slot_offset(slots), check_competitors(competitors)


def evaluate_configs(configs, epsilon, *, n, distribution="zipf", d_prime=None, slots="text",
                     competitors: str = "paper", zipf_exponent: float = 1.0, support: int | None = None):
    """Predicted F1 and NCR (eq. (4)) of each configuration, as a DataFrame.

    Parameters
    ----------
    configs : iterable of PEMConfig
        Configurations sharing ``m`` and ``k``.
    epsilon : float
        Privacy budget (> 0).
    n : float, keyword-only
        Number of users (>= 1).
    distribution, zipf_exponent, support
        As in :func:`ldp.analysis.assumed_frequencies`.
    d_prime, slots, competitors
        As in :func:`ldp.analysis.identification_probability`.

    Returns
    -------
    pandas.DataFrame
        Columns ``gamma, etas, g, cand_sizes, group_fractions, queries, f1, ncr, config``.
    """
    import pandas as pd

    configs = list(configs)
    if not configs:
        raise ValueError("configs must contain at least one PEMConfig")
    if not all(isinstance(c, PEMConfig) for c in configs):
        raise TypeError("configs must be PEMConfig objects")
    m, k = configs[0].m, configs[0].k
    if any(c.m != m or c.k != k for c in configs):
        raise ValueError("all configs must share m and k")
    model = _model(epsilon, k, m, n, distribution, d_prime=d_prime, slots=slots, competitors=competitors,
                   zipf_exponent=zipf_exponent, support=support)
    w1, wn = utility_weights(k, "f1"), utility_weights(k, "ncr")
    rows = []
    for c in configs:
        P = config_probabilities(c, *model).prod(axis=0)
        rows.append(dict(gamma=c.gamma, etas=c.etas, g=c.g, cand_sizes=c.cand_sizes,
                         group_fractions=c.group_fractions, queries=c.queries,
                         f1=float(w1 @ P), ncr=float(wn @ P), config=c))
    return pd.DataFrame(rows)


def optimize_pem(epsilon, k: int, m: int, *, n, query_limit: int = 2**20, distribution="zipf",
                 target: str = "f1", zipf_exponent: float = 1.0, support: int | None = None,
                 gammas=None, cand_sizes=None, eta_layout: str = "both", fractions: str = "equal",
                 query_count: str = "paper", d_prime=None, slots="text",
                 competitors: str = "lower") -> PEMConfig:
    """The PEM configuration with the best predicted utility (section 4.3).

    Evaluates eq. (4) with eq. (5) for every candidate configuration
    (:func:`candidate_configs`) and returns the best.  By default it searches
    ``eta`` (each ``eta`` with the leftover bits in the last round, and each
    resulting ``g`` with the bits spread evenly), with ``gamma =
    ceil(log2 k)``, ``|C_i| = k`` and ``n[i] = n/g`` (section 4.2.2); the
    options open the other parameters the paper mentions.  No returned
    configuration exceeds ``query_limit``.

    Parameters
    ----------
    epsilon : float
        Privacy budget (> 0).
    k, m : int
        Number of heavy hitters and value length in bits.
    n : float, keyword-only
        Number of users (>= 1).
    query_limit : int, default 2**20
        Frequency-oracle query limit (section 4.3's example).
    distribution : "zipf" or array_like, default "zipf"
        Assumed distribution, see :func:`ldp.analysis.assumed_frequencies`.
    target : {"f1", "ncr"}, default "f1"
        Metric maximised (section 6.1 optimises F1).
    zipf_exponent : float, default 1.0
        Exponent of the assumed Zipf law (section 4.3: ``f_j ∝ 1/j``).
    support : int, optional
        Distinct values of the Zipf law; default ``min(2^m, n)``.
    gammas, cand_sizes, eta_layout, query_count
        Search space, see :func:`candidate_configs`.  ``eta_layout`` defaults
        to ``"both"``: with ``"leftover"`` only, a split such as
        ``m - gamma = 155 = 14 x 11 + 1`` ends with a one-bit round and the
        model then prefers ``16`` rounds of 10 bits to the ``15`` rounds the
        limit allows; the balanced split of those 15 rounds beats both
        (Observations 1 and 2).
    fractions : {"equal", "optimize"}, default "equal"
        ``"optimize"`` also tunes ``n[i]`` of the best configuration
        numerically (Nelder-Mead on softmax weights).
    d_prime : None, number or "real"
        OLH parameters, see :func:`ldp.oracles.olh_pq`.
    slots : {"text", "formula"} or float
        Threshold rank of eq. (5), see :func:`ldp.analysis.round_identification_probability`.
    competitors : {"lower", "paper"}, default "lower"
        ``N`` per round, see :func:`ldp.analysis.round_identification_probability`.
        The default differs from :func:`ldp.analysis.identification_probability`'s:
        with the paper's ``N[i] = |D_i| - k`` the model overrates rounds with
        ``|D_i| = 2k`` (``eta = 1``) so much that at ``eps = 1``,
        ``n = 10^6``, ``m = 64`` it prefers 60 one-bit rounds, against
        section 4.3 and Observation 1; ``"lower"`` removes that artefact and
        changes nothing when ``|D_i| >> k``.

    Returns
    -------
    PEMConfig
        With ``predicted_f1`` and ``predicted_ncr`` filled.  Ties (within
        ``1e-12``) go to fewer rounds, then to larger early ``eta``.

    Raises
    ------
    ValueError
        If no configuration fits ``query_limit``.

    References
    ----------
    [PEM] sections 4.2.2, 4.2.3, 4.3 and 4.4 (Observations 1 and 2).
    """
    k, m = check_k_m(k, m)
    model = _model(epsilon, k, m, n, distribution, d_prime=d_prime, slots=slots, competitors=competitors,
                   zipf_exponent=zipf_exponent, support=support)
    query_limit = check_int(query_limit, "query_limit", 1)
    if target not in ("f1", "ncr"):
        raise ValueError(f"target must be 'f1' or 'ncr', got {target!r}")
    if fractions not in ("equal", "optimize"):
        raise ValueError(f"fractions must be 'equal' or 'optimize', got {fractions!r}")
    configs = candidate_configs(k, m, query_limit=query_limit, gammas=gammas, cand_sizes=cand_sizes,
                                eta_layout=eta_layout, query_count=query_count)
    if not configs:
        raise ValueError(
            f"query_limit = {query_limit} is too small for m = {m}, k = {k} with this search space; "
            f"pem_default_config needs at least {min_query_limit(k, m)}")
    w = utility_weights(k, target)
    w1, wn = utility_weights(k, "f1"), utility_weights(k, "ncr")
    best, best_u, best_key = configs[0], -1.0, None
    for c in configs:
        P = config_probabilities(c, *model).prod(axis=0)
        u = float(w @ P)
        key = (c.g, tuple(-x for x in c.etas))
        if best_key is None or u > best_u + 1e-12 or (abs(u - best_u) <= 1e-12 and key < best_key):
            best, best_u, best_key = c, u, key
    if fractions == "optimize" and best.g > 1:
        best = _optimize_fractions(best, model, w)
    P = config_probabilities(best, *model).prod(axis=0)
    return best.with_predictions(float(w1 @ P), float(wn @ P))


def _optimize_fractions(config: PEMConfig, model, w) -> PEMConfig:
    """Tune n[i]/n of one configuration (softmax parametrisation, Nelder-Mead)."""
    from scipy.optimize import minimize

    g = config.g

    def make(z):
        z = np.concatenate([[0.0], z])
        fr = np.exp(z - z.max())
        return config.with_fractions(fr / fr.sum())

    def loss(z):
        return -float(w @ config_probabilities(make(z), *model).prod(axis=0))

    res = minimize(loss, np.zeros(g - 1), method="Nelder-Mead",
                   options=dict(xatol=1e-4, fatol=1e-10, maxiter=400 * g))
    cand = make(res.x)
    return cand if -res.fun > -loss(np.zeros(g - 1)) else config
