"""The book build: execute every chapter notebook in a mode (full or quick), cache, stage, parameter page.

``scripts/run_notebooks.py`` (``make book``) is the command line of this
module.  Each notebook is executed with papermill (:func:`ldp.book.rerun.execute`)
into a per-mode cache ``_generated/cache/{full,quick}/``; a notebook whose
inputs did not change since its last successful run in the same mode is not
executed again (:func:`cache_key`).  :func:`stage` copies the mode's executed
notebooks and figures to the paths ``_toc.yml`` and the ``{figure}``
directives point at, and writes the claims of the build (``_generated/report/``,
:func:`ldp.book.pages.write_book_report`); :func:`write_params_page` writes ``_generated/params.md``,
the rerun commands and parameter tables that ``book/rerun.md`` includes.
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ...datasets import data_folder
from ...paths import atomic_path, generated_dir, repo_root, source_digest
from .execution import ensure_kernel, execute
from .notebooks import NotebookError, notebook_title, rerun_example, source_notebooks
from .parameters import ParameterError, notebook_parameters, parse_assignments, quick_parameters, resolve_parameters
from .run import command_line

__all__ = ["PINS", "mode_parameters", "cache_key", "Result", "run_all", "stage", "params_markdown",
           "write_params_page", "run_facts"]

#: files besides the ldp sources whose change invalidates every cached execution (the chapter on
#: scale plots the committed output of benchmarks/bench_scale.py)
PINS = ("requirements.txt", "pyproject.toml", "benchmarks/results/bench_scale.csv")


def mode_parameters(nb_path: Path, quick: bool) -> dict:
    """What papermill is given: nothing for the paper's settings, the quick values in quick mode."""
    return quick_parameters(nb_path) if quick else {}


def _data_listing() -> list[tuple[str, int]]:
    """The files of the one folder the data loaders read (:func:`ldp.datasets.data_folder`), with sizes."""
    folder = data_folder()
    if folder is None:
        return []
    out = [(str(folder), -1)]
    if folder.is_dir():
        out += [(str(p), p.stat().st_size) for p in sorted(folder.iterdir()) if p.is_file()]
    return out


def cache_key(nb_path: Path, params: dict) -> str:
    """Hash of everything an execution depends on (notebook, ldp sources, pins, data, parameters).

    The key of the execution cache, a manifest of our own (``manifest.json``
    per mode): jupyter-cache (myst-nb's cache mode) keys an execution by the
    notebook's code cells alone, so a change to ``ldp/``, the pins, the data or
    the papermill parameters would not re-execute a chapter.

    Parameters
    ----------
    nb_path : pathlib.Path
        The source notebook.
    params : dict
        What papermill is given (:func:`mode_parameters`).

    Returns
    -------
    str
        64 hex digits.
    """
    h = hashlib.sha256()
    h.update(nb_path.read_bytes())
    h.update(source_digest().encode())  # the ldp package (ldp.paths.source_digest)
    for name in PINS:
        h.update(name.encode())
        pin = repo_root() / name
        h.update(pin.read_bytes() if pin.is_file() else b"(missing)")
    h.update(json.dumps(params, sort_keys=True).encode())
    h.update(json.dumps(_data_listing()).encode())
    return h.hexdigest()


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_facts() -> dict:
    """Where and from what a chapter ran, for the manifest (the artifact appendix reads them).

    Returns
    -------
    dict
        ``commit`` (``git rev-parse HEAD``, ``+modified`` when tracked files changed; None without
        git), ``cpus`` (:func:`os.cpu_count`), ``cpu``, ``memory_gb``, ``system``, ``python`` and
        ``load`` (the 1-minute load average when the run finished: other work sharing the cores).
    """
    root = repo_root()
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip() or None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        commit = commit and commit + ("+modified" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        commit = None
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        memory = None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"commit": commit, "cpus": os.cpu_count(), "cpu": _cpu_model(), "memory_gb": memory,
            "system": platform.platform(), "python": platform.python_version(),
            "load": None if load is None else round(load, 2)}


@dataclass
class Result:
    """One notebook's outcome: ok, seconds, served from the cache, the error report."""

    name: str
    ok: bool
    seconds: float
    cached: bool
    message: str = ""


