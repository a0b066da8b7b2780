"""The book's generated pages, written: the claims decided once, rendered, and saved atomically.

A book build (:func:`ldp.book.rerun.build.stage` calls :func:`write_book_report` once the notebooks
ran) writes into ``_generated/report/``: ``report.md`` (:func:`ldp.book.report.render_report`, included by
``book/reproduction.md``), ``answer.md`` and ``gallery.md`` (:mod:`ldp.book.answer`) and ``scorecard.md``
(by ``book/intro.md``), ``claims.json`` (:func:`ldp.book.report.claims_json`) and ``claims.csv`` (the tidy
table of :func:`ldp.book.claims.evaluation`; the report page offers both for download).  A rerun
(:func:`ldp.book.rerun.run.rerun` calls :func:`write_rerun_report`) gets ``claims.csv`` and ``claims.md`` in
its folder, with only the claims its chapter measures.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..paths import atomic_path, generated_dir
from .answer import render_answer, render_gallery
from .claims.claim import Registry
from .claims.evaluation import evaluate
from .claims.store import MODES, ResultStore
from .report import CLAIMS_JSON, REPORT_DIR, claims_json, render_report, render_scorecard

__all__ = ["write_outputs", "write_book_report", "write_rerun_report"]


def _write(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_outputs(store: ResultStore, registry: Registry, folder: str | Path | None = None, *, mode: str | None = None,
                  chapters: Iterable[str] | None = None) -> dict[str, Path]:
    """Evaluate every claim against ``store`` and write the renderings for the book, atomically.

    Writes ``claims.csv``, ``claims.json``, ``report.md``, ``answer.md``, ``gallery.md`` and ``scorecard.md``
    into ``folder`` (default ``<store>/report``); the gallery shows the figures of ``<folder>/../figures``.

    Parameters
    ----------
    store : ResultStore
        The results of a build mode or a rerun.
    registry : Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`).
    folder : path-like, optional
        Where to write.
    mode : {"full", "quick", "rerun"}, optional
        Default: the store's mode (a quick build's pages carry the banner).
    chapters : iterable of str, optional
        Only the claims of these chapters.

    Returns
    -------
    dict
        The written paths by name (``"report.md"``, ...).
    """
    mode = store.mode if mode is None else mode
    folder = Path(folder) if folder is not None else store.root / REPORT_DIR
    table = evaluate(store, registry, chapters=chapters)
    with atomic_path(folder / "claims.csv") as tmp:
        table.to_csv(tmp, index=False)
    return {"claims.csv": folder / "claims.csv",
            CLAIMS_JSON: _write(folder / CLAIMS_JSON, json.dumps(claims_json(table, mode), indent=1,
                                                                ensure_ascii=False) + "\n"),
            "report.md": _write(folder / "report.md", render_report(table, mode)),
            "answer.md": _write(folder / "answer.md", render_answer(table, mode)),
            "gallery.md": _write(folder / "gallery.md", render_gallery(table, folder.parent / "figures")),
            "scorecard.md": _write(folder / "scorecard.md", render_scorecard(table, mode, registry))}


def write_book_report(mode: str, registry: Registry, generated: str | Path | None = None) -> dict[str, Path]:
    """The claims of a book build, for the book: ``<generated>/report/`` (see the module's docstring).

    Parameters
    ----------
    mode : {"full", "quick"}
        The build's mode; its store is ``<generated>/cache/<mode>``.
    registry : Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`).
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
        The claims (:data:`ldp.book.chapters.REGISTRY`).

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
