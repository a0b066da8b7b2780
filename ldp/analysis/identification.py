"""The identification probability of PEM (section 4.2.3, eq. (5)) and the utility score (section 4.2.1, eq. (4)).

* :func:`round_identification_probability` -- ``P_i(j)`` of one round, eq. (5);
* :func:`identification_probability` -- ``prod_i P_i(j)`` of a configuration;
* :func:`utility_weights`, :func:`utility_score` -- eq. (4) with the F1 or NCR
  weights.

:func:`config_probabilities` is the unchecked ``(g, k)`` matrix the optimizer
(:mod:`ldp.analysis.optimizer`) evaluates for many configurations.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 4.2.1-4.2.3.
"""
from __future__ import annotations

import math
from numbers import Real

import numpy as np
from scipy.stats import norm

from ..oracles.formulas import olh_pq
from ..validation import EXP_MAX_EPSILON, check_epsilon, check_int, check_population, check_pq
from .config import PEMConfig
from .frequencies import heavy_frequencies

__all__ = ["round_identification_probability", "identification_probability", "utility_weights",
           "utility_score", "config_probabilities", "slot_offset", "check_competitors", "support_pq", "eq5_argument"]

_EXP_WHY = "e**epsilon must be a finite double"


def slot_offset(slots) -> float:
    """The threshold-rank offset of eq. (5): 1 for ``"text"``, 0 for ``"formula"``, or the given real."""
    if isinstance(slots, str):
        if slots == "text":
            return 1.0
        if slots == "formula":
            return 0.0
        raise ValueError(f"slots must be 'text', 'formula' or a finite real offset, got {slots!r}")
    if isinstance(slots, bool) or not isinstance(slots, (Real, np.floating, np.integer)) \
            or not math.isfinite(float(slots)):
        raise ValueError(f"slots must be 'text', 'formula' or a finite real offset, got {slots!r}")
    return float(slots)


def check_competitors(competitors: str) -> str:
    """``"paper"`` (``N = |D_i| - k``) or ``"lower"`` (``N_j = |D_i| - j``)."""
    if competitors not in ("paper", "lower"):
        raise ValueError(f"competitors must be 'paper' or 'lower', got {competitors!r}")
    return competitors


def _competitors(D, k, j, competitors: str):
    """N: zero-frequency competitors (section 4.2.3: N[i] = |D_i| - k)."""
    if competitors == "paper":
        return D - k
    return D - j  # "lower": the k - j lower-ranked heavy values compete too


def eq5_argument(f, n_i, p, q, z):
    """The argument of Phi in eq. (5): ``(mu_j + z sigma_0 - mu_0) / sigma_j``, without validation.

    Parameters
    ----------
    f : float or array
        The heavy hitter's frequency ``f_j``.
    n_i : float or array
        Users of the round.
    p, q : float or array
        The oracle's support probabilities.
    z : float or array
        ``Phi^{-1}((k - j)/N[i])``: the threshold's quantile (the appendix's ``A``).

    Returns
    -------
    float or ndarray
        ``mu_j = n_i p_j``, ``sigma_j^2 = n_i p_j (1 - p_j)`` with ``p_j = p f_j + q (1 - f_j)``;
        ``mu_0 = n_i q``, ``sigma_0^2 = n_i q (1 - q)``; all arguments broadcast.

    References
    ----------
    [PEM] section 4.2.3, eq. (5); the appendix's eq. (6) is it with ``p = 1/2``, ``q = 1/(e^eps + 1)``.
    """
    pj = p * f + q * (1.0 - f)                    # p_j = p f_j + q (1 - f_j)
    mu_j = n_i * pj                               # mu_j[i]
    sd_j = np.sqrt(n_i * pj * (1.0 - pj))         # sigma_j[i]
    mu_0 = n_i * q                                # mu_0[i]
    sd_0 = np.sqrt(n_i * q * (1.0 - q))           # sigma_0[i]
    return (mu_j + z * sd_0 - mu_0) / sd_j


