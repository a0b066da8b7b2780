"""Chapter 04's live checks of the count-level engine against the protocol engine (not a paper section).

Everything goes through the public API: a protocol's :meth:`source` (the
support source of a run, built exactly as :meth:`run` builds it) and the
:class:`ldp.engines.SupportSource` methods ``supports``, ``top`` and ``pair``.

* :func:`setting_findings` -- the agreement runs' setting, as the text quotes it;
* :func:`assignment_check` -- both engines put the same users in each group
  (:func:`assignment_findings`: what the text quotes of it);
* :class:`Probes` and :func:`engine_records` -- per run and engine, the
  supports of a few chosen candidates (laws 1-3 of :mod:`ldp.engines`) and F1;
* :func:`support_table`, :func:`correlation_table`, :func:`f1_table` -- the
  statistical tests (each at false-alarm rate alpha) against the theory
  (:func:`group_support_moments`, the chapter's eq. (engine-mix)) and between engines;
* :func:`speed_table` -- one run per engine, timed (:func:`speed_values`: what the text quotes of it).

The figure of these records is :mod:`ldp.book.chapters.c04_count_engine.engine_agreement`.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .... import metrics
from ....core import Dataset, Question
from ....protocols import MCM, PEM, SPM, RangeCandidates, segment

__all__ = ["setting_findings", "assignment_check", "assignment_findings", "group_support_moments", "Probes",
           "engine_records", "support_table", "correlation_table", "f1_table", "agreement_values", "speed_table",
           "speed_values", "engine_frame"]


def setting_findings(data: Dataset, *, k: int, n_runs: int, query_limit: int) -> dict:
    """The agreement runs' setting the text quotes: ``engine_runs``, ``engine_n``, ``engine_m``, ``engine_k``,
    ``engine_query_limit`` (``data``: the runs' data set)."""
    return dict(engine_runs=int(n_runs), engine_n=int(data.n), engine_m=int(data.m), engine_k=int(k),
                engine_query_limit=int(query_limit))


def assignment_check(protocol, data, *, seed: int) -> pd.DataFrame:
    """Users per group in both engines for the same ``seed``, and distinct values held per group.

    Raises
    ------
    AssertionError
        If the protocol engine's (group, value) tally differs from the count engine's.
    """
    src_counts = protocol.source(data, rng=seed, engine="counts")
    src_protocol = protocol.source(data, rng=seed, engine="protocol")
    tally = np.zeros((src_counts.plan.n_groups, data.n_distinct), dtype=np.int64)
    np.add.at(tally, (src_protocol.reports.labels, data.user_index), 1)  # the protocol engine's users, per group
    assert src_counts.sizes == src_protocol.sizes and np.array_equal(tally, src_counts.gcounts)
    return pd.DataFrame({"users (protocol engine)": src_protocol.sizes, "users (count engine)": src_counts.sizes,
                         "distinct values held": (src_counts.gcounts > 0).sum(axis=1)},
                        index=pd.Index(range(1, src_counts.plan.n_groups + 1), name="group"))


def assignment_findings(assignment: pd.DataFrame, data: Dataset) -> dict:
    """What the text quotes of :func:`assignment_check`'s table: ``engine_assign_groups`` (its groups) and
    ``engine_assign_distinct`` (the distinct values of ``data`` the tallies cover)."""
    return dict(engine_assign_groups=len(assignment), engine_assign_distinct=int(data.n_distinct))


def group_support_moments(w, N: int) -> tuple[float, float]:
    """Mean and variance of a support over a uniformly random group of ``N`` users (eq. (engine-mix)).

    ``w[u]`` is user ``u``'s probability of supporting the candidate (``p`` or
    ``q`` of law 1, ``p_u r_u`` of law 2), over all ``n = len(w)`` users.
    """
    w = np.asarray(w, dtype=float)
    n = w.shape[0]
    s2 = w.var(ddof=1)
    return N * w.mean(), N / n * np.sum(w * (1 - w)) + N * (1 - N / n) * s2


@dataclass
class Probes:
    """The candidates whose supports each run records (PEM round 1, SPM pair group (1, 2), MCM block 1).

    Build with :meth:`choose`.  PEM: the round-1 prefixes of the three most
    frequent values and two prefixes nobody holds; SPM: ``a_1, a_2`` and
    ``b_1, b_2``, the first two segments of the two most frequent values;
    MCM: the top value's (channel, block 1) answer and another one.
    """

    data: Dataset
    true_top: np.ndarray
    pem_heavy: np.ndarray
    pem_pick: np.ndarray
    prefix_bits: int
    q_a: Question
    q_b: Question
    A: np.ndarray
    B: np.ndarray
    pair_index: tuple[int, int, int]
    segments: tuple[int, int, int, int]

    @classmethod
    def choose(cls, protocols: Mapping, data, true_top) -> Probes:
        m = data.m
        L1 = protocols["PEM"].config(data.n).prefix_lengths[0]
        pem_heavy = np.unique(true_top[:3] >> np.uint64(m - L1))[::-1]
        held = np.unique(data.values >> np.uint64(m - L1))
        pem_zero = np.setdiff1d(np.arange(2**L1, dtype=np.uint64), held)[:2]
        (q_a, q_b, *_), _ = protocols["SPM"].questions()
        a1, a2 = segment(true_top[:2], m, q_a.start, q_a.stop)
        b1, b2 = segment(true_top[:2], m, q_b.start, q_b.stop)
        A, B = np.unique([a1, a2]), np.unique([b1, b2])
        assert a1 != a2 and b1 != b2  # distinct patterns, so (a1, b1) and (a1, b2) are two pairs sharing a1
        idx = (int(np.searchsorted(A, a1)), int(np.searchsorted(B, b1)), int(np.searchsorted(B, b2)))
        return cls(data, true_top, pem_heavy, np.r_[pem_heavy, pem_zero].astype(np.int64), L1, q_a, q_b, A, B,
                   idx, (a1, a2, b1, b2))

    def supports(self, name: str, P, src) -> np.ndarray:
        """The probed supports of one run's support source ``src`` of protocol ``P`` (``name``: PEM, SPM, MCM)."""
        plan = src.plan
        if name == "PEM":
            q = plan.questions[0][0]
            return src.supports((0,), q, RangeCandidates(2**q.stop, q.stop))[self.pem_pick]
        if name == "SPM":
            for qq in (self.q_a, self.q_b):  # select each segment's k patterns (what the pair step needs first)
                src.top(plan.groups_asking(qq), qq, RangeCandidates(2**qq.seg_bits, qq.seg_bits), P.k, remember=True)
            Ja, Jb, I = src.pair(0, self.q_a, self.q_b, self.A, self.B)  # pair group 0 reports segments 1 and 2
            ia1, ib1, ib2 = self.pair_index
            return np.array([Ja[ia1], Jb[ib1], I[ia1, ib1], I[ia1, ib2]])
        q = plan.questions[0][0]
        a = int(q.answer(self.true_top[:1], P.m)[0])  # (channel, block 1) of the top value
        return src.supports((0,), q, RangeCandidates(q.domain_size, q.width))[[a, (a + 7) % q.domain_size]]

    def theory(self, protocols: Mapping) -> list[tuple]:
        """``(protocol, support, mean, variance, column)`` of every probe: eq. (engine-mix) (MCM: NaN)."""
        data, m, rows = self.data, self.data.m, []
        src = protocols["PEM"].source(data, rng=0, engine="counts")
        oracle, N1 = src.plan.questions[0][0].oracle(), src.sizes[0]
        prefix1 = data.values >> np.uint64(m - self.prefix_bits)
        nh = len(self.pem_heavy)
        labels = [f"prefix of top-{i + 1}" for i in range(nh)] + ["prefix held by nobody"] * (len(self.pem_pick) - nh)
        for j, c in enumerate(self.pem_pick):
            w = np.where(prefix1 == np.uint64(c), oracle.p, oracle.q)
            rows.append(("PEM", f"I_c, {labels[j]}", *group_support_moments(w, N1), j))
        src = protocols["SPM"].source(data, rng=0, engine="counts")
        o2, N2 = self.q_a.oracle(), src.sizes[0]
        a1, _, b1, b2 = self.segments
        sa = segment(data.values, m, self.q_a.start, self.q_a.stop)
        sb = segment(data.values, m, self.q_b.start, self.q_b.stop)
        pa1 = np.where(sa == a1, o2.p, o2.q)
        rb1, rb2 = np.where(sb == b1, o2.p, o2.q), np.where(sb == b2, o2.p, o2.q)
        for j, (lab, w) in enumerate((("J_a1", pa1), ("J^b1", rb1), ("I_a1b1", pa1 * rb1), ("I_a1b2", pa1 * rb2))):
            rows.append(("SPM", lab, *group_support_moments(w, N2), j))
        for j, lab in enumerate(("I, top value's (channel, block)", "I, another (channel, block)")):
            rows.append(("MCM", lab, np.nan, np.nan, j))  # the channel hash is random per run
        return rows


def _record(name: str, P, engine: str, s: np.random.SeedSequence, probes: Probes):
    """One run: the probed supports and the F1 score (protocol engine: ``aggregate`` on the same reports)."""
    s_src, s_run = s.spawn(2)
    src = P.source(probes.data, rng=s_src, engine=engine)
    sup = probes.supports(name, P, src)
    if engine == "protocol":
        result = P.aggregate(src.reports, rng=s_run)
    else:
        result = P.run(probes.data, rng=s_run, engine="counts")
    return sup, metrics.f1(probes.true_top, result.heavy_hitters)


def engine_records(protocols: Mapping, probes: Probes, *, n_runs: int, seed_seq: np.random.SeedSequence):
    """``n_runs`` runs of each protocol with each engine (streams from ``seed_seq``, protocol engine first).

    Returns
    -------
    records : dict
        ``(name, engine) -> (supports, f1)``: the probed supports (runs × probes) and F1 per run.
    seconds : dict
        ``(name, engine) -> `` wall time of the ``n_runs`` runs.
    """
    keys = [(nm, e) for nm in protocols for e in ("protocol", "counts")]
    records, seconds = {}, {}
    for (name, engine), stream in zip(keys, seed_seq.spawn(len(keys))):
        t0 = time.perf_counter()
        out = [_record(name, protocols[name], engine, s, probes) for s in stream.spawn(n_runs)]
        seconds[name, engine] = time.perf_counter() - t0
        records[name, engine] = (np.array([o[0] for o in out], dtype=float), np.array([o[1] for o in out]))
    return records, seconds


def _z_pvalue(x, mu, var) -> float:
    """Two-sided p-value of the sample mean of x against mean mu and per-run variance var."""
    return 2 * stats.norm.sf(abs(np.mean(x) - mu) / np.sqrt(var / len(x)))


def support_table(records: Mapping, theory: Sequence[tuple], tests: list) -> pd.DataFrame:
    """Each probed support: theory, both engines' mean and sd, KS test between engines, z tests against theory.

    Appends ``(check, p-value)`` of every test to ``tests``.
    """
    table = []
    for name, lab, mu, var, j in theory:
        xp, xc = records[name, "protocol"][0][:, j], records[name, "counts"][0][:, j]
        row = {"protocol": name, "support": lab, "theory mean": mu, "theory sd": np.sqrt(var),
               "protocol mean": xp.mean(), "protocol sd": xp.std(ddof=1),
               "counts mean": xc.mean(), "counts sd": xc.std(ddof=1),
               "KS p (engines)": stats.ks_2samp(xp, xc).pvalue}
        tests.append((f"{name} {lab}: KS protocol vs counts", row["KS p (engines)"]))
        if np.isfinite(mu):
            row["p (protocol mean = theory)"] = _z_pvalue(xp, mu, var)
            row["p (counts mean = theory)"] = _z_pvalue(xc, mu, var)
            tests.append((f"{name} {lab}: protocol mean vs theory", row["p (protocol mean = theory)"]))
            tests.append((f"{name} {lab}: counts mean vs theory", row["p (counts mean = theory)"]))
        table.append(row)
    return pd.DataFrame(table)


def _corr_p(x, y):
    """Correlation and two-sided p-value of zero correlation (Fisher z)."""
    r = np.corrcoef(x, y)[0, 1]
    return r, 2 * stats.norm.sf(abs(np.arctanh(r)) * np.sqrt(len(x) - 3))


def _two_corr_p(x1, y1, x2, y2):
    """Two-sided p-value for equal correlations in two independent samples (Fisher z)."""
    z1, z2 = np.arctanh(np.corrcoef(x1, y1)[0, 1]), np.arctanh(np.corrcoef(x2, y2)[0, 1])
    return 2 * stats.norm.sf(abs(z1 - z2) / np.sqrt(1 / (len(x1) - 3) + 1 / (len(x2) - 3)))


def correlation_table(records: Mapping, probes: Probes, tests: list) -> pd.DataFrame:
    """Correlations of probed supports in both engines (eqs. (engine-cov), (engine-cov2)); appends to ``tests``."""
    rows, nh = [], len(probes.pem_heavy)
    for what, (i, j), zero_expected in (("PEM: top-1 prefix vs an unheld prefix", (0, nh), True),
                                         ("PEM: two unheld prefixes", (nh, nh + 1), True),
                                         ("SPM: J_a1 vs I_a1b1 (eq. cov2 > 0)", (0, 2), False),
                                         ("SPM: I_a1b1 vs I_a1b2 (share a1)", (2, 3), False)):
        name = what.split(":")[0]
        xp, xc = records[name, "protocol"][0], records[name, "counts"][0]
        rp, pp = _corr_p(xp[:, i], xp[:, j])
        rc, pc = _corr_p(xc[:, i], xc[:, j])
        p_eq = _two_corr_p(xp[:, i], xp[:, j], xc[:, i], xc[:, j])
        row = {"correlation": what, "protocol": rp, "counts": rc, "p (equal in both engines)": p_eq}
        tests.append((f"{what}: equal correlations", p_eq))
        if zero_expected:
            row["p (protocol = 0)"], row["p (counts = 0)"] = pp, pc
            tests += [(f"{what}: protocol uncorrelated", pp), (f"{what}: counts uncorrelated", pc)]
        rows.append(row)
    return pd.DataFrame(rows)


def _f1_tests(f_prot, f_cnt):
    """Mann-Whitney and chi-square (F1 levels seen < 10 times pooled) p-values for equal F1 distributions."""
    mw = stats.mannwhitneyu(f_prot, f_cnt).pvalue
    levels = np.union1d(f_prot, f_cnt)
    t = np.array([[np.sum(np.isclose(f, v)) for v in levels] for f in (f_prot, f_cnt)])
    keep = t.sum(0) >= 10
    t = np.c_[t[:, keep], t[:, ~keep].sum(1)]
    t = t[:, t.sum(0) > 0]
    chi = stats.chi2_contingency(t).pvalue if t.shape[1] > 1 else 1.0
    return mw, chi


def f1_table(records: Mapping, seconds: Mapping, n_runs: int, tests: list) -> pd.DataFrame:
    """F1 of both engines per protocol: means, sds, Mann-Whitney and chi-square p, seconds per run."""
    rows = []
    for name in dict.fromkeys(k[0] for k in records):
        fp, fc = records[name, "protocol"][1], records[name, "counts"][1]
        mw, chi = _f1_tests(fp, fc)
        tests += [(f"{name} F1: Mann-Whitney", mw), (f"{name} F1: chi-square", chi)]
        rows.append({"protocol": name, "mean F1 (protocol)": fp.mean(), "mean F1 (counts)": fc.mean(),
                     "sd (protocol)": fp.std(ddof=1), "sd (counts)": fc.std(ddof=1),
                     "Mann-Whitney p": mw, "chi-square p": chi,
                     "s per run (protocol)": seconds[name, "protocol"] / n_runs,
                     "s per run (counts)": seconds[name, "counts"] / n_runs})
    return pd.DataFrame(rows)


def agreement_values(f1: pd.DataFrame, tests: Sequence[tuple[str, float]], alpha: float) -> dict:
    """The numbers the chapter quotes about the checks (``engine_f1_*``, the tests' false alarms)."""
    out = {}
    for _, row in f1.iterrows():
        key = row["protocol"].lower()
        out.update({f"engine_f1_mw_{key}": float(row["Mann-Whitney p"]),
                    f"engine_f1_chi_{key}": float(row["chi-square p"]),
                    f"engine_f1_mean_protocol_{key}": float(row["mean F1 (protocol)"]),
                    f"engine_f1_mean_counts_{key}": float(row["mean F1 (counts)"])})
    p = np.array([pv for _, pv in tests])
    return {**out, "engine_alpha": float(alpha), "engine_n_tests": len(tests),
            "engine_familywise": float(min(1.0, len(tests) * alpha)), "engine_min_p": float(p.min()),
            "engine_n_rejected": int((p < alpha).sum()), "engine_min_p_test": tests[int(p.argmin())][0]}


def speed_table(data, tiny, *, epsilon: float, k: int, query_limit: int, reps: int,
                seed_seq: np.random.SeedSequence) -> pd.DataFrame:
    """One protocol-engine run and the median of ``reps`` count-engine runs of PEM, SPM and MCM, after warm-ups.

    The count engine warms up on ``data`` (numba compilation, PEM's optimiser),
    the protocol engine on the small data set ``tiny``; each protocol is a
    fresh object (PEM caches its configuration per n).
    """
    top = data.top(k)
    _ = data.user_index  # the count engine's one-off sort of the data set, cached on it
    classes = {"PEM": PEM, "SPM": SPM, "MCM": MCM}
    rows = []
    for (name, cls), s in zip(classes.items(), seed_seq.spawn(len(classes))):
        P = cls(epsilon, k, data.m, query_limit=query_limit)
        s_warm, s_counts, s_protocol = s.spawn(3)
        res_c = P.run(data, rng=s_warm, engine="counts")  # warm-up: numba compilation, PEM's optimiser
        cls(epsilon, k, data.m, query_limit=query_limit).run(tiny, rng=s_warm, engine="protocol")
        times = []
        for sc in s_counts.spawn(reps):
            t0 = time.perf_counter()
            res_c = P.run(data, rng=sc, engine="counts")
            times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        res_p = P.run(data, rng=s_protocol, engine="protocol")
        t_prot, t_cnt = time.perf_counter() - t0, float(np.median(times))
        rows.append({"protocol": name, "groups": len(res_p.group_sizes), "oracle queries": res_p.queries,
                     "count engine (ms)": 1000 * t_cnt, "protocol engine (s)": t_prot, "speed-up": t_prot / t_cnt,
                     "F1 (counts)": metrics.f1(top, res_c.heavy_hitters),
                     "F1 (protocol)": metrics.f1(top, res_p.heavy_hitters)})
    return pd.DataFrame(rows)


def speed_values(table: pd.DataFrame, data: Dataset, *, epsilon: float, k: int, query_limit: int, reps: int) -> dict:
    """The numbers the chapter quotes from :func:`speed_table` and its setting.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`speed_table`'s result.
    data : ldp.datasets.Dataset
        The data set it timed.
    epsilon, k, query_limit, reps : keyword-only
        The arguments it was given.

    Returns
    -------
    dict
        Per protocol: ``engine_speed_counts_ms_{name}``, ``engine_speed_protocol_s_{name}`` and
        ``engine_speed_ratio_{name}``; the setting ``engine_speed_n``, ``engine_speed_m``, ``engine_speed_k``,
        ``engine_speed_eps``, ``engine_speed_limit`` and ``engine_speed_reps``.
    """
    out: dict = dict(engine_speed_n=int(data.n), engine_speed_m=int(data.m), engine_speed_k=int(k),
                     engine_speed_eps=float(epsilon), engine_speed_limit=int(query_limit), engine_speed_reps=int(reps))
    for name, ms, sec, ratio in zip(table["protocol"], table["count engine (ms)"], table["protocol engine (s)"],
                                    table["speed-up"]):
        key = name.lower()
        out.update({f"engine_speed_counts_ms_{key}": ms, f"engine_speed_protocol_s_{key}": sec,
                    f"engine_speed_ratio_{key}": ratio})
    return out


def engine_frame(records: Mapping, theory: Sequence[tuple], *, panels: Sequence[tuple[str, str, int]],
                 labels: Mapping[str, str], normal: str) -> pd.DataFrame:
    """Histograms of one probed support per ``(panel, protocol, probe)`` in both engines (series ``labels``),
    the ``normal`` law and F1's empirical distribution: see
    :func:`ldp.book.chapters.c04_count_engine.engine_agreement.frame`."""
    moments = {(r[0], r[4]): (r[2], r[3]) for r in theory}
    parts = []
    for panel, name, j in panels:
        xp, xc = records[name, "protocol"][0][:, j], records[name, "counts"][0][:, j]
        bins = np.histogram_bin_edges(np.r_[xp, xc], bins=20)
        for engine, sample in (("protocol", xp), ("counts", xc)):
            dens, _ = np.histogram(sample, bins=bins, density=True)
            parts.append(pd.DataFrame({"panel": panel, "protocol": name, "series": labels[engine], "x": bins[:-1],
                                       "x_right": bins[1:], "y": dens, "runs": len(sample)}))
        mu, var = moments[name, j]
        if np.isfinite(mu):
            x = np.linspace(bins[0], bins[-1], 200)
            parts.append(pd.DataFrame({"panel": panel, "protocol": name, "series": normal, "x": x,
                                       "y": stats.norm.pdf(x, mu, np.sqrt(var))}))
    for name in dict.fromkeys(k[0] for k in records):
        for engine in ("protocol", "counts"):
            f1_values, f1_runs = np.unique(records[name, engine][1], return_counts=True)  # the ECDF's steps
            parts.append(pd.DataFrame({"panel": "d", "protocol": name, "series": labels[engine], "x": f1_values,
                                       "y": np.cumsum(f1_runs) / f1_runs.sum(), "runs": f1_runs.sum()}))
    cols = ["panel", "protocol", "series", "x", "x_right", "y", "runs"]
    return pd.concat(parts, ignore_index=True)[cols].astype({"runs": "Int64"})
