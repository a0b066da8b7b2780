"""The building blocks of the claims registry: :class:`Claim`, the paper's numbers, shared readers.

The registry itself is :data:`ldp.reporting.claims.CLAIMS`, assembled from one
module per part of the paper (:mod:`.oracles`, :mod:`.pem`,
:mod:`.validation`, :mod:`.evaluation`, :mod:`.evaluation_more`) and one for
our own claims about the protocols that came after PEM (:mod:`.after_pem`).
Each entry holds

* a stable ``id`` (``"fig5-pem-best"``), the paper's section and the figure,
  equation or statement as the paper numbers them (``ref``);
* a short **verbatim** quote of the paper's LaTeX source (``quote``; macros
  such as ``\\itergroup`` are kept, :func:`display_quote` renders them as the
  paper prints them: PEM, MCM, SPM, F1, ...); for our own claims
  (``ours=True``) the quote is the sentence of the chapter or issue that states it;
* ``measure``: a function of the saved results (:class:`~ldp.reporting.results.ResultStore`:
  figure CSVs and a few named tables), never of prose, returning the tidy
  table its ``rule`` decides on;
* ``rule``: one of the decision rules of :mod:`ldp.reporting.rules`, with its
  parameters;
* whether it rests on stand-in data or re-implemented methods
  (``stand_in``: :data:`STAND_INS`; ``stand_in_decides=False`` when the
  stand-in cannot decide the claim, e.g. a number the URL stand-in was
  calibrated to) or on our reading of a detail the paper leaves open
  (``interpretation``: anchors of ``book/interpretation.md``);
* where the book measures it (``chapter``: notebook name, ``figure``: the
  figure's label) and the chapter parameters the claim's setting needs
  (``setting``), so that a rerun with other parameters is marked "not covered
  by this run's parameters".

The paper's numbers (Figure 5 for the book's ``fig-eval-vary-eps``, (3) for
the LaTeX label ``var_olh``) are read from the book's one list of them,
``book/_ext/paper_numbers.yml`` (:func:`paper_numbers`).  Sections are numbered
by the LaTeX's structure (section 4.3 = "Instantiate PEM", 4.4 = "Observations
and Design Principles").
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from ...paths import repo_root
from .. import rules as R
from ..results import ResultStore

__all__ = ["Claim", "Measurement", "NotCovered", "MissingInput", "STAND_INS", "FIGURE_ENGINES",
           "FIGURE_TITLES", "display_quote", "MIN_VAR_RUNS", "paper_numbers", "PAPER_NUMBERS_FILE"]


class NotCovered(LookupError):
    """The run's parameters leave out the setting the claim is about."""


class MissingInput(LookupError):
    """An input of the claim is not in the store (e.g. the AOL data was absent), or was never run."""


@dataclass(frozen=True)
class Measurement:
    """What a claim's ``measure`` returns: the rule's input table and an optional note with extra facts."""

    frame: pd.DataFrame
    note: str = ""


#: the data sets and methods that are not the paper's own
STAND_INS = {
    "url": "URL data set: a calibrated stand-in (the paper's Quantcast counts were never published)",
    "mcm": "MCM: re-implemented from the paper's text (the authors' code has no MCM)",
    "spm": "SPM: re-implemented from the paper's text (the authors' code has no SPM)",
}

#: what computed each figure / table the claims read (for the scorecard)
FIGURE_ENGINES = {
    "fig-oracles-variance-dprime": "closed form (ldp.analysis)",
    "fig-existing-all-methods": "protocol configurations (no simulation)",
    "fig-pem-optimizer": "closed form, eq. (4)-(5) (ldp.analysis)",
    "fig-pem-prop1": "closed form, eq. (6) (ldp.analysis)",
    "fig-validation-identification": "count engine (100 runs) against eq. (5)",
    "fig-validation-configurations": "count engine (100 runs) against eq. (4)",
    "fig-validation-optimal": "count engine (100 runs) against eq. (4)",
    "fig-eval-vary-eps": "count engine (10 runs)",
    "fig-eval-vary-k": "count engine (10 runs)",
    "fig-eval-var": "count engine (10 runs) against eq. (3)",
    "fig-evalmore-threshold": "count engine (10 runs)",
    "fig-evalmore-design": "count engine (10 runs)",
    "01_frequency_oracles/oracle-examples": "closed form (ldp.analysis)",
    "03_pem/joint-estimator": "OLH reports of simulated users (ldp.oracles)",
    "06_evaluation/datasets": "the data sets themselves (ldp.datasets)",
    "07_evaluation_more/threshold-release": "count engine (10 runs)",
    "06_evaluation/anomalies": "the data sets' true tallies (ldp.datasets)",
    "fig-after-vary-eps": "count engine (10 runs), PEM, SPM, MCM, TreeHist and SFP",
    "fig-after-vary-k": "count engine (10 runs), PEM, SPM, MCM, TreeHist and SFP",
}