def _round_prob(f, n_i, N, kept, p, q, j, offset):
    """Vectorised eq. (5) without validation; all arguments broadcast (N may be <= 0)."""
    slots = kept - j + offset
    N = np.asarray(N, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(N > 0, slots / np.where(N > 0, N, 1.0), np.inf)
        z_thr = norm.ppf(np.clip(ratio, 0.0, 1.0))  # Phi^{-1}((k - j)/N[i])
        arg = eq5_argument(f, n_i, p, q, z_thr)
    out = norm.cdf(arg)                           # eq. (5)
    return np.where(slots <= 0, 0.0, np.where(ratio >= 1, 1.0, out))


def round_identification_probability(freqs, n_i, domain_size, kept, p, q, *, k=None, ranks=None,
                                     slots="text", competitors="paper"):
    """``P_i(j)``: probability that the j-th heavy hitter's prefix is kept in one round.

    Eq. (5)::

        P = Phi((mu_j + Phi^{-1}((kept - j + offset)/N) sigma_0 - mu_0) / sigma_j)

    with ``p_j = p f_j + q (1 - f_j)``, ``mu_j = n_i p_j``,
    ``sigma_j^2 = n_i p_j (1 - p_j)``, ``mu_0 = n_i q``,
    ``sigma_0^2 = n_i q (1 - q)`` and ``N = |D_i| - k`` zero-frequency values.

    Parameters
    ----------
    freqs : array_like
        ``f_j`` of the heavy hitters (any shape; each in [0, 1]).
    n_i : float or array
        Users in the round (``n[i]``, real, >= 1).
    domain_size : int
        ``|D_i|``, values tested in the round.
    kept : int
        ``|C_i|``, values kept (the paper's ``k`` in ``Phi^{-1}((k-j)/N)``).
    p, q : float
        Support probabilities of the oracle (see :func:`ldp.oracles.olh_pq`).
    k : int, optional
        Number of heavy values assumed in ``D_i`` (``N = |D_i| - k``); default
        ``kept`` (section 4.2.3 writes ``N[i] = |D_i| - k`` with ``|C_i| = k``).
    ranks : array_like of int, optional
        ``j`` (1-based), broadcast against ``freqs``; default ``1..len(freqs)``
        along the last axis.
    slots : {"text", "formula"} or float, default "text"
        How many places below ``|C_i|`` the threshold quantile sits:
        ``Phi^{-1}((kept - j + offset)/N)`` with ``offset = 1`` for ``"text"``
        (section 4.2.3's "there are k - j + 1 slots", i.e. ``T_{k-j+1}``; it is
        also eq. (5) read with a 0-based ``j``, and makes the top value
        use the ``T_k`` the text defines), ``offset = 0`` for ``"formula"``
        (eq. (5) verbatim with 1-based ``j``, ``T_{k-j}``), or the
        given real offset (``0.5`` is a mid-rank correction).  See Notes.
    competitors : {"paper", "lower"}, default "paper"
        ``"paper"``: ``N = |D_i| - k`` zero-frequency competitors (section
        4.2.3).  ``"lower"``: ``N_j = |D_i| - j``, i.e. the ``k - j``
        lower-ranked heavy values also compete (as if of zero frequency).  The
        two agree when ``|D_i| >> k``; ``"lower"`` is markedly closer to a
        Monte-Carlo of the same model (:func:`ldp.analysis.model_monte_carlo`)
        when ``|D_i|`` is a small multiple of ``k`` (e.g. ``eta = 1``,
        ``|D_i| = 2k``), where ``"paper"`` overrates the middle ranks.

    Returns
    -------
    ndarray
        Probabilities, the broadcast shape of ``freqs`` and ``ranks``.

    Notes
    -----
    Edge cases (documented interpretation):

    * ``kept - j + offset <= 0``: no slot is left for ``v_j`` once the
      ``j - 1`` higher values are ranked above it (the sorted-heavy-hitters
      assumption), so ``P = 0``.  With ``slots="formula"`` this includes
      ``j = kept``, where eq. (5) reads ``Phi^{-1}(0) = -inf`` and gives
      ``Phi(-inf) = 0`` (the last heavy hitter is never found; the predicted F1
      is capped at ``1 - 1/k``).  This is why ``"text"`` is the default.
    * ``(kept - j + offset)/N >= 1`` (including ``N <= 0``): there are at
      least as many slots as zero-frequency competitors, ``P = 1``.

    References
    ----------
    [PEM] section 4.2.3, eq. (5).
    """
    f = np.asarray(freqs, dtype=float)
    if not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f > 1):
        raise ValueError("freqs must be frequencies in [0, 1]")
    n_i = check_population(n_i, "n_i")
    D = check_int(domain_size, "domain_size", 1)
    kept = check_int(kept, "kept", 1)
    k = kept if k is None else check_int(k, "k", 1)
    p, q = check_pq(p, q)
    offset = slot_offset(slots)
    if ranks is None:
        j = np.arange(1, f.shape[-1] + 1, dtype=float) if f.ndim else np.array(1.0)
    else:
        j = np.asarray(ranks, dtype=float)
        if np.any(j < 1) or np.any(j != np.floor(j)):
            raise ValueError("ranks must be integers >= 1")
    N = _competitors(float(D), float(k), j, check_competitors(competitors))
    return _round_prob(f, n_i, N, kept, p, q, j, offset)


