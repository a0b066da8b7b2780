"""Chapter 08's protocols, and TreeHist and SFP tuned: the treatment PEM gets, where the library can give it.

PEM's configuration comes from a model of its own accuracy (:func:`ldp.analysis.optimize_pem`,
section 6.1).  TreeHist and SFP have no such model here, so their settings are chosen by a
sweep, with this rule (the chapter states it and shows the sweep):

* **candidates** (:func:`candidates`) -- TreeHist: ``bits_per_level`` b in 2, 4, 8, 10 (the
  paper's b = 1 is a series of its own); SFP: ``hash_bits`` 4, 6 or 8 (Apple's 8), the fragment
  length then the longest the query limit allows (:class:`ldp.SFP`'s rule).  Each with the
  budget split (every user sends both reports at ε/2, the published protocols) and with
  partitioned users (``final_fraction`` = :data:`PARTITION` of the users send only the whole
  value, the others only the first report, each at the full ε: the paper's modification of
  SPM and MCM in section 6.2.4); candidates the query limit rules out at some point of the
  chapter's grids are left out (:func:`feasible`);
* **choice** (:func:`choose`) -- per data set and tuned series, the candidate with the highest
  mean F1 over the tuning runs: the ε grid of Figure 5 at k = 16, with a root seed of their
  own, so the runs the figures show never take part in the choice; ties go to the candidate
  listed first.  The chosen setting then runs on both grids (:func:`tuned_protocols`).

One setting per data set, chosen with the data's own F1, is more than PEM gets (its optimiser
sees only n, m, k and ε): any lead PEM keeps over a tuned series is not a matter of tuning.
"""
from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from ....datasets import ChecksumError, DataFileNotFoundError, check_aol
from ....experiments.registry import resolve_protocol
from ....oracles import CMS, HR, OLH
from ....oracles.cms import DEFAULT_WIDTH
from ....protocols import SFP
from ...claims.measures import pem_vs_best_other, score_se
from ...claims.verdicts import Z_TOL

__all__ = ["PARTITION", "TUNED", "PUBLISHED", "protocols", "candidates", "feasible", "choose", "tuned_protocols",
           "series_pairs", "COLUMNS", "report_bits", "bits_per_user", "deployer_table", "checked_grids",
           "aol_missing", "missing_panels", "feasible_candidates", "sweep_table", "f1_table", "engine_check_specs",
           "engine_check_table", "figure_findings", "tuning_findings", "cost_findings",
           "engine_check_findings", "closing_findings", "chapter_runtime"]

#: share of the users kept for the whole-value report in the partitioned series (the paper's 10 %, section 6.2.4)
PARTITION = 0.1
#: the tuned series, by protocol family
TUNED = {"TreeHist": ("TreeHist (tuned)", "TreeHist (tuned, partitioned users)"),
         "SFP": ("SFP (tuned)", "SFP (tuned, partitioned users)")}
#: the published series of TreeHist and SFP, as :func:`protocols` labels them
PUBLISHED = ("TreeHist", "TreeHist (8 bits)", "SFP", "SFP (Hadamard sketch)")
_SWEEP = {"TreeHist": ("bits_per_level", (2, 4, 8, 10), "b = {}"), "SFP": ("hash_bits", (4, 6, 8), "hash {} bits")}
_DEFAULTS = {"SFP": {"hash_bits": 8}}  # left out of a candidate's keywords, so that its runs are the published series'


def protocols(query_limit: int) -> list[tuple[str, dict, str]]:
    """The chapter's protocols with their published settings, as :class:`~ldp.experiments.Grid` specs.

    PEM, MCM and SPM exactly as chapter 06 (same specs: their runs come from the grid cache);
    TreeHist with one bit per level (the paper's) and with 8; SFP with Apple's count-mean
    sketch and with its Hadamard count-mean sketch (oracle ``"Hashtogram"``: the support law of
    one Hadamard coefficient of a hashed cell, see :mod:`ldp.oracles.hr`), under one query limit.
    """
    q = {"query_limit": query_limit}
    return [*((name, dict(q), name) for name in ("PEM", "MCM", "SPM")), ("TreeHist", dict(q), "TreeHist"),
            ("TreeHist", {**q, "bits_per_level": 8}, "TreeHist (8 bits)"), ("SFP", dict(q), "SFP"),
            ("SFP", {**q, "oracle": "Hashtogram"}, "SFP (Hadamard sketch)")]


