"""The files the claims become: the book's generated pages, the evidence data, a rerun's claims table.

A book build (:func:`ldp.rerun.build.stage` calls :func:`write_book_report` once the
notebooks ran) evaluates every claim against the build's
:class:`~ldp.reporting.results.ResultStore` and writes, atomically, into
``_generated/report/``: ``report.md`` (included by ``book/reproduction.md``),
``scorecard.md`` (at the top of ``book/intro.md``), ``claims.json`` (every row,
:func:`claims_json`, which the Sphinx extension ``book/_ext/ldp_evidence.py`` turns
into an evidence box under each of the paper's figures), ``claims.csv`` (the tidy
table of :func:`~ldp.reporting.report.evaluate`) and ``evidence/<figure>.md``.
A rerun (:func:`ldp.rerun.run.rerun` calls :func:`write_rerun_report`) gets
``claims.csv`` and ``claims.md`` in its folder, with only the claims its chapter
measures, those its parameters leave out marked "not covered by this run's parameters".
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..paths import atomic_path, generated_dir
from .claims import Registry, display_quote
from .report import caret_math, evaluate, group_label, render_evidence, render_report, render_scorecard, verdict_counts
from .results import MODES, ResultStore

__all__ = ["REPORT_DIR", "CLAIMS_JSON", "claims_json", "write_outputs", "write_book_report", "write_rerun_report"]

#: the folder under ``_generated/`` the book's generated report pages go to
REPORT_DIR = "report"
#: the evidence data the Sphinx extension reads (under ``_generated/report/``)
CLAIMS_JSON = "claims.json"
#: the fields of each row of ``claims.json``
_JSON_FIELDS = ("id", "section", "ref", "paper", "tested", "measured", "verdict", "explanation", "note", "figure",
                "chapter", "covered", "ours")


def _plain(value):
    """A JSON-ready scalar (NaN -> None, numpy -> Python)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def claims_json(table: pd.DataFrame, mode: str | None) -> dict:
    """The evaluated claims as the evidence extension reads them.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~ldp.reporting.report.evaluate`'s table.
    mode : {"full", "quick", "rerun", None}
        The build mode (a quick build's boxes carry the small-sample banner).

    Returns
    -------
    dict
        ``{"mode", "counts", "figures": {label: the paper's number}, "rows": [...]}``; each row has
        :data:`_JSON_FIELDS`, ``quote`` as the paper prints it (:func:`display_quote`) and ``label``,
        the report's anchor of its group.
    """
    rows = []
    for _, r in table.iterrows():
        row = {k: _plain(r[k]) for k in _JSON_FIELDS if k in r.index}
        for k in ("paper", "measured", "explanation", "note", "ref"):  # x^y as math, as on the report page
            if isinstance(row.get(k), str):
                row[k] = caret_math(row[k])
        row["quote"] = display_quote(r["quote"])
        row["label"] = group_label(r)
        rows.append(row)
    return {"mode": mode, "counts": verdict_counts(table),
            "figures": {f: t or f for f, t in sorted(zip(table["figure"], table["figure_title"])) if f},
            "rows": rows}


def _write(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_outputs(store: ResultStore, registry: Registry, folder: str | Path | None = None, *, mode: str | None = None,
                  chapters: Iterable[str] | None = None) -> dict[str, Path]:
    """Evaluate every claim against ``store`` and write the renderings for the book, atomically.

    Writes ``claims.csv``, ``claims.json``, ``report.md``, ``scorecard.md``
    and one ``evidence/<figure>.md`` per figure that measures a claim into
    ``folder`` (default ``<store>/report``).

    Parameters
    ----------
    store : ResultStore
        The results of a build mode or a rerun.
    registry : Registry
        The claims (:data:`ldp.figures.REGISTRY`).
    folder : path-like, optional
        Where to write.
    mode : {"full", "quick", "rerun"}, optional
        Default: the store's mode (a quick build's pages carry the banner).
    chapters : iterable of str, optional
        Only the claims of these chapters.

    Returns
    -------
    dict
        The written paths by name (``"report.md"``, ``"evidence/fig-eval-vary-eps.md"``, ...).
    """
    mode = store.mode if mode is None else mode
    folder = Path(folder) if folder is not None else store.root / REPORT_DIR
    table = evaluate(store, registry, chapters=chapters)
    out = {}
    with atomic_path(folder / "claims.csv") as tmp:
        table.to_csv(tmp, index=False)
    out["claims.csv"] = folder / "claims.csv"
    out[CLAIMS_JSON] = _write(folder / CLAIMS_JSON,
                              json.dumps(claims_json(table, mode), indent=1, ensure_ascii=False) + "\n")
    out["report.md"] = _write(folder / "report.md", render_report(table, mode))
    out["scorecard.md"] = _write(folder / "scorecard.md", render_scorecard(table, mode, registry))
    for fig in sorted(f for f in table["figure"].unique() if f):
        out[f"evidence/{fig}.md"] = _write(folder / "evidence" / f"{fig}.md", render_evidence(table, fig, mode))
    return out


def write_book_report(mode: str, registry: Registry, generated: str | Path | None = None) -> dict[str, Path]:
    """The claims of a book build, for the book: ``<generated>/report/`` (see the module's docstring).

    Parameters
    ----------
    mode : {"full", "quick"}
        The build's mode; its store is ``<generated>/cache/<mode>``.
    registry : Registry
        The claims (:data:`ldp.figures.REGISTRY`).
    generated : path-like, optional
        Default :func:`ldp.paths.generated_dir`.

    Returns
    -------
    dict
        The written paths by name.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} must be one of {MODES}")
    base = Path(generated) if generated is not None else generated_dir()
    return write_outputs(ResultStore.for_build(mode, base), registry, base / REPORT_DIR, mode=mode)


def write_rerun_report(folder: str | Path, chapter: str, registry: Registry) -> dict[str, Path]:
    """The claims table of a rerun, in its folder: ``claims.csv`` and ``claims.md``.

    Only the claims ``chapter`` measures; the run's ``parameters.json`` (every
    value it ran with) decides which of them its setting still covers.

    Parameters
    ----------
    folder : path-like
        The run's folder (``my-runs/NAME-HASH``, or ``--out``), holding
        ``figures/`` and ``parameters.json``.
    chapter : str
        The chapter that ran, e.g. ``"06_evaluation"``.
    registry : Registry
        The claims (:data:`ldp.figures.REGISTRY`).

    Returns
    -------
    dict
        ``{"claims.csv": path, "claims.md": path}``.
    """
    store = ResultStore.for_rerun(folder)
    params = store.root / "parameters.json"
    if params.is_file() and store.parameters(chapter) is None:  # a --out folder not named CHAPTER-HASH
        store.save_parameters(chapter, json.loads(params.read_text(encoding="utf-8")))
    table = evaluate(store, registry, chapters=[chapter])
    with atomic_path(store.root / "claims.csv") as tmp:
        table.to_csv(tmp, index=False)
    page = f"# Claims of this rerun of {chapter}\n\n" + render_report(table, "rerun")
    return {"claims.csv": store.root / "claims.csv", "claims.md": _write(store.root / "claims.md", page)}
