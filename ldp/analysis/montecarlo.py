"""Monte-Carlos of the paper's analysis: the model behind eq. (5) (section 4.2.3) and the appendix's joint estimator.

Eq. (5) approximates, with normal laws and a quantile threshold, the
probability that a heavy value is among the ``|C_i|`` largest supports of a
round.  :func:`model_monte_carlo` draws the supports of that same model
exactly (binomial) and counts how often each heavy value is kept.  Chapter 03
of the book and the tests compare the two with it; :func:`readings_monte_carlo`
does so for rounds of equal size under the readings of eq. (5)
(:data:`READINGS`) and :func:`readings_f1` turns that into F1.
:func:`joint_estimator_simulation` runs the appendix's joint estimator for
SPM on OLH reports of simulated users.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", section 4.2.3.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from ..oracles import OLH
from ..validation import check_int, check_population, check_pq, check_rng
from .appendix import spm_joint_estimate, spm_joint_estimate_pair, spm_joint_estimates, spm_pq
from .identification import round_identification_probability

__all__ = ["model_monte_carlo", "READINGS", "readings_monte_carlo", "readings_f1", "JointSimulation",
           "joint_estimator_simulation"]

#: the readings of eq. (5) chapter 03 compares: name -> (``slots``, ``competitors``) of
#: :func:`ldp.analysis.round_identification_probability`
READINGS: dict[str, tuple[str, str]] = {
    "text / paper (default)": ("text", "paper"),
    "formula / paper (as printed)": ("formula", "paper"),
    "text / lower (optimizer)": ("text", "lower"),
}


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


def _seed_sequence(rng) -> np.random.SeedSequence:
    """A copy of ``rng`` (a SeedSequence: spawning here never advances the caller's) or ``SeedSequence(rng)``."""
    if isinstance(rng, np.random.SeedSequence):
        return np.random.SeedSequence(rng.entropy, spawn_key=rng.spawn_key, pool_size=rng.pool_size,
                                      n_children_spawned=rng.n_children_spawned)
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.SeedSequence(rng)
    raise TypeError(f"rng must be None, an int or a numpy SeedSequence (children are spawned from it), "
                    f"got {type(rng).__name__}")


def readings_monte_carlo(freqs, n, p, q, settings, *, rng=None, readings=None) -> pd.DataFrame:
    """One round of eq. (5) under several readings against :func:`model_monte_carlo`, per round size.

    Each setting ``(eta, g, reps)`` is a round of ``|D_i| = k 2^eta`` values
    (``k = len(freqs)`` heavy ones, ``|C_i| = k`` kept) answered by ``n/g``
    users, simulated ``reps`` times.

    Parameters
    ----------
    freqs : array_like
        ``f_1..f_k`` of the heavy values.
    n : float
        Total number of users; a round has ``n/g``.
    p, q : float
        Support probabilities of the oracle.
    settings : sequence of (int, int, int)
        ``(eta, g, reps)`` per round size.
    rng : None, int or SeedSequence, keyword-only
        One child is spawned per setting, in order (a SeedSequence is copied first).
    readings : mapping, optional
        ``{name: (slots, competitors)}``; default :data:`READINGS`.

    Returns
    -------
    pandas.DataFrame
        One row per setting and rank: ``eta, g, domain_size, runs, rank,
        monte_carlo`` (share of runs that kept the value), ``se`` (its standard
        error, ``sqrt(P (1 - P) / runs)``) and ``analysis NAME`` per reading.
    """
    f = np.asarray(freqs, dtype=float)
    k = f.shape[0]
    readings = READINGS if readings is None else dict(readings)
    settings = [tuple(check_int(x, name, 1) for x, name in zip(s, ("eta", "g", "reps"))) for s in settings]
    frames = []
    for (eta, g, reps), s in zip(settings, _seed_sequence(rng).spawn(len(settings))):
        D, n_i = k * 2**eta, n / g
        P_mc = model_monte_carlo(f, n_i, D, k, p, q, reps=reps, rng=s)  # the model of section 4.2.3
        frames.append(pd.DataFrame({
            "eta": eta, "g": g, "domain_size": D, "runs": reps, "rank": np.arange(1, k + 1), "monte_carlo": P_mc,
            "se": np.sqrt(P_mc * (1 - P_mc) / reps),
            **{f"analysis {name}": round_identification_probability(f, n_i, D, k, p, q, slots=sl, competitors=cp)
               for name, (sl, cp) in readings.items()}}))
    return pd.concat(frames, ignore_index=True)


def readings_f1(frame: pd.DataFrame) -> pd.DataFrame:
    """F1 of ``g`` equal rounds, ``(1/k) sum_j P(j)^g``, from :func:`readings_monte_carlo`'s frame.

    Returns
    -------
    pandas.DataFrame
        One row per ``eta``: ``eta, g, domain_size, runs``, ``f1_mc`` with its
        standard error ``f1_se`` (delta method over the per-rank standard
        errors), then per reading ``F1 NAME`` and ``max error NAME`` (the
        largest per-rank ``|P - P_mc|``).
    """
    names = [c[len("analysis "):] for c in frame.columns if c.startswith("analysis ")]
    rows = []
    for eta, grp in frame.groupby("eta", sort=False):
        g, P_mc, se = int(grp.g.iloc[0]), grp.monte_carlo.to_numpy(), grp.se.to_numpy()
        k = len(P_mc)
        row = {"eta": eta, "g": g, "domain_size": int(grp.domain_size.iloc[0]), "runs": int(grp.runs.iloc[0]),
               "f1_mc": float(np.mean(P_mc ** g)),
               "f1_se": float(np.sqrt(np.sum((g * P_mc ** (g - 1) * se / k) ** 2)))}  # delta method
        for name in names:
            P = grp[f"analysis {name}"].to_numpy()
            row[f"F1 {name}"] = float(np.mean(P ** g))
            row[f"max error {name}"] = float(np.max(np.abs(P - P_mc)))
        rows.append(row)
    return pd.DataFrame(rows)


class JointSimulation:
    """What :func:`joint_estimator_simulation` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per non-empty subset of the answers ``a, b, c``: ``answers, r,
        true_count, mean_estimate, se`` (standard error of the mean) and ``z``
        (the claim ``s4-joint-unbiased`` decides on them).
    pair_gap : float
        Largest difference between the pair formula
        (:func:`ldp.analysis.spm_joint_estimate_pair`) and the general
        recursion (:func:`ldp.analysis.spm_joint_estimates`) for ``ab``.
    bias_appendix_pq, z_appendix_pq : float
        Mean error and z-score of the pair estimate when the appendix's
        ``p = 1/2``, ``q = 1/(e^eps + 1)`` correct this integer-``d'`` oracle.
    appendix_table : pandas.DataFrame
        The columns of ``table`` for ``a``, ``b`` and ``ab`` estimated with the appendix's ``p, q``
        (the other reading of the claim, :func:`ldp.analysis.spm_pq`).
    """

    def __init__(self, table: pd.DataFrame, pair_gap: float, bias_appendix_pq: float, z_appendix_pq: float,
                 appendix_table: pd.DataFrame | None = None):
        self.table, self.pair_gap = table, pair_gap
        self.bias_appendix_pq, self.z_appendix_pq = bias_appendix_pq, z_appendix_pq
        self.appendix_table = appendix_table


#: the population of :func:`joint_estimator_simulation`: (pattern in segments 1-3, share of users);
#: 0, 1, 2 are the tested patterns a, b, c; None a background pattern (never a, b or c)
JOINT_LAYOUT = [((0, 1, 2), 0.16), ((0, 1, None), 0.08), ((0, None, 2), 0.06), ((None, 1, 2), 0.04),
                ((0, None, None), 0.10)]


def joint_estimator_simulation(n_users: int, reps: int, *, epsilon: float = 1.0, rng=None,
                               batch: int = 100) -> JointSimulation:
    """The appendix's joint estimator for SPM on simulated OLH reports (three 8-bit segments).

    ``n_users`` users hold three segments drawn as :data:`JOINT_LAYOUT` says
    (the rest uniform on 3..255); each segment is privatized by its own OLH
    report (budget ``epsilon``, the oracle's integer ``d'``), and the joint
    counts of every subset of the patterns ``a, b, c`` are estimated with
    :func:`ldp.analysis.spm_joint_estimates` and the oracle's own ``p, q``.

    Parameters
    ----------
    n_users : int
        Users (>= 10).
    reps : int
        Runs (>= 2).
    epsilon : float, keyword-only
        Budget of each segment's report.
    rng : None, int or SeedSequence, keyword-only
        The population from its first child, each batch of runs from the
        following ones (three grandchildren, one per segment).
    batch : int, keyword-only
        Runs drawn at once.

    Returns
    -------
    JointSimulation

    References
    ----------
    [PEM] appendix, "Simpler Joint Estimation".
    """
    nj = check_int(n_users, "n_users", 10)
    reps = check_int(reps, "reps", 2)
    batch = check_int(batch, "batch", 1)
    ss = _seed_sequence(rng)
    rng_pop = np.random.default_rng(ss.spawn(1)[0])
    targets = (0, 1, 2)
    segs = rng_pop.integers(3, 256, size=(3, nj)).astype(np.uint64)   # background: never a, b or c
    start = 0
    for pattern, share in JOINT_LAYOUT:
        cnt = int(share * nj)
        for s_idx, val in enumerate(pattern):
            if val is not None:
                segs[s_idx, start:start + cnt] = val
        start += cnt
    subsets = [frozenset(s) for r in (1, 2, 3) for s in itertools.combinations(range(3), r)]
    truth = {S: int(np.all([segs[i] == targets[i] for i in S], axis=0).sum()) for S in subsets}
    olh = OLH(epsilon, m=8)
    p, q = olh.p, olh.q
    p_app, q_app = spm_pq(epsilon, reading="appendix")
    ab, a_, b_ = frozenset({0, 1}), frozenset({0}), frozenset({1})
    est: dict = {S: [] for S in subsets}
    pair_formula, pair_app = [], []
    single_app: dict[str, list] = {"a": [], "b": []}
    for b_idx, s in enumerate(ss.spawn(-(-reps // batch))):
        r = min(batch, reps - b_idx * batch)
        seg_rngs = [np.random.default_rng(x) for x in s.spawn(3)]
        sup = []
        for i in range(3):                                    # each segment: its own OLH report per user
            rep = olh.privatize(np.tile(segs[i], r), rng=seg_rngs[i])
            hit = olh.hash(rep.seed, np.full(len(rep), targets[i], dtype=np.uint64)) == rep.y
            sup.append(hit.reshape(r, nj))                    # does the report support the target?
        counts = {S: np.all([sup[i] for i in S], axis=0).sum(axis=1) for S in subsets}   # I_S per run
        joint = spm_joint_estimates(counts, nj, p, q)
        for S in subsets:
            est[S].append(joint[S])
        pair_formula.append(spm_joint_estimate_pair(counts[ab], joint[a_], joint[b_], nj, p, q))
        # the appendix's p = 1/2, q = 1/(e^eps + 1) applied to this integer-d' oracle (a mismatch)
        na = spm_joint_estimate(counts[a_], [], nj, p_app, q_app)
        nb = spm_joint_estimate(counts[b_], [], nj, p_app, q_app)
        pair_app.append(spm_joint_estimate_pair(counts[ab], na, nb, nj, p_app, q_app))
        single_app["a"].append(na)
        single_app["b"].append(nb)
    def row(S, parts):
        e = np.concatenate(parts)
        se = e.std(ddof=1) / math.sqrt(len(e))
        return {"answers": "".join("abc"[i] for i in sorted(S)), "r": len(S), "true_count": truth[S],
                "mean_estimate": e.mean(), "se": se, "z": (e.mean() - truth[S]) / se}

    rows = [row(S, est[S]) for S in subsets]
    appendix = pd.DataFrame([row(a_, single_app["a"]), row(b_, single_app["b"]), row(ab, pair_app)])
    pf, pa = np.concatenate(pair_formula), np.concatenate(pair_app)
    gap = float(np.max(np.abs(pf - np.concatenate(est[ab]))))
    z_app = (pa.mean() - truth[ab]) / (pa.std(ddof=1) / math.sqrt(len(pa)))
    return JointSimulation(pd.DataFrame(rows), gap, float(pa.mean() - truth[ab]), float(z_app), appendix)