def candidates(query_limit: int, final_fraction: float = PARTITION) -> dict[str, list[tuple[str, dict, str]]]:
    """Tuned series -> its candidate settings as grid specs ``(name, kwargs, label)`` (module notes)."""
    out = {}
    for family, series in TUNED.items():
        key, levels, text = _SWEEP[family]
        for label, part in zip(series, (None, final_fraction)):
            extra = {} if part is None else {"final_fraction": part}
            out[label] = [(family, {"query_limit": query_limit, **extra,
                                    **({} if _DEFAULTS.get(family, {}).get(key) == v else {key: v})},
                           f"{label}: {text.format(v)}") for v in levels]
    return out


def feasible(spec: tuple[str, dict, str], *, m: int, epsilons: Sequence[float], ks: Sequence[int]) -> bool:
    """Whether the protocol of ``spec`` can be built (its query limit allows it) at every ``(epsilon, k)``."""
    factory = resolve_protocol(spec[0])[1]
    try:
        for e in epsilons:
            for k in ks:
                factory(float(e), int(k), int(m), **spec[1])
    except ValueError:
        return False
    return True


def choose(runs: pd.DataFrame, series: Mapping[str, Sequence[tuple[str, dict, str]]]) -> pd.DataFrame:
    """The sweep: every candidate's mean F1 per data set, and the one each tuned series takes.

    Parameters
    ----------
    runs : pandas.DataFrame
        :func:`~ldp.experiments.run_grid` rows of the candidates (labels as in :func:`candidates`).
    series : mapping
        :func:`candidates` (the order of each list breaks ties).

    Returns
    -------
    pandas.DataFrame
        ``dataset, series, setting, F1 (mean), runs, chosen``: one row per data set and candidate run.
    """
    rows = []
    for ds, sub in runs.groupby("dataset", sort=False):
        f1 = sub.groupby("protocol", sort=False)["f1"].agg(["mean", "count"])
        for label, specs in series.items():
            tried = [s[2] for s in specs if s[2] in f1.index]
            if not tried:
                continue
            best = max(tried, key=lambda c: (f1.loc[c, "mean"], -tried.index(c)))
            rows += [{"dataset": ds, "series": label, "setting": c.split(": ", 1)[1], "F1 (mean)": f1.loc[c, "mean"],
                      "runs": int(f1.loc[c, "count"]), "chosen": c == best} for c in tried]
    return pd.DataFrame(rows, columns=["dataset", "series", "setting", "F1 (mean)", "runs", "chosen"])


def tuned_protocols(sweep: pd.DataFrame, series: Mapping[str, Sequence[tuple[str, dict, str]]],
                    dataset: str) -> list[tuple[str, dict, str]]:
    """The grid specs of the settings :func:`choose` chose on ``dataset``, each labelled as its tuned series."""
    chosen = sweep[(sweep["dataset"] == dataset) & sweep["chosen"]]
    out = []
    for label, setting in zip(chosen["series"], chosen["setting"]):
        name, kwargs, _ = next(s for s in series[label] if s[2] == f"{label}: {setting}")
        out.append((name, kwargs, label))
    return out


def series_pairs(points: pd.DataFrame, x: str, a: str, b: str) -> pd.DataFrame:
    """Protocol ``a`` against protocol ``b`` at every (data set, ``x``) point where both ran (chapter 08's figures).

    Parameters
    ----------
    points : pandas.DataFrame
        ``dataset, protocol, <x>, mean, se``, one metric.
    x : str
        The varied parameter (``"epsilon"`` or ``"k"``).
    a, b : str
        The two protocols, as the chapter labels them.

    Returns
    -------
    pandas.DataFrame
        ``point, a, se_a, b, se_b`` (the layout of an ordering rule's measurement).
    """
    rows = []
    for (ds, xv), grp in points.groupby(["dataset", x], sort=False):
        grp = grp.set_index("protocol")
        if {a, b} <= set(grp.index):
            rows.append({"point": f"{ds}, {'ε' if x == 'epsilon' else x} = {float(xv):g}", "a": grp.loc[a, "mean"],
                         "se_a": grp.loc[a, "se"], "b": grp.loc[b, "mean"], "se_b": grp.loc[b, "se"]})
    return pd.DataFrame(rows, columns=["point", "a", "se_a", "b", "se_b"])


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



