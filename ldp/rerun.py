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

This module also holds what the book build (``scripts/run_notebooks.py``)
shares with reruns: finding the notebooks, reading and checking their
parameters (:func:`papermill.inspect_notebook`), the kernel environment and
executing one notebook with papermill while reporting its progress (the cell
being executed, and the runs done by :func:`ldp.experiments.run_grid`, which
writes them to the file named by ``$LDP_PROGRESS_FILE``).

Usage (from a source checkout; see ``book/rerun.md``)::

    .venv/bin/python -m ldp rerun 06 --quick --set 'epsilons=[1.0, 3.0]' --set repetitions=2
    .venv/bin/python -m ldp rerun 05_validation --params      # list the parameters

Each run gets its own folder, by default ``my-runs/NAME-HASH/`` under the
repository root (``$LDP_RUNS_DIR`` or ``--out`` choose another), holding the
executed notebook ``NAME.ipynb`` with its figures shown inline, the same as
``NAME.html`` for a web browser, the figure files ``figures/*.svg|pdf``, the
parameters ``parameters.json`` and papermill's log ``run.log``.  ``HASH`` is a
short hash of the notebook's name and all its parameter values, so the same
settings reuse the same folder.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import hashlib
import json
import math
import operator
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

from .paths import atomic_path, repo_root

__all__ = [
    "NotebookError", "ParameterError", "Parameter", "KERNEL_NAME", "PROGRESS_ENV", "SHOW_FIGURES_ENV",
    "notebook_dir", "source_notebooks", "find_notebook", "notebook_title", "parameters_cell",
    "notebook_parameters", "rerun_example", "literal_value", "parse_assignments", "resolve_parameters",
    "quick_parameters", "kernel_env", "ensure_kernel", "papermill_command", "execute", "error_report",
    "run_folder", "readable_markdown", "rerun", "main",
]

KERNEL_NAME = "ldp"
KERNEL_DISPLAY_NAME = "Python 3 (ldp)"
#: environment variable naming the file where run_grid reports its progress
#: (= ldp.experiments.PROGRESS_ENV; not imported, to keep this module light)
PROGRESS_ENV = "LDP_PROGRESS_FILE"
#: environment variable that makes ldp.plotting.save_figure also show the figure
SHOW_FIGURES_ENV = "LDP_SHOW_FIGURES"
#: environment variable for the folder that holds the runs' folders (default <root>/my-runs)
RUNS_DIR_ENV = "LDP_RUNS_DIR"
#: the types a parameter may be declared with, and what a value of each looks like
TYPE_HINTS = {"int": "an integer such as 3 or 2**20", "float": "a number such as 2.5 or 1e-3",
              "bool": "True or False", "str": "text such as caption",
              "list": "a list such as [1.0, 3.0]"}
_QUICK_MARK = re.compile(r"\s*\[quick:\s*(?P<value>.*)\]\s*$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_LINE = re.compile(r"Executing Cell (\d+)")


class NotebookError(RuntimeError):
    """A source notebook does not follow the project's conventions (or is missing)."""


class ParameterError(ValueError):
    """A parameter name or value that the notebook does not accept."""


_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Parameter:
    """One entry of a notebook's ``parameters`` cell.

    Attributes
    ----------
    name, type : str
        The variable and its annotation (``int``, ``float``, ``bool``, ``str``, ``list``).
    default_text : str
        The default as written in the cell (``2**20``).
    default : object
        Its value (:func:`literal_value`).
    help : str
        The ``# meaning`` comment without the ``[quick: ...]`` mark.
    quick : object
        The value in quick mode, or the default when the comment has no mark.
    has_quick : bool
        Whether the comment has a ``[quick: ...]`` mark.
    quick_text : str
        The quick value as written in the mark ('' without one).
    """

    name: str
    type: str
    default_text: str
    default: Any
    help: str
    quick: Any
    has_quick: bool
    quick_text: str = ""

    def describe(self) -> str:
        """``name: type = default  # help (quick: value)``, as in the notebook."""
        quick = f" (quick: {self.quick_text})" if self.has_quick else ""
        return f"{self.name}: {self.type} = {self.default_text}  # {self.help}{quick}"


# --------------------------------------------------------------------------- #
# notebooks
# --------------------------------------------------------------------------- #
def notebook_dir() -> Path:
    """``<root>/notebooks``; :class:`NotebookError` when it does not exist.

    The notebooks are part of the source repository, not of the installed
    package, so reruns need a checkout (``git clone``) with ``ldp`` installed
    from it (``make setup``), or ``$LDP_ROOT`` naming one.
    """
    folder = repo_root() / "notebooks"
    if not folder.is_dir():
        raise NotebookError(
            f"no notebooks/ folder in {repo_root()}: `python -m ldp rerun` runs the book's notebooks, "
            "which are in the source repository, not in the installed package. Clone the repository, "
            "run `make setup` there and use its .venv/bin/python, or set LDP_ROOT to the checkout."
        )
    return folder


def source_notebooks(only: Sequence[str] | None = None) -> list[Path]:
    """Return the source notebooks ``notebooks/*.ipynb`` in name order.

    Parameters
    ----------
    only : sequence of str, optional
        Notebooks to keep, each as accepted by :func:`find_notebook`.

    Returns
    -------
    list of pathlib.Path
    """
    paths = sorted(p for p in notebook_dir().glob("*.ipynb") if not p.name.startswith((".", "_")))
    if only:
        wanted = {find_notebook(o, paths).stem for o in only}
        paths = [p for p in paths if p.stem in wanted]
    return paths


def find_notebook(name: str, notebooks: Sequence[Path] | None = None) -> Path:
    """The notebook named by a chapter number, stem, file name or path.

    ``6``, ``06``, ``06_evaluation``, ``06_evaluation.ipynb`` and
    ``notebooks/06_evaluation.ipynb`` all name ``notebooks/06_evaluation.ipynb``.

    Raises
    ------
    NotebookError
        No notebook, or more than one, matches; the message lists them.
    """
    paths = list(notebooks) if notebooks is not None else source_notebooks()
    key = Path(str(name).strip()).name
    key = key[:-len(".ipynb")] if key.endswith(".ipynb") else key
    hits = [p for p in paths if p.stem == key]
    if not hits and key.isdigit():
        hits = [p for p in paths if re.match(r"\d+", p.stem) and int(re.match(r"\d+", p.stem)[0]) == int(key)]
    if not hits and key:
        hits = [p for p in paths if key.lower() in p.stem.lower()]
    if len(hits) == 1:
        return hits[0]
    names = ", ".join(p.stem for p in (hits or paths))
    what = "matches several notebooks" if hits else "names no notebook"
    raise NotebookError(f"{name!r} {what}; the notebooks are: {names}")


def _read_nb(nb_path: Path) -> dict:
    return json.loads(Path(nb_path).read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def notebook_title(nb_path: Path) -> str:
    """First level-1 markdown heading of a notebook, else its file stem."""
    for cell in _read_nb(nb_path).get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in _source(cell).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return Path(nb_path).stem


def parameters_cell(nb_path: Path) -> str:
    """Return the source of the single cell tagged ``parameters``, after checking it.

    Raises
    ------
    NotebookError
        If there is no such cell, more than one, or its code is not a list of
        type-annotated assignments, one per line, that includes ``quick: bool = False``.
    """
    name = Path(nb_path).name
    cells = [c for c in _read_nb(nb_path).get("cells", [])
             if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise NotebookError(f"{name}: needs exactly one cell tagged 'parameters', found {len(cells)}")
    src = _source(cells[0])
    try:
        tree = ast.parse(src)
    except SyntaxError as exc:
        raise NotebookError(f"{name}: parameters cell: {exc}") from exc
    for lineno, line in enumerate(src.splitlines(), 1):
        if line.count("=") > 1 and not line.lstrip().startswith("#"):
            raise NotebookError(
                f"{name}: parameters cell line {lineno}: write one `=` per line "
                "(papermill's parameter inspection skips lines with an `=` in the value or comment)"
            )
    names = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is None:
                raise NotebookError(f"{name}: parameter {node.target.id!r} has no default value")
            names[node.target.id] = node
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring-like string is fine
        else:
            raise NotebookError(
                f"{name}: parameters cell line {node.lineno}: only "
                "type-annotated assignments `name: type = default  # meaning` are allowed"
            )
    quick = names.get("quick")
    if (quick is None or ast.unparse(quick.annotation) != "bool"
            or not (isinstance(quick.value, ast.Constant) and quick.value.value is False)):
        raise NotebookError(f"{name}: parameters cell must define `quick: bool = False`")
    return src


def notebook_parameters(nb_path: Path) -> dict[str, Parameter]:
    """The parameters of a notebook, read with :func:`papermill.inspect_notebook`.

    The cell is checked first (:func:`parameters_cell`); every default and
    every ``[quick: VALUE]`` mark must be a value of the declared type.

    Returns
    -------
    dict of str to Parameter
        In the order of the cell.

    Raises
    ------
    NotebookError
        A convention is broken; the message says which and where.
    """
    parameters_cell(nb_path)
    papermill = _papermill()
    name = Path(nb_path).name
    out: dict[str, Parameter] = {}
    for p in papermill.inspect_notebook(str(nb_path)).values():
        ptype = p["inferred_type_name"] if p["inferred_type_name"] != "None" else "object"
        help_text, quick_text = p["help"], None
        mark = _QUICK_MARK.search(help_text)
        if mark:
            help_text, quick_text = help_text[:mark.start()].rstrip(), mark["value"]
        try:
            default = literal_value(p["default"])
        except ValueError:
            default = _MISSING  # an expression the runner cannot evaluate: never injected
        param = Parameter(p["name"], ptype, p["default"].strip(), default, help_text, default, False)
        if default is not _MISSING:
            try:
                default = check_value(param, default)
            except ParameterError as exc:
                raise NotebookError(f"{name}: the default of {exc}") from None
            param = dataclasses.replace(param, default=default, quick=default)
        if quick_text is not None:
            try:
                quick = check_value(param, literal_value(quick_text) if ptype != "str" else
                                    _str_value(quick_text))
            except ValueError as exc:
                raise NotebookError(f"{name}: parameter {p['name']!r}: bad [quick: {quick_text}] mark: {exc}") \
                    from None
            param = dataclasses.replace(param, quick=quick, has_quick=True, quick_text=quick_text.strip())
        out[param.name] = param
    return out


def rerun_example(nb_path: Path) -> list[str]:
    """The example ``NAME=VALUE`` settings of a notebook (metadata ``ldp.rerun_example``).

    The parameters page prints them as the notebook's rerun command, and the
    tests run that command; an empty list when the notebook declares none.
    """
    example = _read_nb(nb_path).get("metadata", {}).get("ldp", {}).get("rerun_example", [])
    if not (isinstance(example, list) and all(isinstance(s, str) for s in example)):
        raise NotebookError(f"{Path(nb_path).name}: metadata ldp.rerun_example must be a list of "
                            "'NAME=VALUE' strings")
    return example


# --------------------------------------------------------------------------- #
# values
# --------------------------------------------------------------------------- #
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_MAX_INT_BITS = 256


def literal_value(text: str) -> Any:
    """A Python literal, with constant arithmetic, evaluated safely.

    Accepts numbers, strings, ``True``/``False``/``None``, lists and tuples of
    these, and ``+ - * / // % **`` between numbers (``2**20``, ``10**6``,
    ``1/3``).  Nothing is executed: names, calls and attributes are refused.

    Raises
    ------
    ValueError
        The text is not such a literal (the message says why).
    """
    try:
        tree = ast.parse(str(text).strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"{text!r} is not a Python literal") from None
    return _eval(tree.body, text)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _eval(node, text):
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_eval(e, text) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        x = _eval(node.operand, text)
        if _is_number(x):
            return _UNARY[type(node.op)](x)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        a, b = _eval(node.left, text), _eval(node.right, text)
        if _is_number(a) and _is_number(b):
            if isinstance(node.op, ast.Pow) and abs(b) * math.log2(max(abs(a), 2)) > _MAX_INT_BITS:
                raise ValueError(f"{text!r}: {a}**{b} is too large")
            try:
                out = _BINOPS[type(node.op)](a, b)
            except ArithmeticError as exc:
                raise ValueError(f"{text!r}: {exc}") from None
            if isinstance(out, int) and out.bit_length() > _MAX_INT_BITS:
                raise ValueError(f"{text!r} is too large")
            if isinstance(out, complex):
                raise ValueError(f"{text!r} is not a real number")
            return out
    raise ValueError(f"{text!r} is not a Python literal (numbers, 'text', True/False, [lists], "
                     f"and + - * / ** between numbers)")


def _str_value(text: str) -> str:
    """A str parameter's value: a quoted literal's content, else the text itself."""
    try:
        value = literal_value(text)
    except ValueError:
        return text.strip()
    return value if isinstance(value, str) else text.strip()


def _kind(x) -> str:
    return "a bool" if isinstance(x, bool) else f"a {type(x).__name__}"


def check_value(param: Parameter, value: Any) -> Any:
    """``value`` as a value of ``param``'s declared type; :class:`ParameterError` if it is not one.

    An int is accepted for a float (and converted); a bool is not an int.  A
    list must not be empty, and when the default list holds only integers
    (only numbers), so must the new one (floats are converted like floats).
    """
    t, name = param.type, param.name
    bad = ParameterError(f"{name} must be {TYPE_HINTS.get(t, t)} (type {t}), got {repr(value)} ({_kind(value)})")
    if t == "bool":
        if not isinstance(value, bool):
            raise bad
        return value
    if t == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad
        return value
    if t == "float":
        if not _is_number(value):
            raise bad
        return float(value)
    if t == "str":
        if not isinstance(value, str):
            raise bad
        return value
    if t == "list":
        if not isinstance(value, (list, tuple)):
            raise bad
        value = list(value)
        default = param.default if isinstance(param.default, list) else []
        if default and not value:
            raise ParameterError(f"{name} must hold at least one value, got []")
        if default and all(isinstance(x, int) and not isinstance(x, bool) for x in default):
            wrong = [x for x in value if not isinstance(x, int) or isinstance(x, bool)]
            if wrong:
                raise ParameterError(f"{name} must be a list of integers (like its default {param.default_text}), "
                                     f"got {repr(value)}")
        elif default and all(_is_number(x) for x in default):
            wrong = [x for x in value if not _is_number(x)]
            if wrong:
                raise ParameterError(f"{name} must be a list of numbers (like its default {param.default_text}), "
                                     f"got {repr(value)}")
            if all(isinstance(x, float) for x in default):
                value = [float(x) for x in value]
        return value
    return value  # an annotation the runner does not know: any literal


def parse_assignments(items: Sequence[str]) -> dict[str, str]:
    """``["a=1", "b=[1, 2] c=x"]`` -> ``{"a": "1", "b": "[1, 2]", "c": "x"}``.

    One item may hold several settings separated by white space before the
    next ``NAME=`` (what ``make rerun SET='...'`` passes).

    Raises
    ------
    ParameterError
        An item without ``NAME=``, or a name given twice.
    """
    out: dict[str, str] = {}
    for item in items:
        for part in re.split(r"\s+(?=[A-Za-z_]\w*\s*=)", item.strip()):
            if not part:
                continue
            m = re.fullmatch(r"([A-Za-z_]\w*)\s*=(.*)", part, flags=re.S)
            if not m:
                raise ParameterError(f"--set {part!r}: write NAME=VALUE, e.g. --set 'epsilons=[1.0, 3.0]'")
            name, value = m[1], m[2].strip()
            if name in out:
                raise ParameterError(f"--set: {name} is set twice ({out[name]!r} and {value!r})")
            out[name] = value
    return out


def parameter_listing(nb_path: Path, params: dict[str, Parameter] | None = None) -> str:
    """The parameters of a notebook, one per line, as an error message lists them."""
    params = params if params is not None else notebook_parameters(nb_path)
    lines = [f"Parameters of {Path(nb_path).stem} (set with --set NAME=VALUE; quick only with --quick):"]
    lines += [f"  {p.describe()}" for p in params.values()]
    return "\n".join(lines)


def resolve_parameters(nb_path: Path, sets: dict[str, str] | None = None, *,
                       quick: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The values a notebook runs with: defaults < quick values (``quick``) < ``sets``.

    Parameters
    ----------
    nb_path : pathlib.Path
        The source notebook.
    sets : dict of str to str, optional
        ``NAME -> VALUE`` as typed (see :func:`parse_assignments`); each value
        is read with :func:`literal_value` (a ``str`` parameter also takes a
        bare word) and checked against the parameter's type.
    quick : bool
        Use the notebook's quick values for the parameters not in ``sets``.

    Returns
    -------
    (values, injected) : tuple of dict
        ``values``: every parameter's value; ``injected``: what papermill is
        given (the values that differ from the defaults, and ``quick``).

    Raises
    ------
    ParameterError
        An unknown name or a value of the wrong type; the message lists the
        notebook's parameters with their types and defaults.
    """
    params = notebook_parameters(nb_path)
    values = {n: (p.quick if quick else p.default) for n, p in params.items()}
    values["quick"] = bool(quick)
    user: dict[str, Any] = {}
    for name, text in (sets or {}).items():
        try:
            if name == "quick":
                raise ParameterError("quick is set with --quick (make rerun ... QUICK=1), not with --set")
            if name not in params:
                close = difflib.get_close_matches(name, list(params), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise ParameterError(f"{Path(nb_path).stem} has no parameter {name!r}{hint}")
            p = params[name]
            try:
                value = _str_value(text) if p.type == "str" else literal_value(text)
            except ValueError as exc:
                raise ParameterError(f"{name}={text}: {exc}; {name} must be {TYPE_HINTS.get(p.type, p.type)}") \
                    from None
            user[name] = check_value(p, value)
        except ParameterError as exc:
            raise ParameterError(f"{exc}\n\n{parameter_listing(nb_path, params)}") from None
    values.update(user)
    injected = {n: v for n, v in values.items()
                if n == "quick" or params[n].default is _MISSING or v != params[n].default
                or type(v) is not type(params[n].default)}
    if not quick:
        injected.pop("quick")
    missing = [n for n, v in values.items() if v is _MISSING]
    for n in missing:  # defaults the runner cannot evaluate stay the notebook's own
        values[n] = params[n].default_text
        injected.pop(n, None)
    return values, injected


def quick_parameters(nb_path: Path) -> dict[str, Any]:
    """What papermill is given in quick mode: the quick values and ``quick=True``."""
    return resolve_parameters(nb_path, quick=True)[1]


# --------------------------------------------------------------------------- #
# kernel, environment, execution
# --------------------------------------------------------------------------- #
def _papermill():
    try:
        import papermill
    except ImportError:  # pragma: no cover - the venv has it (requirements.txt)
        raise NotebookError("papermill is not installed: run `make setup` and use .venv/bin/python") from None
    return papermill


def venv_jupyter_dir() -> Path:
    return Path(sys.prefix) / "share" / "jupyter"


def ensure_kernel() -> None:
    """Install the ``ldp`` kernelspec into this interpreter's prefix if missing.

    The spec's ``argv[0]`` is this interpreter (``.venv/bin/python``), so the
    notebooks run with the project's pinned packages and the editable ``ldp``.
    """
    spec = venv_jupyter_dir() / "kernels" / KERNEL_NAME / "kernel.json"
    if spec.is_file():
        argv0 = json.loads(spec.read_text())["argv"][0]
        if Path(argv0) == Path(sys.executable):
            return
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL_NAME,
                    "--display-name", KERNEL_DISPLAY_NAME], check=True, stdout=subprocess.DEVNULL)


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
        nb = _read_nb(executed)
    except (OSError, ValueError):
        nb = {"cells": []}
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                lines.append(f"--- cell {i} (execution_count {cell.get('execution_count')}):")
                lines.append(_source(cell))
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


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def _grid_progress(path: Path) -> str:
    """``grid 3: 120/360 runs`` from run_grid's progress file ('' before the first grid)."""
    try:
        state = json.loads(path.read_text())
        return f"grid {state['grid']}: {state['done']}/{state['total']} runs"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def execute(src: Path, dst: Path, params: dict, figure_dir: Path, log_path: Path | None = None,
            threads: int | None = None, *, show_figures: bool = False,
            progress: Callable[[str], None] | None = None, interval: float = 10.0) -> tuple[bool, str]:
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
        Also show each figure saved with :func:`ldp.plotting.save_figure` in the notebook.
    progress : callable, optional
        Called every ``interval`` seconds while the notebook runs with a line
        such as ``"1 min 20 s, cell 7/31, grid 3: 120/360 runs"``.
    interval : float
        Seconds between progress reports.

    Returns
    -------
    (ok, report) : tuple of (bool, str)
        ``report`` holds the failing cell and traceback when ``ok`` is false.
    """
    dst.parent.mkdir(parents=True, exist_ok=True)
    figure_dir.mkdir(parents=True, exist_ok=True)
    n_cells = len(_read_nb(src).get("cells", [])) + (1 if params else 0)
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
                                encoding="utf-8", errors="replace")
        reader = threading.Thread(target=read, args=(proc.stdout,), daemon=True)
        reader.start()
        try:
            while True:
                try:
                    proc.wait(timeout=interval)
                    break
                except subprocess.TimeoutExpired:
                    if progress is not None:
                        parts = [_duration(time.monotonic() - t0), f"cell {cell[0]}/{n_cells}",
                                 _grid_progress(progress_file)]
                        progress(", ".join(p for p in parts if p))
        finally:
            if proc.poll() is None:  # interrupted: stop papermill (and with it the kernel)
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
            reader.join(timeout=10)
            if log_fh is not None:
                log_fh.close()
    if proc.returncode == 0:
        return True, ""
    return False, error_report(dst, "".join(chunks))


# --------------------------------------------------------------------------- #
# the rerun command
# --------------------------------------------------------------------------- #
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
        unknown parameter or a value of the wrong type.
    """
    nb_path = find_notebook(notebook)
    values, injected = resolve_parameters(nb_path, sets, quick=quick)
    folder = run_folder(nb_path, values, out)
    if folder.exists() and not folder.is_dir():
        raise NotebookError(f"--out {folder} exists and is not a folder")
    executed = folder / nb_path.name
    figures = folder / "figures"
    for old in [executed, folder / f"{nb_path.stem}.html", folder / "run.log"]:
        old.unlink(missing_ok=True)
    if figures.is_dir():
        for f in figures.iterdir():
            if f.is_file():
                f.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_path(folder / "parameters.json") as tmp:
        tmp.write_text(json.dumps(values, indent=1) + "\n", encoding="utf-8")
    mine = {n: values[n] for n in (sets or {})}
    quicks = {n: v for n, v in injected.items() if n != "quick" and n not in mine}
    echo(f"[rerun] {nb_path.stem}{' (quick)' if quick else ''} -> {_display_path(folder)}/")
    echo(f"[rerun]   your values: {', '.join(f'{n}={v!r}' for n, v in mine.items()) or 'none'}")
    if quick:
        echo(f"[rerun]   quick values: {', '.join(f'{n}={v!r}' for n, v in quicks.items()) or 'none'}")
    echo("[rerun]   the others: the notebook's defaults (python -m ldp rerun "
         f"{nb_path.stem} --params lists them)")
    ensure_kernel()
    t0 = time.monotonic()
    ok, report = execute(nb_path, executed, injected, figures, folder / "run.log", show_figures=True,
                         progress=lambda s: echo(f"[rerun]   {nb_path.stem}: {s}"), interval=interval)
    seconds = time.monotonic() - t0
    html = folder / f"{nb_path.stem}.html"
    has_html = executed.is_file() and _write_html(executed, html)
    if not ok:
        echo(f"[rerun] {nb_path.stem} FAILED after {_duration(seconds)}:\n{report}")
        echo(f"[rerun] log: {_display_path(folder / 'run.log')}")
        return False, folder
    n_fig = len({f.stem for f in figures.glob("*") if f.is_file()})
    echo(f"[rerun] {nb_path.stem}: done in {_duration(seconds)}; {n_fig} figure(s). In {_display_path(folder)}/:")
    echo(f"[rerun]   {nb_path.stem}.html   the executed notebook with its figures: open in a web browser")
    echo(f"[rerun]   {nb_path.name}  the same as a notebook; figures/  SVG + PDF; parameters.json; run.log")
    if not has_html:  # pragma: no cover - nbconvert is in requirements.txt
        html.unlink(missing_ok=True)
    return True, folder


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m ldp", description="Tools of the ldp reproduction package.")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser(
        "rerun", help="rerun a chapter notebook with your own parameters",
        description="Rerun a chapter notebook (from a source checkout) with your own parameters, into its "
                    "own folder: my-runs/NAME-HASH/ (or --out) with the executed notebook (figures inline), "
                    "an HTML copy, the figure files, parameters.json and run.log.",
        epilog="examples:\n"
               "  python -m ldp rerun 06 --quick --set 'epsilons=[1.0, 3.0]' --set repetitions=2\n"
               "  python -m ldp rerun 05_validation --params\n\n"
               "VALUE is a Python literal: 3, 2.5, 2**20, True, [1.0, 3.0], 'text' (a str parameter also "
               "takes a bare word). Names and types are checked before anything runs.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("notebook", metavar="NOTEBOOK", help="chapter number or name: 06, 06_evaluation")
    r.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter value (repeat for several; one argument may hold several)")
    r.add_argument("--quick", action="store_true",
                   help="small sizes for every parameter you do not set (the book's quick build)")
    r.add_argument("--out", metavar="DIR", help="the run's folder (default my-runs/NAME-HASH)")
    r.add_argument("--params", action="store_true", help="list the notebook's parameters and exit")
    r.add_argument("--progress-interval", type=float, default=10.0, metavar="S", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ldp rerun ...``; returns the exit status (0 ok, 1 notebook failed, 2 bad input)."""
    args = _build_parser().parse_args(argv)
    try:
        if args.params:
            print(parameter_listing(find_notebook(args.notebook)))
            return 0
        if args.progress_interval <= 0:
            raise ParameterError(f"--progress-interval must be > 0, got {args.progress_interval}")
        ok, _ = rerun(args.notebook, sets=parse_assignments(args.sets), quick=args.quick, out=args.out,
                      interval=args.progress_interval, echo=lambda s: print(s, flush=True))
    except (NotebookError, ParameterError) as exc:
        print(f"python -m ldp rerun: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("python -m ldp rerun: interrupted", file=sys.stderr)
        return 130
    return 0 if ok else 1


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
