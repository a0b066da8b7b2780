"""A Monte-Carlo of the model behind eq. (5) (section 4.2.3), to check the approximation.

Eq. (5) approximates, with normal laws and a quantile threshold, the
probability that a heavy value is among the ``|C_i|`` largest supports of a
round.  :func:`model_monte_carlo` draws the supports of that same model
exactly (binomial) and counts how often each heavy value is kept.  Chapter 03
of the book and the tests compare the two with it.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", section 4.2.3.
"""
from __future__ import annotations

import numpy as np

from ..validation import check_int, check_population, check_pq, check_rng

__all__ = ["model_monte_carlo"]


def model_monte_carlo(freqs, n_i, domain_size, kept, p, q, *, reps: int, rng=None, batch: int = 50,
                      per_run: bool = False) -> np.ndarray:
    """How often each heavy value is among the ``kept`` largest supports of one round (Monte-Carlo).

    The model of section 4.2.3 without its "sorted heavy values" step: in each
    run the ``k = len(freqs)`` heavy values have supports
    ``Bin(n_i, p f_j + q (1 - f_j))``, the ``domain_size - k`` other values
    (zero frequency) supports ``Bin(n_i, q)``, ties are broken uniformly at
    random, and the ``kept`` largest are kept.  Compare with
    :func:`ldp.analysis.round_identification_probability` at the same
    arguments.

    Parameters
    ----------
    freqs : array_like
        ``f_1..f_k`` of the heavy values (1-D, each in [0, 1]).
    n_i : float
        Users in the round (>= 1); the binomials use ``round(n_i)`` trials.
    domain_size : int
        ``|D_i|``, values tested in the round (>= k).
    kept : int
        ``|C_i|``, values kept, ``1 <= kept <= domain_size``.
    p, q : float
        Support probabilities of the oracle (:func:`ldp.oracles.olh_pq`), ``0 < q < p < 1``.
    reps : int, keyword-only
        Number of independent runs (>= 1).
    rng : None, int, SeedSequence, BitGenerator or Generator, keyword-only
        Randomness (:func:`ldp.validation.check_rng`).  Per batch of runs it
        draws, in this order, the heavy binomials ``(r, k)``, their
        tie-breaking uniforms, the zero-frequency binomials
        ``(r, domain_size - k)`` and their uniforms; the same seed and
        ``batch`` give the same result.
    batch : int, keyword-only, default 50
        Runs drawn at once (bounds the memory to ``batch * domain_size`` draws).
    per_run : bool, keyword-only, default False
        Return whether each heavy value was kept in each run instead of the
        shares.

    Returns
    -------
    numpy.ndarray
        Shape ``(k,)``: the share of runs in which each heavy value was kept;
        with ``per_run``, a ``bool`` array ``(reps, k)``.
    """
    f = np.asarray(freqs, dtype=float)
    if f.ndim != 1 or f.size == 0 or not np.all(np.isfinite(f)) or np.any(f < 0) or np.any(f > 1):
        raise ValueError("freqs must be a non-empty 1-D vector of frequencies in [0, 1]")
    k = f.shape[0]
    users = int(round(float(check_population(n_i, "n_i"))))
    D = check_int(domain_size, "domain_size", k)
    kept = check_int(kept, "kept", 1, D)
    p, q = check_pq(p, q)
    reps = check_int(reps, "reps", 1)
    batch = check_int(batch, "batch", 1)
    rng = check_rng(rng)
    pj = p * f + q * (1 - f)
    hits = np.zeros(k)
    runs = []
    for start in range(0, reps, batch):
        r = min(batch, reps - start)
        heavy = rng.binomial(users, pj, size=(r, k)) + rng.random((r, k))
        zero = rng.binomial(users, q, size=(r, D - k)) + rng.random((r, D - k))
        if D - k >= kept:  # only the `kept` largest zero-frequency supports can matter
            zero = -np.partition(-zero, kept - 1, axis=1)[:, :kept]
        both = np.concatenate([heavy, zero], axis=1)
        kth = -np.partition(-both, kept - 1, axis=1)[:, kept - 1]
        hit = heavy >= kth[:, None]
        hits += hit.sum(axis=0)
        if per_run:
            runs.append(hit)
    return np.concatenate(runs) if per_run else hits / reps