# --------------------------------------------------------------------------- the notebook's plumbing
def _markdown(text: str):
    """``text`` as IPython Markdown, which the page pastes with ``{glue:md}`` (IPython is the book's, imported here)."""
    from IPython.display import Markdown

    return Markdown(text)


def checked_grids(epsilons: Sequence[float], ks: Sequence[int], *, eps_fixed: float) -> tuple[list[float], list[int]]:
    """The chapter's ε grid and its other grid (``ks``: integers), sorted, after checking that the ε grid holds
    ``eps_fixed``.

    The text quotes results at ``eps_fixed`` read from the ε grid (here every protocol's F1), so a grid
    without it is refused before any run.

    Raises
    ------
    ValueError
        If ``eps_fixed`` is not one of ``epsilons``.
    """
    eps, k = sorted(float(e) for e in epsilons), sorted(int(v) for v in ks)
    if float(eps_fixed) not in eps:
        raise ValueError(f"epsilons must contain eps_fixed = {eps_fixed} (the text quotes results there); "
                         f"got epsilons = {eps}")
    return eps, k


def aol_missing() -> str:
    """Why the AOL tally is left out of this build, in the words the page completes: ``""`` when it is there.

    The tally ships in ``data/`` (``LDP_DATA_DIR``, when set, is the only folder searched); without a copy
    that passes :func:`ldp.datasets.check_aol` AOL is left out, and its panels and sentences say why:
    ``"is missing"`` or ``"fails its sha256 check"``.
    """
    try:
        check_aol()
    except DataFileNotFoundError:
        return "is missing"
    except ChecksumError:
        return "fails its sha256 check"
    return ""


def missing_panels(no_aol: str) -> dict[str, str]:
    """What the figures write in the AOL panels when AOL is left out (``no_aol``: :func:`aol_missing`)."""
    return {"AOL": f"the AOL data file\n{no_aol} in this build"} if no_aol else {}


def feasible_candidates(series: Mapping[str, Sequence[tuple[str, dict, str]]], datasets: Sequence[tuple],
                        *, m: Mapping[str, int], epsilons: Sequence[float],
                        ks: Sequence[int]) -> dict[str, list[tuple[str, dict, str]]]:
    """Data set label -> the candidates of every tuned series (:func:`candidates`) that fit its grids.

    ``datasets`` are grid specs ``(name, kwargs, label)`` and ``m`` the bits per value of each label; a
    candidate is kept when :func:`feasible` builds it at every ``(epsilon, k)`` of both grids.
    """
    return {spec[2]: [c for cs in series.values() for c in cs
                      if feasible(c, m=int(m[spec[2]]), epsilons=epsilons, ks=ks)] for spec in datasets}


def sweep_table(sweep: pd.DataFrame, datasets: Sequence[str]) -> pd.DataFrame:
    """The sweep as the chapter shows it: mean F1 of each (series, setting) per data set, ✓ the chosen one.

    Rows in the sweep's order, columns ``datasets``; "–" where a setting did not run on a data set.
    """
    shown = sweep.assign(cell=[f"{f:.2f}" + (" ✓" if c else "") for f, c in zip(sweep["F1 (mean)"], sweep["chosen"])])
    rows = pd.MultiIndex.from_frame(shown[["series", "setting"]].drop_duplicates())
    return (shown.pivot(index=["series", "setting"], columns="dataset", values="cell")
            .reindex(index=rows, columns=list(datasets)).fillna("–"))


def f1_table(summary: pd.DataFrame, protocols: Sequence[str], datasets: Sequence[str], *, eps_fixed: float,
             k_fixed: int) -> pd.DataFrame:
    """Every protocol's mean F1 at ``eps_fixed`` (rows in the order of ``protocols``, columns ``datasets``).

    ``summary`` is :func:`~ldp.experiments.summarize` of the ε grid (``f1_mean`` per data set, protocol, ε).
    """
    at = summary[summary["epsilon"] == eps_fixed]
    return (at.pivot(index="protocol", columns="dataset", values="f1_mean").loc[list(protocols)]
            .reindex(columns=list(datasets)).rename_axis(index=f"mean F1 at ε = {eps_fixed:g}, k = {k_fixed}"))


def engine_check_specs(specs: Sequence[tuple[str, dict, str]]) -> list[tuple[str, dict, str]]:
    """``specs`` with each distinct setting once, the first of each kept (a tuned series may have chosen a
    published setting)."""
    checked: dict[str, tuple[str, dict, str]] = {}
    for spec in specs:
        checked.setdefault(json.dumps([spec[0], spec[1]], sort_keys=True), spec)
    return list(checked.values())


