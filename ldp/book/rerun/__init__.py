"""Rerun a chapter notebook with your own parameters: ``python -m ldp rerun``.

Every chapter of the book is a notebook in ``notebooks/`` whose code cell
tagged ``parameters`` holds the paper's settings as type-annotated defaults,
one per line, each with a ``# meaning`` comment::

    repetitions: int = 10  # runs per point (paper: 10) [quick: 3]

The optional ``[quick: VALUE]`` at the end of the comment is the parameter's
value in quick mode (``make book QUICK=1``, the tests, ``rerun --quick``).
The values a notebook runs with are merged here, before anything runs::

    notebook defaults  <  quick values (with --quick)  <  your --set values

so quick mode never replaces a value you set.  The notebook itself never
shrinks its parameters; it only reads ``quick`` (always ``True`` in quick mode)
for sizes that are not parameters and for its prose.

This package also holds what the book build (``scripts/run_notebooks.py``)
shares with reruns: finding the notebooks (:mod:`~ldp.book.rerun.notebooks`),
reading and checking their parameters (:mod:`~ldp.book.rerun.parameters`, with
:func:`papermill.inspect_notebook`), the kernel and executing one notebook
with papermill while reporting its progress (:mod:`~ldp.book.rerun.execution`: the
cell being executed, and the runs done by :func:`ldp.experiments.run_grid`,
which writes them to the file named by ``$LDP_PROGRESS_FILE``); the rerun
itself, its folder and HTML copy are in :mod:`~ldp.book.rerun.run`, the command
line (``python -m ldp rerun``, ``python -m ldp kernel``) in :mod:`~ldp.book.rerun.cli`, and the run's
folder, which a rerun makes and never fills with anything but its own files, in
:mod:`~ldp.book.rerun.runfolder`.

Usage (from a source checkout; see ``book/rerun.md``)::

    .venv/bin/python -m ldp rerun 06 --quick --set 'epsilons=[1.0, 3.0]' --set repetitions=2
    .venv/bin/python -m ldp rerun 05_validation --params      # list the parameters

Each run gets its own folder, ``my-runs/NAME-HASH/`` by default (see :mod:`ldp.book.rerun.run`); ``--out``
names another, which must be new, empty, or one an earlier rerun made (:mod:`ldp.book.rerun.runfolder`).
"""
from __future__ import annotations

from .cli import main
from .execution import (
    KERNEL_DISPLAY_NAME,
    KERNEL_NAME,
    PROGRESS_ENV,
    SHOW_FIGURES_ENV,
    duration_text,
    ensure_kernel,
    error_report,
    execute,
    kernel_env,
    papermill_command,
    venv_jupyter_dir,
)
from .notebooks import (
    NotebookError,
    cell_source,
    find_notebook,
    notebook_dir,
    notebook_title,
    read_notebook,
    rerun_example,
    source_notebooks,
)
from .parameters import (
    TYPE_HINTS,
    Parameter,
    ParameterError,
    check_value,
    literal_value,
    notebook_parameters,
    parameter_listing,
    parameters_cell,
    parse_assignments,
    quick_parameters,
    resolve_parameters,
)
from .run import RUNS_DIR_ENV, command_line, readable_markdown, rerun, run_folder
from .runfolder import INCOMPLETE, MANIFEST, RunFolderError

__all__ = [
    "NotebookError", "ParameterError", "RunFolderError", "Parameter", "MANIFEST", "INCOMPLETE", "KERNEL_NAME",
    "KERNEL_DISPLAY_NAME", "PROGRESS_ENV",
    "SHOW_FIGURES_ENV", "RUNS_DIR_ENV", "TYPE_HINTS", "notebook_dir", "source_notebooks", "find_notebook",
    "read_notebook", "cell_source", "notebook_title", "parameters_cell", "notebook_parameters", "rerun_example",
    "literal_value", "check_value", "parse_assignments", "parameter_listing", "resolve_parameters",
    "quick_parameters", "venv_jupyter_dir", "kernel_env", "ensure_kernel", "papermill_command", "execute",
    "error_report", "duration_text", "run_folder", "readable_markdown", "rerun", "command_line", "main",
]