#: where the book lists the paper's numbers (figures, equations, statements, sections)
PAPER_NUMBERS_FILE = Path("book") / "_ext" / "paper_numbers.yml"

#: our figures and tables that are not a paper figure: what the paper calls them
_OWN_TITLES = {
    "fig-oracles-variance-dprime": "eq. (1), (3)",
    "fig-pem-optimizer": "section 4.3",
    "fig-pem-prop1": "Proposition 1",
    "fig-after-vary-eps": "Figure 5's grid with TreeHist and SFP",
    "fig-after-vary-k": "Figure 6's grid with TreeHist and SFP",
}


@functools.lru_cache(maxsize=4)
def paper_numbers(path: str | None = None) -> dict[str, list[dict]]:
    """The book's list of the paper's numbers (``book/_ext/paper_numbers.yml``); empty lists if absent.

    Parameters
    ----------
    path : str, optional
        Another copy of the file (default: the one of the checkout this package is in, else the
        one under :func:`ldp.paths.repo_root`).

    Returns
    -------
    dict
        ``{"figures": [...], "equations": [...], "statements": [...], "sections": [...]}``, each
        entry a dict with ``number``, ``label``, ``title`` and, for figures and equations,
        ``book`` (the book's labels that show it).
    """
    if path is not None:
        file = Path(path)
    else:  # the checkout this package is in, else the project folder (an installed package run from one)
        here = Path(__file__).resolve().parents[3] / PAPER_NUMBERS_FILE
        file = here if here.is_file() else repo_root() / PAPER_NUMBERS_FILE
    data = yaml.safe_load(file.read_text(encoding="utf-8")) if file.is_file() else {}
    return {kind: list((data or {}).get(kind) or []) for kind in ("figures", "equations", "statements",
                                                                  "sections")}


def _paper_figure_titles() -> dict[str, str]:
    """The book's figure label -> "Figure N" for every reproduced paper figure."""
    out = {}
    for fig in paper_numbers()["figures"]:
        for label in (fig.get("book") or {}):
            out[label] = f"Figure {fig['number']}"
    return out


def _paper_labels() -> dict[str, str]:
    """LaTeX label -> the paper's number ("5", "7(b)", "(3)"), sub-figures included."""
    out = {}
    for fig in paper_numbers()["figures"]:
        if fig.get("label"):
            out[fig["label"]] = str(fig["number"])
    for eq in paper_numbers()["equations"]:
        if eq.get("label"):
            out[eq["label"]] = f"({eq['number']})"
    return out | _SUBFIGURE_LABELS


#: the sub-figure labels the quotes cite (paper_numbers.yml lists panels by letter, not by label)
_SUBFIGURE_LABELS = {"subfig:eval_eps_synthesizeexponential_thres": "7(a)",
                     "subfig:eval_k_synthesize_exponential_thres": "7(b)",
                     "subfig:eval_k_synthesize_exponential_thres_e4": "7(c)", "fig:eval_improve": "8(a)",
                     "fig:eval_s": "8(b)", "fig:eval_dist": "8(c)"}

#: the paper's number of each of our figures ("Figure 5"), or what the paper calls what it shows
FIGURE_TITLES = {**_OWN_TITLES, **_paper_figure_titles()}

_MACROS = {r"\itergroup": "PEM", r"\hash": "MCM", r"\spm": "SPM", r"\rappor": "SPM", r"\fone": "F1",
           r"\ncr": "NCR", r"\olh": "OLH", r"\grr": "GRR", r"\var": "Var", r"\rap": "RAPPOR", r"\blh": "BLH"}