def engine_check_table(check: pd.DataFrame) -> pd.DataFrame:
    """The engine check as the chapter shows it: F1 columns of
    :func:`~ldp.book.chapters.c06_evaluation.compute.engine_comparison`, named for the reader."""
    return check[["f1 protocol", "f1 counts mean", "f1 counts std", "f1 z", "f1 percentile"]].set_axis(
        ["F1, protocol engine", "F1, count engine: mean", "F1, count engine: SD", "z", "percentile"], axis=1)


# --------------------------------------------------------------------------- the values the text quotes
def tuning_findings(series: Mapping[str, Sequence[tuple[str, dict, str]]],
                    tried: Mapping[str, Sequence[tuple[str, dict, str]]], tuning_runs: pd.DataFrame, *,
                    repetitions: int, final_fraction: float) -> dict[str, Any]:
    """What the tuning section quotes: the settings swept, those ruled out, the sweep's runs and worker time.

    Parameters
    ----------
    series : mapping
        :func:`candidates`.
    tried : mapping
        :func:`feasible_candidates` (data set -> the candidates that ran on it).
    tuning_runs : pandas.DataFrame
        The sweep's :func:`~ldp.experiments.run_grid` rows (all data sets).
    repetitions, final_fraction : int, float
        Runs per candidate setting and ε; the partitioned series' share of users for the whole value.
    """
    n_all = sum(map(len, series.values()))
    return {"sweep_treehist": _markdown(", ".join(c[2].split("b = ")[1] for c in series["TreeHist (tuned)"])),
            "sweep_sfp": _markdown(", ".join(c[2].split("hash ")[1].split()[0] for c in series["SFP (tuned)"])),
            "partition_pct": 100 * final_fraction, "tuning_repetitions": repetitions,
            "n_infeasible": sum(n_all - len(ok) for ok in tried.values()), "tuning_runs": len(tuning_runs),
            "tuning_s": float(tuning_runs["wall_time"].sum())}


def _margins(frame: pd.DataFrame, x: str, others: Sequence[str], k_fixed: int) -> pd.DataFrame:
    """PEM against the best of ``others`` per point of a figure's frame, with the claims' SE and the z of the gap."""
    df = frame.drop_duplicates(["dataset", "protocol", x])
    df = df.assign(se=score_se(df["std"], df["runs"], df["k"] if "k" in df else k_fixed))
    m = pem_vs_best_other(df, x, metrics=("f1",), others=others)
    return m.assign(z=(m["a"] - m["b"]) / np.hypot(m["se_a"], m["se_b"]))


def figure_findings(frames: Mapping[str, pd.DataFrame], *, repetitions: int, eps_fixed: float,
                    k_fixed: int) -> dict[str, Any]:
    """What the figures' captions and findings quote: the settings, and where PEM's lead depends on tuning.

    At every point of both figures, PEM's mean F1 against the best published series and against the
    best tuned series, with the claims' standard errors (:func:`~ldp.book.claims.measures.score_se`) and
    their rule's :data:`~ldp.book.claims.verdicts.Z_TOL` for "beyond noise".

    Parameters
    ----------
    frames : mapping
        Varied parameter (``"epsilon"``, ``"k"``) -> the figure's frame (:func:`.after_pem.frame`).
    repetitions, eps_fixed : int, float
        Runs per point; the ε of the k grid.
    k_fixed : int
        The ``k`` of the ε grid (the standard errors' floor where a frame has no ``k`` column).

    Returns
    -------
    dict
        The three settings, and ``tuning_text`` (Markdown): at how many points PEM is ahead beyond noise
        against the published settings, at how many it stays ahead against the tuned ones, how much tuning
        narrows PEM's lead (mean and largest), and the points where the lead depends on the tuning.
    """
    tuned = [s for t in TUNED.values() for s in t]
    lost, n_points, n_ahead, shrink = [], 0, 0, []
    for x, frame in frames.items():
        pub, tun = _margins(frame, x, PUBLISHED, k_fixed), _margins(frame, x, tuned, k_fixed).set_index("point")
        for _, r in pub.iterrows():
            n_points += 1
            t = tun.loc[r["point"]]
            shrink.append((r["a"] - r["b"]) - (t["a"] - t["b"]))
            if r["z"] > Z_TOL:
                n_ahead += 1
                if t["z"] <= Z_TOL:
                    lost.append(f"{r['point'].replace(', F1', '')} ({t['best_other']}: {t['b']:.2f} against "
                                f"PEM's {t['a']:.2f})")
    text = (f"Against the published settings PEM is ahead beyond noise at {n_ahead} of the {n_points} points of the "
            f"two grids; against the tuned series it stays ahead at {n_ahead - len(lost)} of them. Tuning narrows "
            f"PEM's lead over the best successor by {np.mean(shrink):.2f} in F1 on average (at most "
            f"{np.max(shrink):.2f}). ")
    text += (("PEM's lead depends on the tuning at " + "; ".join(lost) + ".") if lost else
             "At none of these points does PEM's lead depend on the successors' tuning.")
    return {"repetitions": repetitions, "eps_fixed": eps_fixed, "k_fixed": k_fixed, "tuning_text": _markdown(text)}


