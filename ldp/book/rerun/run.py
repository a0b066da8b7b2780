"""The rerun command: one chapter with your values into its own folder, with an HTML copy.

Each run gets its own folder, by default ``my-runs/NAME-HASH/`` under the
repository root (``$LDP_RUNS_DIR`` or ``--out`` choose another), holding the
executed notebook ``NAME.ipynb`` with its figures shown inline, the same as
``NAME.html`` for a web browser, the figure files ``figures/*.svg|pdf``, the
parameters ``parameters.json``, papermill's log ``run.log`` and the claims the
chapter measures, decided on this run (``claims.csv``, ``claims.md``; see
:func:`ldp.book.pages.write_rerun_report`).  ``HASH`` is a
short hash of the notebook's name and all its parameter values, so the same
settings reuse the same folder.  Until a run has finished, its folder holds a
file ``INCOMPLETE`` saying why (running, failed, interrupted by Ctrl-C).

A run writes only into a folder of its own (:mod:`ldp.book.rerun.runfolder`):
a new or empty one, or one an earlier rerun made, recognised by the manifest
``rerun.json`` that records what that run wrote.  A rerun into such a folder
first removes the earlier run's files, those still exactly as it wrote them,
and nothing else; a folder holding anyone else's files where the run writes is
refused before any work.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import re
import shlex
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from ...paths import atomic_path, repo_root
from .execution import duration_text, ensure_kernel, execute
from .notebooks import find_notebook
from .parameters import resolve_parameters
from .runfolder import INCOMPLETE, MANIFEST, RunFolder, claim

__all__ = ["RUNS_DIR_ENV", "INCOMPLETE", "MANIFEST", "run_folder", "readable_markdown", "rerun", "command_line"]

#: environment variable for the folder that holds the runs' folders (default <root>/my-runs)
RUNS_DIR_ENV = "LDP_RUNS_DIR"


def _canonical(values: dict) -> str:
    return json.dumps(values, sort_keys=True, separators=(",", ":"))


def run_folder(nb_path: Path, values: dict, out: str | os.PathLike | None = None) -> Path:
    """``out``, else ``$LDP_RUNS_DIR`` or ``<root>/my-runs``, then ``NAME-HASH``.

    ``HASH`` is 10 hex digits of the SHA-256 of the notebook's name and all its
    parameter values: the same settings give the same folder.
    """
    if out is not None:
        return Path(out).expanduser().resolve()
    base = Path(os.environ.get(RUNS_DIR_ENV) or repo_root() / "my-runs").expanduser().resolve()
    digest = hashlib.sha256(f"{Path(nb_path).stem}\n{_canonical(values)}".encode()).hexdigest()[:10]
    return base / f"{Path(nb_path).stem}-{digest}"


_GLUE_ROLE = re.compile(r"\{glue(?::(text|md|any))?\}`([^`]+)`")
_FIGURE_BLOCK = re.compile(r"^```\{figure\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_RECORD = "application/papermill.record/"


def readable_markdown(nb):
    """The executed notebook with its glued values pasted into the markdown (for the HTML copy).

    Outside Jupyter Book, MyST roles stay raw text.  This replaces
    ``{glue:text}`key:fmt` `` and ``{glue:md}`key` `` by the values this run glued
    (formatted as myst-nb does), and each ``{figure}`` block by its caption: the
    figure itself is shown right above, in the output of the cell that saved it.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook; changed in place.

    Returns
    -------
    nbformat.NotebookNode
    """
    from myst_nb.core.variables import format_plain_text

    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = {k.removeprefix(_RECORD): v for k, v in out.get("data", {}).items()}

    def paste(m: re.Match) -> str:
        kind, content = m[1] or "any", m[2]
        key, _, spec = content.rpartition(":") if ":" in content else (content, "", "")
        data = glued.get(key)
        if data is None or "text/plain" not in data:
            return m[0]
        if kind == "md":
            return data.get("text/markdown", data["text/plain"])
        try:
            return format_plain_text(data["text/plain"], spec)
        except (ValueError, TypeError):
            return m[0]

    def caption(m: re.Match) -> str:
        lines = m[1].strip("\n").splitlines()
        name = next((ln.split(":", 2)[2].strip() for ln in lines if ln.startswith(":name:")), "")
        text = " ".join(ln.strip() for ln in lines if not ln.startswith(":")).strip()
        return f"*Figure* `{name}` (shown above): {text}\n"

    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _GLUE_ROLE.sub(paste, _FIGURE_BLOCK.sub(caption, cell.source))
    return nb


#: what a rerun imports once its notebook has run: the claims registry (every chapter's code), nbconvert and
#: myst-nb's glue formatting; about 2 s of imports
_AFTER_THE_RUN = ("ldp.book.chapters", "ldp.book.pages", "nbconvert", "myst_nb.core.variables")


def _import_meanwhile(modules: Sequence[str]) -> threading.Thread:
    """Import ``modules`` in a thread while the notebook runs in processes of its own.

    The run's end is then not kept waiting for them.  A module that fails to import here is imported again
    where it is needed, and fails there, with its error.
    """
    def work() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - reported by the import where the module is used
                return

    thread = threading.Thread(target=work, name="ldp-rerun-imports", daemon=True)
    thread.start()
    return thread


def _write_html(executed: Path, target: Path) -> bool:
    """The executed notebook as one HTML file (figures embedded) for any web browser."""
    try:
        import nbconvert
        import nbformat
    except ImportError:
        return False
    exporter = nbconvert.HTMLExporter()
    with warnings.catch_warnings():  # glue's records have no HTML form; they are not shown anyway
        warnings.filterwarnings("ignore", message="Your element with mimetype")
        body, _ = exporter.from_notebook_node(readable_markdown(nbformat.read(executed, as_version=4)))
    local = repo_root() / "book" / "_static" / "mathjax" / "tex-svg-full.js"  # make mathjax
    cdn = f'<script src="{exporter.mathjax_url}"> </script>'
    if local.is_file() and cdn in body:  # typeset the math offline, with the book's MathJax 3
        body = body.replace(cdn, "<script>window.MathJax = {tex: {inlineMath: [['$', '$'], ['\\\\(', "
                                 "'\\\\)']], processEscapes: true}};</script>\n"
                                 f'<script src="{local.as_uri()}"></script>')
    with atomic_path(target) as tmp:
        tmp.write_text(body, encoding="utf-8")
    return True


def _display_path(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it, else absolute."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def rerun(notebook: str, *, sets: dict[str, str] | None = None, quick: bool = False,
          out: str | os.PathLike | None = None, interval: float = 10.0,
          echo: Callable[[str], None] = print) -> tuple[bool, Path]:
    """Run one chapter notebook with the given parameter values into its own folder.

    Parameters
    ----------
    notebook : str
        Chapter number or name (see :func:`find_notebook`).
    sets : dict of str to str, optional
        Values as typed, ``NAME -> VALUE`` (see :func:`resolve_parameters`).
    quick : bool
        Quick values for every parameter not in ``sets``.
    out : path, optional
        The run's folder (default: see :func:`run_folder`).
    interval : float
        Seconds between progress lines.
    echo : callable
        Where progress and the summary go.

    Returns
    -------
    (ok, folder) : tuple of (bool, pathlib.Path)

    Raises
    ------
    NotebookError, ParameterError
        Before anything runs: not a source checkout, an unknown notebook, an
        unknown parameter, a value of the wrong type or outside the range the
        notebook states.
    RunFolderError
        Before anything runs: the folder is not one a rerun may write into (a
        folder holding files no rerun wrote, a file where the run writes that
        no rerun wrote or that changed since, a folder another rerun holds;
        see :mod:`ldp.book.rerun.runfolder`).  Nothing is written or removed.
    KeyboardInterrupt
        Ctrl-C: the kernel and every process of the run are stopped first
        (:func:`ldp.book.rerun.execution.execute`).

    Notes
    -----
    Until the run has finished and everything is written, the folder holds
    a file :data:`INCOMPLETE` saying why (running, failed, interrupted); a
    later rerun into the folder removes the earlier run's files first (those
    its manifest records, still as it wrote them), and no other file.
    """
    nb_path = find_notebook(notebook)
    values, injected = resolve_parameters(nb_path, sets, quick=quick)
    with claim(run_folder(nb_path, values, out), nb_path.stem) as run:  # refuses before any work
        run.mark("running: started " + time.strftime("%Y-%m-%d %H:%M:%S"))
        try:
            return _run(run, nb_path, values, injected, mine={n: values[n] for n in (sets or {})}, quick=quick,
                        interval=interval, echo=echo)
        except Exception as exc:  # the folder says so (Ctrl-C is marked where it is caught)
            run.mark(f"failed: {type(exc).__name__}: {exc}")
            raise


def _run(run: RunFolder, nb_path: Path, values: dict, injected: dict, *, mine: dict, quick: bool,
         interval: float, echo: Callable[[str], None]) -> tuple[bool, Path]:
    """The run itself, in its claimed folder: parameters, the notebook, its HTML copy and its claims."""
    folder, mark = run.path, run.mark
    executed = folder / nb_path.name
    figures = folder / "figures"
    with atomic_path(folder / "parameters.json") as tmp:
        tmp.write_text(json.dumps(values, indent=1) + "\n", encoding="utf-8")
    from ..claims.store import ResultStore  # the claims a chapter glues read what it ran with

    ResultStore.for_rerun(folder).save_parameters(nb_path.stem, values)
    run.record(ended=False)  # what is written so far, should the run be killed outright
    quicks = {n: v for n, v in injected.items() if n != "quick" and n not in mine}
    echo(f"[rerun] {nb_path.stem}{' (quick)' if quick else ''} -> {_display_path(folder)}/")
    echo(f"[rerun]   your values: {', '.join(f'{n}={v!r}' for n, v in mine.items()) or 'none'}")
    if quick:
        echo(f"[rerun]   quick values: {', '.join(f'{n}={v!r}' for n, v in quicks.items()) or 'none'}")
    echo("[rerun]   the others: the notebook's defaults (python -m ldp rerun "
         f"{nb_path.stem} --params lists them)")
    ensure_kernel()
    imports = _import_meanwhile(_AFTER_THE_RUN)
    t0 = time.monotonic()
    try:
        ok, report = execute(nb_path, executed, injected, figures, folder / "run.log", show_figures=True,
                             progress=lambda s: echo(f"[rerun]   {nb_path.stem}: {s}"), interval=interval,
                             isolate=True)
    except KeyboardInterrupt:
        mark(f"interrupted (Ctrl-C) after {duration_text(time.monotonic() - t0)}; the kernel and its "
             f"processes were stopped")
        echo(f"[rerun] {nb_path.stem} interrupted; {_display_path(folder)}/ is marked {INCOMPLETE} (a rerun into "
             f"it starts clean)")
        raise
    seconds = time.monotonic() - t0
    imports.join()
    html = folder / f"{nb_path.stem}.html"
    has_html = executed.is_file() and _write_html(executed, html)
    if not ok:
        mark(f"failed after {duration_text(seconds)}:\n{report}")
        echo(f"[rerun] {nb_path.stem} FAILED after {duration_text(seconds)}:\n{report}")
        echo(f"[rerun] log: {_display_path(folder / 'run.log')}")
        return False, folder
    from ..chapters import REGISTRY  # here: the claims read the run
    from ..pages import write_rerun_report

    write_rerun_report(folder, nb_path.stem, REGISTRY)
    (folder / INCOMPLETE).unlink(missing_ok=True)  # last: everything above is in place
    from ..plotting.narrow import NARROW_SUFFIX  # here: the command line starts without matplotlib

    n_fig = len({f.stem.removesuffix(NARROW_SUFFIX) for f in figures.glob("*") if f.is_file()})  # not the phone layouts
    echo(f"[rerun] {nb_path.stem}: done in {duration_text(seconds)}; {n_fig} figure(s). In {_display_path(folder)}/:")
    echo(f"[rerun]   {nb_path.stem}.html   the executed notebook with its figures: open in a web browser")
    echo(f"[rerun]   {nb_path.name}  the same as a notebook; figures/  SVG + PDF; parameters.json; run.log")
    echo(f"[rerun]   claims.md, claims.csv  the paper's claims this chapter measures, decided on this run; "
         f"{MANIFEST}  what this run wrote")
    if not has_html:  # pragma: no cover - nbconvert is in requirements.txt
        html.unlink(missing_ok=True)
    return True, folder


def command_line(nb_path: Path, sets: Sequence[str], *, quick: bool = True) -> str:
    """The documented command that reruns ``nb_path`` with ``sets`` (shell-quoted)."""
    stem = Path(nb_path).stem
    number = re.match(r"(\d+)_", stem)
    words = [".venv/bin/python", "-m", "ldp", "rerun", number[1] if number else stem]
    if quick:
        words.append("--quick")
    for s in sets:
        words += ["--set", s]
    return shlex.join(words)