_LABELS = _paper_labels()


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A re.sub replacement that inserts ``text`` as it is (no backslash escapes)."""
    return lambda _match: text


def display_quote(quote: str) -> str:
    """A quote as the paper prints it: macros expanded (``\\itergroup`` -> PEM), references numbered."""
    pieces = quote.split("$")
    for i, piece in enumerate(pieces):
        for macro, text in sorted(_MACROS.items(), key=lambda kv: -len(kv[0])):
            # outside math: the word and a space (\xspace); inside math: upright letters
            repl = text + " " if i % 2 == 0 else rf"\mathsf{{{text}}}"
            piece = re.sub(re.escape(macro) + r"(?![A-Za-z])" + (r"\s?" if i % 2 == 0 else ""),
                           _literal(repl), piece)
        pieces[i] = piece
    out = "$".join(pieces)
    out = re.sub(r"~?\\(?:eq)?ref\{([^}]*)\}", lambda m: " " + _LABELS.get(m.group(1), "?"), out)
    out = re.sub(r"\s+([,.;:)])", r"\1", out)
    return re.sub(r"\s+", " ", out).strip()


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and how it is decided.

    Attributes
    ----------
    id : str
        Stable identifier, e.g. ``"fig5-pem-best"``.
    section : str
        The paper's section, e.g. ``"6.2.1"`` or ``"Appendix"``.
    ref : str
        The figure, equation or statement as the paper numbers it.
    quote : str
        A short verbatim quote of the paper's LaTeX source.
    paper : str
        What the paper says, in a few words (plain text).
    tested : str
        What we test, in a few words.
    measure : callable
        ``measure(store) -> DataFrame | Measurement``; raises
        :class:`~.results.MissingResult` / :class:`MissingInput` (inputs
        absent) or :class:`NotCovered` (the run's grid leaves out the claim's
        point).
    rule : ldp.reporting.rules.Rule
        The decision rule with its parameters.
    chapter : str
        The chapter (notebook) that measures it.
    figure : str or None
        The label of the figure that shows it, if any.
    inputs : tuple of str
        ``"figure:NAME"`` and ``"table:CHAPTER/NAME"`` it reads.
    stand_in : tuple of str
        Keys of :data:`STAND_INS` it rests on.
    stand_in_decides : bool
        ``False``: the stand-in cannot decide this claim, the verdict is "not
        testable here" whatever the numbers.
    interpretation : tuple of str
        Anchors of ``book/interpretation.md`` (our readings it rests on).
    setting : mapping
        Chapter parameters the claim needs: name -> value, or -> tuple of
        values the parameter's list must contain.
    note : str
        A remark shown with the claim.
    ours : bool
        ``True`` for a claim of ours (chapter 08, after PEM), not the paper's.
    """

    id: str
    section: str
    ref: str
    quote: str
    paper: str
    tested: str
    measure: Callable[[ResultStore], Any]
    rule: R.Rule
    chapter: str
    figure: str | None = None
    inputs: tuple[str, ...] = ()
    stand_in: tuple[str, ...] = ()
    stand_in_decides: bool = True
    interpretation: tuple[str, ...] = ()
    setting: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    ours: bool = False


# =========================================================================== #
# helpers: reading the saved tables
# =========================================================================== #
MIN_VAR_RUNS = 3  # Figure 9: a point needs this many runs that found a heavy hitter
K_FIXED = 16  # k of Figures 5, 7(a), 8 and 9 (section 6); the SE floor of Figures 7 and 8 uses it too
_METRIC = {"f1": "F1", "ncr": "NCR"}
_XNAME = {"epsilon": "ε", "k": "k", "threshold": "θ"}
OTHERS = ("MCM", "SPM")


def _g(x) -> str:
    return f"{float(x):g}"


def _require(values, wanted, what: str) -> None:
    """NotCovered unless every wanted value is among ``values`` (floats compared with a tolerance)."""
    have = np.asarray(pd.unique(pd.Series(values).dropna()), dtype=float)
    for w in np.atleast_1d(wanted):
        if not np.any(np.isclose(have, float(w), rtol=1e-9, atol=1e-12)):
            raise NotCovered(f"{what} = {_g(w)} is not among this run's values "
                             f"({', '.join(_g(v) for v in sorted(have)) or 'none'})")


def _score_se(std, runs, k) -> np.ndarray:
    """Standard error of a mean F1 / NCR over ``runs`` runs, floored at one heavy hitter of ``k`` in one run.

    Without the floor a point where every run scored the same (std 0) would
    count as exact, and any difference from it as infinitely many standard errors.
    """
    runs = np.asarray(runs, dtype=float).clip(min=1)
    sem = np.asarray(std, dtype=float) / np.sqrt(runs)
    return np.maximum(np.nan_to_num(sem, nan=0.0), 1.0 / (np.asarray(k, dtype=float) * runs))


