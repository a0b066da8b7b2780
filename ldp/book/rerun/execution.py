"""Executing a notebook with papermill: the ``ldp`` kernel, its environment, progress and error reports.

Shared by the book build (``scripts/run_notebooks.py``) and ``python -m ldp
rerun``.  While a notebook runs, :func:`execute` reports the cell being
executed and the runs done by :func:`ldp.experiments.run_grid`, which writes
them to the file named by ``$LDP_PROGRESS_FILE`` (:data:`ldp.paths.PROGRESS_ENV`).
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...paths import PROGRESS_ENV, SHOW_FIGURES_ENV, repo_root
from .notebooks import cell_source, read_notebook
from .parameters import ParameterError

__all__ = ["KERNEL_NAME", "KERNEL_DISPLAY_NAME", "SHOW_FIGURES_ENV", "PROGRESS_ENV", "venv_jupyter_dir",
           "ensure_kernel", "kernel_env", "papermill_command", "error_report", "duration_text", "execute",
           "stop_process_tree"]

#: name of the Jupyter kernel the notebooks run with (this environment's Python; :func:`ensure_kernel`)
KERNEL_NAME = "ldp"
#: the kernel's name as Jupyter's menus show it
KERNEL_DISPLAY_NAME = "Python 3 (ldp)"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_LINE = re.compile(r"Executing Cell (\d+)")


def venv_jupyter_dir() -> Path:
    """``<sys.prefix>/share/jupyter``: where this interpreter's kernelspecs are (``--sys-prefix``)."""
    return Path(sys.prefix) / "share" / "jupyter"


def ensure_kernel() -> Path:
    """Install the ``ldp`` kernelspec into this interpreter's prefix if missing: THE kernel installation.

    The spec's ``argv[0]`` is this interpreter (``.venv/bin/python``), so the
    notebooks run with the project's pinned packages and the editable ``ldp``.
    ``make setup`` (through ``python -m ldp kernel``), the book build and
    reruns all call this; it installs with :func:`ipykernel.kernelspec.install`
    (``--sys-prefix``).

    Returns
    -------
    pathlib.Path
        The kernelspec's folder.
    """
    folder = venv_jupyter_dir() / "kernels" / KERNEL_NAME
    spec = folder / "kernel.json"
    if spec.is_file() and Path(json.loads(spec.read_text())["argv"][0]) == Path(sys.executable):
        return folder
    from ipykernel.kernelspec import install

    return Path(install(kernel_name=KERNEL_NAME, display_name=KERNEL_DISPLAY_NAME, prefix=sys.prefix))


def kernel_env(figure_dir: Path, threads: int | None = None, *, show_figures: bool = False) -> dict[str, str]:
    """Environment for a papermill run: repository paths, kernel lookup, figure folder."""
    env = dict(os.environ)
    env["LDP_ROOT"] = str(repo_root())
    env["LDP_FIGURE_DIR"] = str(figure_dir)
    # this venv's kernelspecs first, so `ldp` cannot be shadowed by a user-level one
    env["JUPYTER_PATH"] = os.pathsep.join(
        [str(venv_jupyter_dir())] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p])
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    if show_figures:
        env[SHOW_FIGURES_ENV] = "1"
    else:
        env.pop(SHOW_FIGURES_ENV, None)
    if threads is not None:  # avoid oversubscription when notebooks run side by side
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
            env.setdefault(var, str(threads))
    return env


def _yaml_parameters(params: dict) -> str:
    """Parameters as YAML for papermill's ``-y`` (round-trips every int, float, str, bool, list)."""
    import yaml

    text = yaml.safe_dump(params, default_flow_style=True, width=1 << 30).strip()
    if yaml.safe_load(text) != params:  # pragma: no cover - safe_dump round-trips these types
        raise ParameterError(f"cannot pass {params!r} to papermill exactly")
    return text