def _slug(label: str) -> str:
    """A protocol's label as a glue name's part: ``"TreeHist (8 bits)"`` -> ``"treehist8"``."""
    return label.lower().replace(" (8 bits)", "8").replace(" (hadamard sketch)", "_hadamard").replace(" ", "")


def cost_findings(deploy: pd.DataFrame, summary: pd.DataFrame, *, eps_fixed: float, no_aol: str, n_deploy: int,
                  n_synthetic: int, n_warmup: int) -> dict[str, Any]:
    """What the findings and the deployer's section quote: F1 at ``eps_fixed``, each protocol's bits and times.

    Parameters
    ----------
    deploy : pandas.DataFrame
        :func:`deployer_table`.
    summary : pandas.DataFrame
        :func:`~ldp.experiments.summarize` of the ε grid.
    eps_fixed : float
        The ε of the deployer's table and of the F1 the text quotes.
    no_aol : str
        :func:`aol_missing`.
    n_deploy, n_synthetic, n_warmup : int
        Users of the deployer's table, of the synthetic set and of the warm-up run.

    Returns
    -------
    dict
        ``<dataset>_<protocol>_f1_eps2`` (URL and synthetic set, published series), ``bits_<protocol>``,
        ``server_<protocol>``, ``counts_ms_max``, the sentences ``aol_text`` (AOL's F1, or why there are no AOL
        results) and ``cost_text`` (Markdown: bits and server time of PEM against the others), and the sizes.
    """
    at = summary[summary["epsilon"] == eps_fixed]
    f1_at = {(r["dataset"], r["protocol"]): r["f1_mean"] for _, r in at.iterrows()}
    bits, server = deploy[COLUMNS["bits"]], deploy[COLUMNS["server"]]
    out: dict[str, Any] = {f"{ds.lower()}_{_slug(p)}_f1_eps2": f for (ds, p), f in f1_at.items()
                           if ds != "AOL" and "tuned" not in p}
    out |= {f"bits_{_slug(str(p))}": float(b) for p, b in bits.items() if "tuned" not in p}
    out |= {f"server_{_slug(str(p))}": float(s) for p, s in server.items() if "tuned" not in p}
    out["counts_ms_max"] = float(deploy[COLUMNS["counts"]].max())
    out["aol_text"] = (f"On AOL at ε = {eps_fixed:g}, PEM reaches F1 = {f1_at['AOL', 'PEM']:.3f}, TreeHist "
                       f"{f1_at['AOL', 'TreeHist']:.3f} (8 bits: {f1_at['AOL', 'TreeHist (8 bits)']:.3f}, tuned with "
                       f"partitioned users: {f1_at['AOL', 'TreeHist (tuned, partitioned users)']:.3f}) and SFP "
                       f"{f1_at['AOL', 'SFP']:.3f} (tuned with partitioned users: "
                       f"{f1_at['AOL', 'SFP (tuned, partitioned users)']:.3f})." if not no_aol else
                       f"No AOL results: the AOL data file {no_aol} in this build, so panels (b) and (e) of both "
                       "figures are empty (the project's data/README.md says how to restore the file).")
    out["cost_text"] = _markdown(
        f"A PEM user sends {bits['PEM']:.0f} bits, " + ("the fewest of all protocols" if bits["PEM"] <= bits.min() else
                                                          f"against {bits.min():.0f} for {bits.idxmin()}")
        + f" (SFP: {bits['SFP']:.0f} with the count-mean sketch, {bits['SFP (Hadamard sketch)']:.0f} with the "
        f"Hadamard sketch; TreeHist: {bits['TreeHist']:.0f}). The server aggregates PEM's reports in "
        f"{server['PEM']:.2f} s, " + ("the fastest" if server["PEM"] <= server.min() else
                                      f"{server['PEM'] / server.min():.1f} times as long as {server.idxmin()} "
                                      f"({server.min():.2f} s)") + f", and SFP's in {server['SFP']:.2f} s.")
    return out | {"n_deploy": n_deploy, "n_synthetic": n_synthetic, "n_warmup": n_warmup}