def _eval_points(store: ResultStore, name: str) -> pd.DataFrame:
    """Figure 5 or 6 data with the standard error of each mean (:func:`_score_se`)."""
    df = store.figure(name).copy()
    df["se"] = _score_se(df["std"], df["runs"], df["k"] if "k" in df.columns else K_FIXED)
    return df


def _aol_note(df: pd.DataFrame) -> str:
    return "" if "AOL" in set(df["dataset"]) else "AOL is not in this build (its data file is absent)"


def _pem_vs_best_other(df: pd.DataFrame, x: str, *, metrics=("f1", "ncr"), datasets=None,
                       others: Sequence[str] = OTHERS) -> pd.DataFrame:
    """One row per (data set, metric, x): PEM against the best of ``others`` (MCM and SPM by default)."""
    rows = []
    sub = df[df["metric"].isin(metrics)]
    if datasets is not None:
        sub = sub[sub["dataset"].isin(datasets)]
    for (ds, metric, xv), g in sub.groupby(["dataset", "metric", x], sort=False):
        g = g.set_index("protocol")
        if "PEM" not in g.index or not set(others) & set(g.index):
            continue
        rivals = g.loc[[p for p in others if p in g.index]]
        best = rivals["mean"].idxmax()
        rows.append({"point": f"{ds}, {_METRIC[metric]}, {_XNAME[x]} = {_g(xv)}", "dataset": ds, "metric": metric,
                     "x": float(xv), "a": g.loc["PEM", "mean"], "se_a": g.loc["PEM", "se"],
                     "b": rivals.loc[best, "mean"], "se_b": rivals.loc[best, "se"],
                     "others_min": rivals["mean"].min(), "best_other": best})
    return pd.DataFrame(rows, columns=["point", "dataset", "metric", "x", "a", "se_a", "b", "se_b", "others_min",
                                       "best_other"])


def _series(df: pd.DataFrame, series_cols, x: str, y: str, se: str) -> pd.DataFrame:
    if df.empty:  # nothing to decide on: the rule says so
        return pd.DataFrame(columns=["series", "x", "y", "se"])
    out = df.assign(series=df[list(series_cols)].astype(str).agg(", ".join, axis=1))
    return out.rename(columns={x: "x", y: "y", se: "se"})[["series", "x", "y", "se"]]


def _table(store: ResultStore, chapter: str, name: str) -> pd.DataFrame:
    return store.load(chapter, name)


def _quantity(store: ResultStore, name: str) -> float:
    t = _table(store, "01_frequency_oracles", "oracle-examples").set_index("quantity")["value"]
    if name not in t.index:
        raise MissingInput(f"01_frequency_oracles/oracle-examples has no quantity {name!r}")
    return float(t.loc[name])


def _one(point: str, value: float, target: float) -> pd.DataFrame:
    return pd.DataFrame({"point": [point], "value": [value], "target": [target]})



def _m_not_run(reason: str):
    def measure(store):
        raise MissingInput(reason)
    return measure


# =========================================================================== #
# the registry
# =========================================================================== #
_EVAL_SETTING = {"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20}
_MORE_SETTING = {"n_users": 1_000_000, "m_bits": 64, "query_limit": 2 ** 20}
_SYN = "1-exponential-synthetic-set-section-61"
_URL = "3-url-set-section-61-calibrated-stand-in"
_AOL = "4-aol-section-61"
_SPM = "spm-section-33-with-section-61s-improvements"
_MCM = "mcm-section-34-with-section-61s-improvements"
_GRIDS = "experiment-settings-the-paper-does-not-state"
_THRESH = "threshold-mode-section-623"
_OPT = "3-optimizer-section-43"
_COMP = "2-zero-frequency-competitors-competitorspaper-or-lower"
_SLOTS = "1-threshold-rank-in-eq-5-slotstext-default-vs-formula"
_ZIPF = "2-zipf-and-zipf-20-section-5"
_F1_TOL = R.WithinTolerance(R.F1_TOL, "an F1 the text quotes")
_PRINTED = "half a unit of the printed digit"
_ALL_METHODS = ("url", "mcm", "spm")