def run_all(quick: bool, jobs: int, force: bool, only: list[str] | None,
            interval: float = 10.0) -> list[Result]:
    """Execute the notebooks whose inputs changed; print progress every ``interval`` seconds."""
    mode = "quick" if quick else "full"
    cache = generated_dir() / "cache" / mode
    manifest_path = cache / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}

    notebooks = source_notebooks(only)
    errors, params, values = [], {}, {}
    for nb in notebooks:  # every notebook's parameters (and quick marks) before running any
        try:
            notebook_parameters(nb)
            params[nb.stem] = mode_parameters(nb, quick)
            # every value the chapter runs with (defaults < quick values < given), for the claims
            values[nb.stem] = {**resolve_parameters(nb, quick=quick)[0], **params[nb.stem]}
        except (NotebookError, ValueError) as exc:
            errors.append(str(exc))
    if errors:
        raise NotebookError("\n".join(errors))
    from ..claims.store import ResultStore  # here: the claims a chapter glues read what it ran with

    store = ResultStore.for_build(mode)
    for name, chapter_values in values.items():
        store.save_parameters(name, chapter_values)

    todo, results = [], []
    for nb in notebooks:
        key = cache_key(nb, params[nb.stem])
        entry = manifest.get(nb.stem)
        done = cache / "notebooks" / nb.name
        if not force and entry and entry.get("key") == key and done.is_file():
            results.append(Result(nb.stem, True, entry.get("seconds", 0.0), True))
            entry["values"] = values[nb.stem]
        else:
            todo.append((nb, key))

    if todo:
        ensure_kernel()
    workers = max(1, min(jobs, len(todo)))
    threads = max(1, (os.cpu_count() or 1) // workers) if workers > 1 else None

    def one(item):
        nb, key = item
        t0 = time.perf_counter()
        ok, report = execute(
            nb, cache / "notebooks" / nb.name, params[nb.stem], cache / "figures",
            cache / "logs" / f"{nb.stem}.log", threads, interval=interval,
            progress=lambda line: print(f"[run_notebooks]   {nb.stem}: {line}", flush=True),
        )
        return nb, key, ok, time.perf_counter() - t0, report

    for nb, _ in todo:
        manifest.pop(nb.stem, None)
        for old in (store.tables / nb.stem).glob("*"):  # a chapter's tables are what its last run saved
            if old.is_file() and old.name != "parameters.json":
                old.unlink()
    print(f"[run_notebooks] mode={mode}: executing {len(todo)} notebook(s) "
          f"with {workers} worker(s), {len(results)} unchanged", flush=True)
    with cf.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(one, item) for item in todo]
        for future in cf.as_completed(futures):
            nb, key, ok, seconds, report = future.result()
            status = "ok" if ok else "FAILED"
            print(f"[run_notebooks]   {nb.stem}: {status} in {seconds:.1f} s", flush=True)
            results.append(Result(nb.stem, ok, seconds, False, report))
            if ok:
                manifest[nb.stem] = {"key": key, "seconds": round(seconds, 2), "params": params[nb.stem],
                                     "values": values[nb.stem], "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                     "ran_on": run_facts()}
                with atomic_path(manifest_path) as tmp:
                    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str))
    if manifest:  # the values of the chapters that were not re-executed
        with atomic_path(manifest_path) as tmp:
            tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str))
    return sorted(results, key=lambda r: r.name)


def stage(quick: bool) -> None:
    """Copy the mode's executed notebooks and figures to the paths the book uses; write the build's claims."""
    cache = generated_dir() / "cache" / ("quick" if quick else "full")
    for sub in ("notebooks", "figures"):
        target = generated_dir() / sub
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            shutil.rmtree(target)
        source = cache / sub
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.mkdir(parents=True)
    # a notebook removed from notebooks/ leaves the book (and the cache) too
    current = {p.stem for p in source_notebooks()}
    for folder in (generated_dir() / "notebooks", cache / "notebooks"):
        for path in folder.glob("*.ipynb"):
            if path.stem not in current:
                path.unlink()
    (generated_dir() / "MODE").write_text("quick\n" if quick else "full\n")
    # the claims of this build: report page, intro scorecard, evidence boxes (_generated/report/)
    from ..chapters import REGISTRY  # here: the claims read the build
    from ..pages import write_book_report

    write_book_report("quick" if quick else "full", REGISTRY)


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def params_markdown() -> str:
    """Markdown (MyST) with one section per notebook: a rerun command and the parameter table.

    The command sets the notebook's example values (metadata ``ldp.rerun_example``);
    ``tests/test_rerun.py`` runs every printed command.
    """
    out = [
        "<!-- Generated by scripts/run_notebooks.py from the notebooks' "
        "`parameters` cells. Do not edit. -->",
        "",
    ]
    for nb in source_notebooks():
        params = notebook_parameters(nb)
        example = rerun_example(nb)
        try:  # the example must be valid, or the page would print a command that fails
            resolve_parameters(nb, parse_assignments(example), quick=True)
        except ParameterError as exc:
            raise NotebookError(f"{nb.name}: metadata ldp.rerun_example: {exc}") from None
        out += [f"## {notebook_title(nb)}", ""]
        if not example:
            out += [f"Source: `notebooks/{nb.name}`."]
        else:
            out += [
                f"Source: `notebooks/{nb.name}`. A small run with a few values of your own (quick sizes "
                "for the others):",
                "",
                "```bash",
                command_line(nb, example),
                "```",
            ]
        out += [
            "",
            "| Parameter | Type | Default (paper setting) | Quick | Meaning |",
            "| --- | --- | --- | --- | --- |",
        ]
        for p in params.values():
            quick = f"`{_md_cell(p.quick_text)}`" if p.has_quick else ""
            allowed = f" (allowed: `{_md_cell(p.range_text)}`)" if p.range_text else ""
            out.append(f"| `{p.name}` | `{_md_cell(p.type)}` | `{_md_cell(p.default_text)}` | {quick} "
                       f"| {_md_cell(p.help)}{allowed} |")
        out.append("")
    if len(out) == 2:
        out.append("*No notebooks yet.*")
    return "\n".join(out) + "\n"


def write_params_page() -> Path:
    """Write ``_generated/params.md`` (:func:`params_markdown`), atomically."""
    path = generated_dir() / "params.md"
    with atomic_path(path) as tmp:
        tmp.write_text(params_markdown(), encoding="utf-8")
    return path