def papermill_command(src: Path, dst: Path, params: dict) -> list[str]:
    """The papermill command line (parameters as YAML, cell-by-cell log on stdout)."""
    cmd = [sys.executable, "-m", "papermill", str(src), str(dst), "--kernel", KERNEL_NAME,
           "--language", "python", "--cwd", str(repo_root()), "--no-progress-bar",
           "--log-level", "INFO", "--log-output"]
    if params:
        cmd += ["-y", _yaml_parameters(params)]
    return cmd


def error_report(executed: Path, log: str) -> str:
    """Describe the failing cell of a partially executed notebook."""
    lines = []
    try:
        nb = read_notebook(executed)
    except (OSError, ValueError):
        nb = {"cells": []}
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                lines.append(f"--- cell {i} (execution_count {cell.get('execution_count')}):")
                lines.append(cell_source(cell))
                lines.append("--- traceback:")
                tb = _ANSI.sub("", "\n".join(out.get("traceback", []))).rstrip()
                lines.append(tb)
                last = f"{out.get('ename')}: {out.get('evalue')}"
                if not tb.endswith(last):
                    lines.append(last)
    if not lines:  # e.g. kernel died or papermill itself failed
        tail = _ANSI.sub("", log).strip().splitlines()[-60:]
        lines = ["--- papermill output (last lines):", *tail]
    return "\n".join(lines)


def duration_text(seconds: float) -> str:
    """``"1 min 20 s"`` or ``"45 s"``."""
    seconds = int(seconds)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def _grid_progress(path: Path) -> str:
    """``grid 3: 120/360 runs`` from run_grid's progress file ('' before the first grid)."""
    try:
        state = json.loads(path.read_text())
        return f"grid {state['grid']}: {state['done']}/{state['total']} runs"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


class _Tree:
    """The processes started for one notebook: papermill and, once they exist, its kernel and their children.

    Remembered while they run (polled every second), because a kernel is
    started in a session of its own (jupyter_client) and, once papermill is
    gone, is no longer papermill's child: without this list nothing could find
    it again.
    """

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.known: dict[int, Any] = {}
        try:
            import psutil
        except ImportError:  # pragma: no cover - psutil is in requirements.txt (ipykernel needs it)
            self._psutil = None
        else:
            self._psutil = psutil
            self.poll()

    def poll(self) -> None:
        if self._psutil is None:
            return
        try:
            root = self._psutil.Process(self.proc.pid)
            for p in [root, *root.children(recursive=True)]:
                self.known.setdefault(p.pid, p)
        except self._psutil.Error:
            pass

    def stop(self, grace: float = 3.0) -> None:
        """Terminate every remembered process still running, then kill those still there after ``grace`` s."""
        stop_process_tree(self.proc, list(self.known.values()), psutil=self._psutil, grace=grace)


def stop_process_tree(proc: subprocess.Popen, known: list, *, psutil=None, grace: float = 3.0) -> None:
    """Stop ``proc`` and the processes ``known`` to descend from it: SIGTERM, then SIGKILL after ``grace`` s.

    ``known`` holds :class:`psutil.Process` objects (safe against reused
    process ids); without psutil only ``proc``'s process group is signalled.
    """
    if psutil is None:  # pragma: no cover - psutil is in requirements.txt
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                return
            try:
                proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue
        return
    try:  # the latest children too (a kernel that has just started)
        root = psutil.Process(proc.pid)
        known = [*known, *root.children(recursive=True)]
    except psutil.Error:
        pass
    alive = []
    for p in {p.pid: p for p in known}.values():
        try:
            if p.is_running():
                p.terminate()
                alive.append(p)
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(alive, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=grace)
    if proc.poll() is None:  # pragma: no cover - killed above
        proc.kill()
    proc.wait()