def config_probabilities(config: PEMConfig, n: float, f: np.ndarray, p: float, q: float, offset: float,
                         competitors: str = "paper") -> np.ndarray:
    """The ``(g, k)`` matrix of ``P_i(j)`` (eq. (5)) for checked arguments (no validation).

    ``n[i] = n * group_fractions[i]``, ``kept = |C_i|``, ``|D_i|`` from the
    configuration; ``f`` the ``k`` heavy frequencies in rank order, ``offset``
    from :func:`slot_offset`, ``competitors`` from :func:`check_competitors`.
    """
    k = config.k
    n_i = n * np.asarray(config.group_fractions)[:, None]            # n[i]
    kept = np.asarray(config.cand_sizes, dtype=float)[:, None]       # |C_i|
    D = np.asarray([float(d) for d in config.domain_sizes])[:, None]  # |D_i|
    j = np.arange(1, k + 1, dtype=float)[None, :]
    N = _competitors(D, float(k), j, competitors)                    # N[i] = |D_i| - k
    return _round_prob(f[None, :], n_i, N, kept, p, q, j, offset)


def support_pq(epsilon: float, *, d_prime=None, p=None, q=None) -> tuple[float, float]:
    """The ``(p, q)`` of the analysis: OLH's (:func:`ldp.oracles.olh_pq`) unless both are given."""
    if p is None and q is None:
        return olh_pq(epsilon, d_prime=d_prime)
    if p is None or q is None:
        raise ValueError("give both p and q, or neither")
    return check_pq(p, q)