def engine_check_findings(check: pd.DataFrame, *, n: int, runs: int) -> dict[str, Any]:
    """What the engine check's section quotes, from :func:`~ldp.book.chapters.c06_evaluation.compute.engine_comparison`.

    Parameters
    ----------
    check : pandas.DataFrame
        One row per series: the protocol-engine run's F1 and NCR, the count-level runs' mean, SD and z.
    n, runs : int
        Users of the check's data set; count-level runs per series.

    Returns
    -------
    dict
        ``check_text`` (Markdown: the series whose protocol-engine run lies beyond 2 count-level SDs, and those
        that find nothing with either engine, for which the check says little), the protocol-engine seconds, the
        number of comparisons, the largest ``|z|`` and the chance that at least one of that many independent
        comparisons exceeds ``|z| = 2`` if the engines agree in law.
    """
    z = check[["f1 z", "ncr z"]].to_numpy()
    far = [str(p) for p in check.index[(np.abs(z) > 2).any(axis=1)]]  # |z| > 2 in F1 or NCR
    text = ("The single protocol-engine run lies within two count-level standard deviations of the runs' mean for "
            "every series." if not far else f"The protocol-engine run lies more than two count-level standard "
            f"deviations from the runs' mean for {', '.join(far)}.")
    blind = [str(p) for p in check.index[(check["f1 protocol"] == 0) & (check["f1 counts mean"] == 0)]]
    if blind:  # a series that finds nothing in either engine at this n: agreement there says little
        text += (f" At this *n*, {len(blind)} of the {len(check)} series ({', '.join(blind)}) find no heavy hitter "
                 "with either engine, so for them the check says little (a larger `n_engine_check` tests them).")
    return {"check_text": _markdown(text), "check_n": n, "check_runs": runs, "check_n_protocols": len(check),
            "check_seconds": float(check["protocol-engine seconds"].sum()), "check_comparisons": int(z.size),
            "check_max_abs_z": float(np.nanmax(np.abs(z))),
            "check_p_any_z2": float(1 - (1 - 2 * norm.sf(2.0)) ** z.size)}


def closing_findings(*, eps_fixed: float, k_fixed: int, query_limit: int, clock) -> dict[str, Any]:
    """The oracle constants the deployer's section quotes, and the chapter's run time so far.

    Returns
    -------
    dict
        ``cms_width`` (bits of a count-mean-sketch report), ``sfp_url_fragments`` (fragments of a 160-bit
        value under SFP), ``eps_half`` and ``hadamard_var_ratio`` (a count estimate's variance with the
        Hadamard sketch over the count-mean sketch's, one report at ε/2) and ``runtime_s`` (``clock``:
        :class:`ldp.book.ChapterClock`).
    """
    cms, hcms = CMS(eps_fixed / 2), HR(eps_fixed / 2, blocks=1)  # one report of SFP's budget split
    var = {o: o.q * (1 - o.q) / (o.p - o.q) ** 2 for o in (cms, hcms)}  # per-user variance of a count estimate
    return {"cms_width": DEFAULT_WIDTH,
            "sfp_url_fragments": len(SFP(eps_fixed, k_fixed, 160, query_limit=query_limit).bounds),
            "eps_half": eps_fixed / 2, "hadamard_var_ratio": var[hcms] / var[cms], "runtime_s": clock.seconds()}


def chapter_runtime(clock, *, quick: bool) -> dict[str, str]:
    """``chapter_runtime``: how long the chapter took (``clock``: :class:`ldp.book.ChapterClock`), in which build."""
    return {"chapter_runtime": clock.text() + (" in this quick build (small settings, not the paper's)" if quick
                                               else " with the paper's settings")}