def execute(src: Path, dst: Path, params: dict, figure_dir: Path, log_path: Path | None = None,
            threads: int | None = None, *, show_figures: bool = False,
            progress: Callable[[str], None] | None = None, interval: float = 10.0,
            isolate: bool = False) -> tuple[bool, str]:
    """Execute one notebook with papermill in a subprocess, reporting progress.

    Parameters
    ----------
    src, dst : pathlib.Path
        Source notebook and where to write the executed copy.
    params : dict
        Papermill parameters (only those to replace; see :func:`resolve_parameters`).
    figure_dir : pathlib.Path
        Exported to the kernel as ``LDP_FIGURE_DIR``.
    log_path : pathlib.Path, optional
        Where to write papermill's output (cell by cell, with the cells' output).
    threads : int, optional
        Thread cap for BLAS/numba in the kernel.
    show_figures : bool
        Also show each figure saved with :func:`ldp.book.plotting.save_figure` in the notebook.
    progress : callable, optional
        Called every ``interval`` seconds while the notebook runs with a line
        such as ``"1 min 20 s, cell 7/31, grid 3: 120/360 runs"``.
    interval : float
        Seconds between progress reports.
    isolate : bool
        Start papermill in a session of its own, so that a Ctrl-C in the
        terminal reaches only this process, which then stops papermill, the
        kernel and all their children itself (``python -m ldp rerun``).

    Returns
    -------
    (ok, report) : tuple of (bool, str)
        ``report`` holds the failing cell and traceback when ``ok`` is false.

    Notes
    -----
    Whatever ends the wait (the notebook finishing, an error, Ctrl-C), every
    process started for the notebook is stopped before this returns or
    raises: papermill, the kernel (which jupyter_client starts in a session
    of its own, and which a compiled cell can keep from noticing that
    papermill is gone) and their children (e.g. joblib's workers), first with
    SIGTERM, then SIGKILL after 3 s.
    """
    dst.parent.mkdir(parents=True, exist_ok=True)
    figure_dir.mkdir(parents=True, exist_ok=True)
    n_cells = len(read_notebook(src).get("cells", [])) + (1 if params else 0)
    env = kernel_env(figure_dir, threads, show_figures=show_figures)
    with tempfile.TemporaryDirectory(prefix="ldp-progress-") as tmp:
        progress_file = Path(tmp) / "progress.json"
        env[PROGRESS_ENV] = str(progress_file)
        log_fh = None
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_fh = open(log_path, "w", encoding="utf-8")
        chunks: list[str] = []
        cell = [0]

        def read(stream):
            for line in stream:
                chunks.append(line)
                if log_fh is not None:
                    log_fh.write(line)
                    log_fh.flush()
                m = _CELL_LINE.search(line)
                if m:
                    cell[0] = int(m[1])

        t0 = time.monotonic()
        proc = subprocess.Popen(papermill_command(src, dst, params), cwd=repo_root(), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                encoding="utf-8", errors="replace", start_new_session=isolate)
        tree = _Tree(proc)
        reader = threading.Thread(target=read, args=(proc.stdout,), daemon=True)
        reader.start()
        last = time.monotonic()
        try:
            while True:
                try:
                    proc.wait(timeout=min(1.0, interval))
                    break
                except subprocess.TimeoutExpired:
                    tree.poll()
                    if progress is not None and time.monotonic() - last >= interval:
                        last = time.monotonic()
                        parts = [duration_text(last - t0), f"cell {cell[0]}/{n_cells}",
                                 _grid_progress(progress_file)]
                        progress(", ".join(p for p in parts if p))
        finally:
            main = threading.current_thread() is threading.main_thread()
            old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None  # a second Ctrl-C waits
            try:
                tree.stop()  # papermill if still running, and the kernel and children it leaves behind
            finally:
                if old is not None:
                    signal.signal(signal.SIGINT, old)
            reader.join(timeout=10)
            if log_fh is not None:
                log_fh.close()
    if proc.returncode == 0:
        return True, ""
    return False, error_report(dst, "".join(chunks))


