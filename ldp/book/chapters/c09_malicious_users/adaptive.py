"""Chapter 09 (malicious users, ours), above the library: what the sections on attackers who know the checks and
on the audit of the client's privacy compute -- the committed results of ``benchmarks/bench_adaptive.py`` and
``benchmarks/bench_audit.py`` read back and checked, the one search this build runs again, and the findings the
sections quote.  :mod:`~ldp.book.chapters.c09_malicious_users.compute` re-exports every name.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ....attacks import (
    adaptive_attacks,
    adaptive_grid,
    audited_protocols,
)
from ....datasets import exponential
from ....paths import repo_root

__all__ = ["bench_adaptive", "bench_audit", "rerun_search", "cheapest", "adaptive_table", "audit_reports",
           "audit_findings", "stop_price", "adaptive_findings", "BENCH_ADAPTIVE", "BENCH_AUDIT", "BENCH_TABLES",
           "BENCH_PARTS", "BENCH_DATA_SEED", "SERVERS", "TABLE_LABELS", "BENCH_SCALE", "BENCH_MAX_FRACTION",
           "BENCH_CAP", "BENCH_ROOT_SEED"]


# --------------------------------------------------------------------------- attackers who know the checks
#: the committed results of ``benchmarks/bench_adaptive.py`` (folder) and ``benchmarks/bench_audit.py`` (file),
#: relative to the repository's root
BENCH_ADAPTIVE = "benchmarks/results/adaptive"
BENCH_AUDIT = "benchmarks/results/audit.csv"
#: the benchmark's tables (16 targets of which 8 must be released; one target) and the parts the chapter reads
BENCH_TABLES = ("sixteen-targets", "one-target")
BENCH_PARTS = ("grid", "price")
#: the benchmark's settings the chapter repeats: its synthetic set's seed and scale, the largest share a search
#: tries, the capped attacker's targets per report, the searches' root seed
BENCH_DATA_SEED, BENCH_SCALE, BENCH_MAX_FRACTION, BENCH_CAP, BENCH_ROOT_SEED = 20190101, 0.05, 0.5, 5, 0
#: the four servers of a search, as the figures name them: (checks, defence) -> label
SERVERS = {("off", "off"): "no checks", ("on", "off"): "checks", ("off", "on"): "defence",
           ("on", "on"): "checks and defence"}


def _read_committed(path: Path, command: str, columns: Sequence[str]) -> pd.DataFrame:
    """A committed benchmark CSV, checked for the columns the chapter reads (FileNotFoundError names the command)."""
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: it is the committed output of {command}")
    frame = pd.read_csv(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{path} lacks the column(s) {missing}: re-run {command}")
    return frame


def bench_adaptive(folder: str | Path | None = None) -> dict[str, dict[str, pd.DataFrame]]:
    """The committed tables of ``benchmarks/bench_adaptive.py``: table -> {``"grid"``, ``"price"``} -> frame.

    ``folder`` defaults to :data:`BENCH_ADAPTIVE` under the repository's root; its files are
    ``adaptive_<table>_<part>.csv`` (:func:`ldp.attacks.adaptive_grid`'s and :func:`ldp.attacks.defence_price`'s
    frames, each row with the command, commit, machine and load that made it).
    """
    root = Path(folder) if folder is not None else repo_root() / BENCH_ADAPTIVE
    need = {"grid": ("protocol", "oracle", "epsilon", "n", "attacker", "rep", "checks", "defence", "guard",
                     "fraction", "commit", "load_before", "load_after", "seconds"),
            "price": ("protocol", "guard", "rep", "f1", "f1_defended")}
    return {t: {p: _read_committed(root / f"adaptive_{t}_{p}.csv", "benchmarks/bench_adaptive.py", need[p])
                for p in BENCH_PARTS} for t in BENCH_TABLES}


def bench_audit(path: str | Path | None = None) -> pd.DataFrame:
    """The committed full audit of ``benchmarks/bench_audit.py`` (default :data:`BENCH_AUDIT`), as
    :func:`ldp.attacks.audit_grid` returns it with the provenance columns."""
    return _read_committed(Path(path) if path is not None else repo_root() / BENCH_AUDIT,
                           "benchmarks/bench_audit.py", ("protocol", "oracle", "kind", "epsilon", "n", "k0", "k1",
                                                         "eps_hat", "eps_lower", "alpha", "commit"))


def rerun_search(grid: pd.DataFrame, *, n_jobs: int = 1) -> pd.DataFrame:
    """The first search of a committed table (its first protocol, attacker and repetition), run again here.

    :func:`ldp.attacks.adaptive_grid` seeds protocol ``i``'s repetitions from ``SeedSequence(root_seed,
    spawn_key=(i,))`` and gives the attackers of a repetition its spawned seeds in order, so the first
    protocol's first attacker, alone in a grid of one repetition, draws the same scenario and runs as in the
    benchmark: under the same code its four fractions (checks and defence off and on) are the committed ones.
    The data set is the benchmark's (:data:`BENCH_DATA_SEED`, :data:`BENCH_SCALE`, ``m = 64``, its ``n``), the
    protocol and the defence's guard are read from the table.

    Returns
    -------
    pandas.DataFrame
        :func:`ldp.attacks.adaptive_grid`'s four rows (``rep`` 0).
    """
    first = grid.iloc[0]
    label, attacker = str(first["protocol"]), str(first["attacker"])
    rows = grid[(grid["protocol"] == label) & (grid["attacker"] == attacker) & (grid["rep"] == 0)]
    protocol = audited_protocols(k=int(first["k"]), m=64)[label](float(first["epsilon"]))
    attack = adaptive_attacks(protocol, targets=int(first["targets"]), cap=BENCH_CAP)[attacker]
    data = exponential(n=int(first["n"]), scale=BENCH_SCALE, m=64, rng=BENCH_DATA_SEED)
    return adaptive_grid({label: protocol}, data, need=int(first["need"]), guard=float(rows["guard"].max()),
                         attacks={label: {attacker: attack}}, reps=1, root_seed=BENCH_ROOT_SEED,
                         max_fraction=BENCH_MAX_FRACTION, engine=str(first["engine"]), n_jobs=n_jobs)


def cheapest(data: pd.DataFrame, *, source: str = "benchmark") -> pd.DataFrame:
    """Per protocol and server: the smallest mean share over the attackers of an adaptive figure's frame
    (:func:`ldp.book.chapters.c09_malicious_users.malicious_adaptive.frame`; ``inf`` where none planted).

    Returns ``protocol`` and a column per server (:data:`SERVERS`' labels), the protocols in the frame's order.
    """
    f = data[(data["quantity"] == "fake users") & (data["source"] == source)]
    out = f.assign(v=f["value"].where(f["reached"] > 0, np.inf)).pivot_table(
        index="protocol", columns="server", values="v", aggfunc="min", sort=False)
    return out.reindex(columns=list(SERVERS.values())).reset_index().rename_axis(columns=None)


#: the benchmark's tables as the chapter's table names them
TABLE_LABELS = {"sixteen-targets": "8 of 16", "one-target": "1 of 1"}


def adaptive_table(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The cheapest attacker's share per protocol under each server, the defence's guard and its honest-F1 price.

    ``frames``: table -> its figure's frame.  One row per (table, protocol): ``targets`` (released of fake
    ones), ``protocol``, a column per server (``nan`` where no attacker planted them within the largest share
    tried), ``guard``, ``honest F1 lost``.
    """
    rows = []
    for table, f in frames.items():
        c = cheapest(f).replace(np.inf, np.nan)
        price = f[f["quantity"] == "honest F1 lost"].set_index("protocol")
        rows.append(c.assign(targets=TABLE_LABELS[table], guard=c["protocol"].map(price["guard"]),
                             **{"honest F1 lost": c["protocol"].map(price["value"])}))
    out = pd.concat(rows, ignore_index=True)
    return out[["targets", "protocol", *SERVERS.values(), "guard", "honest F1 lost"]]


def audit_reports(quick: bool) -> int:
    """Reports of each value per audited group: what the build affords over the chapter's ε grid (module notes of
    :mod:`ldp.attacks.audit`; ``benchmarks/bench_audit.py`` runs 200,000)."""
    return 2_000 if quick else 6_000


def audit_findings(data: pd.DataFrame, *, seconds: float) -> dict[str, Any]:
    """What the audit's section quotes from its figure's frame
    (:func:`ldp.book.chapters.c09_malicious_users.malicious_audit.frame`) and the time this build's audit took.

    Parameters
    ----------
    data : pandas.DataFrame
        The figure's frame: this build's audit and the committed one.
    seconds : float
        Wall-clock seconds of this build's audit (``audit_s``).

    Returns
    -------
    dict
        For this build (``audit_*``) and the committed audit (``audit_bench_*``): the audited cells, the reports
        of each value per cell, the ε range, the largest ``eps_lower - epsilon`` and where, the median
        ``eps_lower / epsilon``; the level ``alpha`` of each bound, the chance that any cell of either lies
        above its ε if the client is ε-LDP (``audit_fail``, at most ``2 alpha`` per cell), the largest
        ``|eps_hat / epsilon - 1|`` of the committed audit and its commit; ``audit_s``.
    """
    out: dict[str, Any] = {}
    for prefix, source in (("audit", "this build"), ("audit_bench", "benchmark")):
        d = data[data["source"] == source]
        gap = d["eps_lower"] - d["epsilon"]
        worst = d.loc[gap.idxmax()]
        out |= {f"{prefix}_cells": int(len(d)), f"{prefix}_n": int(d["n"].max()),
                f"{prefix}_eps_min": float(d["epsilon"].min()), f"{prefix}_eps_max": float(d["epsilon"].max()),
                f"{prefix}_gap_max": float(gap.max()),
                f"{prefix}_gap_at": f"{worst['protocol']}, {worst['kind']}, ε = {worst['epsilon']:g}",
                f"{prefix}_lower_median": float((d["eps_lower"] / d["epsilon"]).median())}
    bench = data[data["source"] == "benchmark"]
    return out | {"audit_s": float(seconds), "audit_alpha": float(data["alpha"].max()),
                  "audit_fail": float(2 * data["alpha"].sum()),
                  "audit_bench_hat_dev": float((bench["eps_hat"] / bench["epsilon"] - 1).abs().max()),
                  "audit_bench_commit": ", ".join(sorted(bench["commit"].astype(str).unique()))
                  if "commit" in bench.columns else "unknown"}


def _names(protocols: Sequence[str]) -> str:
    """``"A, B and C"`` (``"none"`` for no protocol)."""
    p = list(protocols)
    return "none" if not p else p[0] if len(p) == 1 else ", ".join(p[:-1]) + " and " + p[-1]


def stop_price(price: pd.DataFrame, shares: pd.Series) -> pd.DataFrame:
    """Per protocol: the smallest guard of the price table above ``shares`` (protocol -> share) and the mean
    honest F1 it loses: what a defence that stops an attacker with that share would cost (``nan``: no guard
    on the grid is above it)."""
    loss = price.assign(loss=price["f1"] - price["f1_defended"]).groupby(["protocol", "guard"])["loss"].mean()
    rows = []
    for protocol, share in shares.items():
        grid = loss.loc[protocol] if protocol in loss.index.get_level_values(0) else pd.Series(dtype=float)
        above = grid[grid.index > share]
        rows.append({"protocol": protocol, "share": share, "guard": float(above.index.min()) if len(above) else np.nan,
                     "loss": float(above.iloc[0]) if len(above) else np.nan})
    return pd.DataFrame(rows)


def adaptive_findings(frames: Mapping[str, pd.DataFrame], bench: Mapping[str, Mapping[str, pd.DataFrame]], *,
                      free: float = 1.25) -> dict[str, Any]:
    """What the section on attackers who know the checks quotes, from its figures' frames and the committed tables.

    Parameters
    ----------
    frames : mapping
        Table -> its figure's frame (:func:`ldp.book.chapters.c09_malicious_users.malicious_adaptive.frame`).
    bench : mapping
        :func:`bench_adaptive`'s tables.
    free : float
        A factor up to which the checks count as buying nothing (the searches' precision, 10 %, and a step).

    Returns
    -------
    dict
        The settings (``adapt_need``, ``adapt_targets``, ``adapt_n_many``, ``adapt_n_one``, ``adapt_reps_one``,
        ``adapt_cap``), the provenance (``adapt_commit``, ``adapt_load_max``, ``adapt_minutes``); for 16 targets
        the cheapest share without checks (range, protocols where none planted), the protocols where the checks
        raise it by at most ``free`` and by more (with the range of those factors and those where the checks stop
        every attacker within the largest share tried), the defence's largest factor over both tables and its
        largest price; for one target the cheapest share with the checks and the defence on (range and where),
        the honest F1 a guard above it would cost; this build's rerun of the first search against the committed
        one.
    """
    many, one = cheapest(frames["sixteen-targets"]), cheapest(frames["one-target"])
    grid_m, grid_o = bench["sixteen-targets"]["grid"], bench["one-target"]["grid"]
    plain = many.set_index("protocol")["no checks"]
    factor = (many.set_index("protocol")["checks"] / plain)[np.isfinite(plain)]
    raised, stopped = factor[(factor > free) & np.isfinite(factor)], factor[~np.isfinite(factor)]
    defence = pd.concat([c.set_index("protocol")["checks and defence"] / c.set_index("protocol")["checks"]
                         for c in (many, one)])
    price = pd.concat([f[f["quantity"] == "honest F1 lost"]["value"] for f in frames.values()])
    floor = one.set_index("protocol")["checks and defence"]
    stop = stop_price(bench["one-target"]["price"], one.set_index("protocol")["checks"])
    live = frames["one-target"][frames["one-target"]["source"] == "this build"]
    committed = frames["one-target"].merge(live[["attacker", "server"]], on=["attacker", "server"])
    committed = committed[(committed["source"] == "benchmark") & (committed["protocol"] == live["protocol"].iloc[0])]
    both = pd.concat([grid_m, grid_o])
    return {"adapt_need": int(grid_m["need"].iloc[0]), "adapt_targets": int(grid_m["targets"].iloc[0]),
            "adapt_n_many": int(grid_m["n"].iloc[0]), "adapt_n_one": int(grid_o["n"].iloc[0]),
            "adapt_reps_one": int(grid_o["rep"].max() + 1), "adapt_cap": BENCH_CAP,
            "adapt_commit": ", ".join(sorted(both["commit"].astype(str).unique())),
            "adapt_load_max": float(both[["load_before", "load_after"]].max().max()),
            "adapt_minutes": float(sum(g["seconds"].max() for g in (grid_m, grid_o)) / 60),
            "adapt_plain_min": float(plain[np.isfinite(plain)].min()),
            "adapt_plain_max": float(plain[np.isfinite(plain)].max()),
            "adapt_plain_none": _names(plain.index[~np.isfinite(plain)]),
            "adapt_free": free, "adapt_free_count": int((factor <= free).sum()), "adapt_protocols": int(len(factor)),
            "adapt_free_text": _names(factor.index[factor <= free]),
            "adapt_raised_text": _names([f"{p} ({x:.1f})" for p, x in raised.items()]),
            "adapt_stopped_text": _names(stopped.index),
            "adapt_defence_max": float(defence[np.isfinite(defence)].max()),
            "adapt_price_max": float(price.max()),
            "adapt_one_min": float(floor.min()), "adapt_one_min_at": str(floor.idxmin()),
            "adapt_one_max": float(floor.max()), "adapt_one_max_at": str(floor.idxmax()),
            "adapt_one_stop_guard": float(stop["guard"].min()),
            "adapt_one_stop_loss_min": float(stop["loss"].min()), "adapt_one_stop_loss_max": float(stop["loss"].max()),
            "adapt_rerun_text": _shares(live), "adapt_rerun_bench_text": _shares(committed)}


def _shares(rows: pd.DataFrame) -> str:
    """``"no checks 0.917 %, checks 0.917 %, ..."``: each server's share in a search's first repetition."""
    return ", ".join(f"{s} {x:.3%}" if np.isfinite(x) else f"{s} none within {BENCH_MAX_FRACTION:.0%}"
                     for s, x in zip(rows["server"], rows["first"]))