def identification_probability(config: PEMConfig, epsilon, freqs, *, n, d_prime=None, slots="text",
                               competitors="paper", per_round: bool = False, p=None, q=None):
    """Overall identification probability of each top-k value, ``prod_i P_i(j)``.

    Parameters
    ----------
    config : PEMConfig
        The PEM configuration (rounds, ``n[i]/n``, ``|C_i|``, ``|D_i|``).
    epsilon : float
        Privacy budget of each report (> 0).
    freqs : array_like
        A frequency distribution (non-negative, sums to 1).  It is sorted in
        decreasing order; the first ``k`` entries are ``f_1..f_k`` (zeros pad
        a shorter vector).
    n : float, keyword-only
        Total number of users (``n[i] = n * group_fractions[i]``, real).
    d_prime : None, number or "real"
        OLH parameters, see :func:`ldp.oracles.olh_pq`.
    slots : {"text", "formula"} or float, default "text"
        Threshold rank, see :func:`round_identification_probability`
        (``"formula"``: eq. (5) verbatim).
    competitors : {"paper", "lower"}, default "paper"
        ``N`` per round, see :func:`round_identification_probability`.
    per_round : bool, default False
        Return the ``(g, k)`` matrix of ``P_i(j)`` instead of the product.
    p, q : float, optional
        Override the oracle's support probabilities (e.g. GRR's, see
        :func:`ldp.oracles.grr_pq`).

    Returns
    -------
    ndarray
        Shape ``(k,)`` (``prod_i P_i(j)``, ``j = 1..k``) or ``(g, k)``.

    Notes
    -----
    In round ``i`` the formula's ``k`` (the number kept) is ``|C_i|`` and the
    zero-frequency competitors number ``N[i] = |D_i| - k`` (the k heavy
    prefixes are assumed to be in ``D_i``).  Heavy hitters with
    ``j > |C_i|`` have probability 0 in that round.  Rounds are assumed
    independent (section 4.2.1).

    References
    ----------
    [PEM] section 4.2.3, eq. (5); eq. (4) for the product.
    """
    if not isinstance(config, PEMConfig):
        raise TypeError(f"config must be a PEMConfig, got {type(config).__name__}")
    e = check_epsilon(epsilon, hi=EXP_MAX_EPSILON, why=_EXP_WHY)
    n = float(check_population(n))
    f = heavy_frequencies(freqs, config.k)
    p, q = support_pq(e, d_prime=d_prime, p=p, q=q)
    P = config_probabilities(config, n, f, p, q, slot_offset(slots), check_competitors(competitors))
    return P if per_round else P.prod(axis=0)


def utility_weights(k: int, metric: str = "f1") -> np.ndarray:
    """Weights ``w_j`` of eq. (4).

    ``"f1"``: ``w_j = 1/k``; ``"ncr"``: ``w_j = (k+1-j) / sum_l (k+1-l)``.

    References
    ----------
    [PEM] section 4.2.1 (Unified Utility Score).
    """
    k = check_int(k, "k", 1)
    if metric == "f1":
        return np.full(k, 1.0 / k)
    if metric == "ncr":
        w = np.arange(k, 0, -1, dtype=float)
        return w / w.sum()  # sum_l (k + 1 - l) = k(k+1)/2
    raise ValueError(f"metric must be 'f1' or 'ncr', got {metric!r}")


def utility_score(config: PEMConfig, epsilon, freqs, *, n, metric="f1", d_prime=None,
                  slots="text", competitors="paper", p=None, q=None) -> float:
    """Predicted utility, eq. (4): ``sum_j w_j prod_i P_i(j)``.

    Parameters
    ----------
    config, epsilon, freqs, n, d_prime, slots, competitors, p, q
        As in :func:`identification_probability` (``n`` keyword-only).
    metric : {"f1", "ncr"} or array_like
        F-measure (``w_j = 1/k``), NCR (``w_j = (k+1-j)/(k(k+1)/2)``) or
        explicit weights of length ``k``.

    Returns
    -------
    float

    References
    ----------
    [PEM] section 4.2.1, eq. (4).
    """
    probs = identification_probability(config, epsilon, freqs, n=n, d_prime=d_prime, slots=slots,
                                       competitors=competitors, p=p, q=q)
    if isinstance(metric, str):
        w = utility_weights(config.k, metric)
    else:
        w = np.asarray(metric, dtype=float)
        if w.shape != (config.k,) or not np.all(np.isfinite(w)):
            raise ValueError(f"metric weights must be a finite vector of length k = {config.k}")
    return float(w @ probs)  # eq. (4)
