#!/usr/bin/env python
"""Execute the book's notebooks with papermill and stage them for Jupyter Book.

The sources live in ``notebooks/*.ipynb``. Each one has a cell tagged
``parameters`` whose type-annotated defaults are the paper's settings, plus
``quick: bool = False``. This script

1. checks every source notebook's parameters cell (before running anything);
2. executes each notebook with papermill (kernel ``ldp``: this venv's Python,
   working directory = repository root, environment ``LDP_ROOT`` and
   ``LDP_FIGURE_DIR`` set), two at a time, into a per-mode cache
   ``_generated/cache/{full,quick}/``; a notebook whose inputs did not change
   since its last successful run in the same mode is not executed again;
3. copies the executed notebooks to ``_generated/notebooks/`` and the figures
   they saved to ``_generated/figures/``: the paths that ``_toc.yml`` and the
   ``{figure}`` directives point at;
4. writes ``_generated/params.md``, the parameter tables that
   ``book/rerun.md`` includes.

A notebook that raises makes the script print the failing cell, the error and
its traceback, and exit with status 1.

Usage (from anywhere; paths resolve from the repository root)::

    .venv/bin/python scripts/run_notebooks.py            # paper settings
    .venv/bin/python scripts/run_notebooks.py --quick    # quick=True
    .venv/bin/python scripts/run_notebooks.py --quick --only 00_placeholder --force
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
GENERATED = ROOT / "_generated"
KERNEL_NAME = "ldp"
KERNEL_DISPLAY_NAME = "Python 3 (ldp)"
# Inputs whose change invalidates every cached execution.
SHARED_INPUTS = ("ldp", "requirements.txt", "pyproject.toml")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class NotebookError(RuntimeError):
    """A source notebook does not follow the project's conventions."""


# --------------------------------------------------------------------------- #
# discovery and checks
# --------------------------------------------------------------------------- #
def source_notebooks(only: list[str] | None = None) -> list[Path]:
    """Return the source notebooks ``notebooks/*.ipynb`` in name order.

    Parameters
    ----------
    only : list of str, optional
        Notebook stems (``00_placeholder``) or file names to keep.

    Returns
    -------
    list of pathlib.Path
    """
    paths = sorted(
        p for p in NOTEBOOK_DIR.glob("*.ipynb") if not p.name.startswith((".", "_"))
    )
    if only:
        wanted = {Path(o).stem for o in only}
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            raise NotebookError(
                f"--only: no notebook named {sorted(unknown)} in {NOTEBOOK_DIR}"
            )
        paths = [p for p in paths if p.stem in wanted]
    return paths


def parameters_cell(nb_path: Path) -> str:
    """Return the source of the single cell tagged ``parameters``.

    Raises
    ------
    NotebookError
        If there is no such cell, more than one, or its code is not a list of
        type-annotated assignments that includes ``quick: bool = False``.
    """
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    cells = [
        c
        for c in nb.get("cells", [])
        if "parameters" in c.get("metadata", {}).get("tags", [])
    ]
    if len(cells) != 1:
        raise NotebookError(
            f"{nb_path.name}: needs exactly one cell tagged 'parameters', found {len(cells)}"
        )
    src = cells[0]["source"]
    src = "".join(src) if isinstance(src, list) else src
    try:
        tree = ast.parse(src)
    except SyntaxError as exc:
        raise NotebookError(f"{nb_path.name}: parameters cell: {exc}") from exc
    for lineno, line in enumerate(src.splitlines(), 1):
        if line.count("=") > 1 and not line.lstrip().startswith("#"):
            raise NotebookError(
                f"{nb_path.name}: parameters cell line {lineno}: write one `=` per line "
                "(papermill --help-notebook skips lines with an `=` in the value or comment)"
            )
    names = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is None:
                raise NotebookError(
                    f"{nb_path.name}: parameter {node.target.id!r} has no default value"
                )
            names[node.target.id] = node
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring-like string is fine
        else:
            raise NotebookError(
                f"{nb_path.name}: parameters cell line {node.lineno}: only "
                "type-annotated assignments `name: type = default  # meaning` are allowed"
            )
    quick = names.get("quick")
    if (
        quick is None
        or ast.unparse(quick.annotation) != "bool"
        or not (isinstance(quick.value, ast.Constant) and quick.value.value is False)
    ):
        raise NotebookError(
            f"{nb_path.name}: parameters cell must define `quick: bool = False`"
        )
    return src


def notebook_title(nb_path: Path) -> str:
    """First level-1 markdown heading of a notebook, else its file stem."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell["source"]
        src = "".join(src) if isinstance(src, list) else src
        for line in src.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return nb_path.stem


# --------------------------------------------------------------------------- #
# kernel and environment
# --------------------------------------------------------------------------- #
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
    subprocess.run(
        [
            sys.executable, "-m", "ipykernel", "install", "--sys-prefix",
            "--name", KERNEL_NAME, "--display-name", KERNEL_DISPLAY_NAME,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def kernel_env(figure_dir: Path, threads: int | None = None) -> dict[str, str]:
    """Environment for a papermill run: repository paths and kernel lookup."""
    env = dict(os.environ)
    env["LDP_ROOT"] = str(ROOT)
    env["LDP_FIGURE_DIR"] = str(figure_dir)
    # this venv's kernelspecs first, so `ldp` cannot be shadowed by a user-level one
    env["JUPYTER_PATH"] = os.pathsep.join(
        [str(venv_jupyter_dir())] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    )
    env.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    env.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    if threads is not None:  # avoid oversubscription when notebooks run side by side
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
            env.setdefault(var, str(threads))
    return env


# --------------------------------------------------------------------------- #
# cache key
# --------------------------------------------------------------------------- #
def _hash_tree(h: "hashlib._Hash", path: Path) -> None:
    if path.is_dir():
        for p in sorted(path.rglob("*.py")):
            h.update(p.relative_to(ROOT).as_posix().encode())
            h.update(p.read_bytes())
    elif path.is_file():
        h.update(path.relative_to(ROOT).as_posix().encode())
        h.update(path.read_bytes())


def _data_listing() -> list[tuple[str, int]]:
    # the one folder the data loaders read (ldp.datasets.data_folder): $LDP_DATA_DIR when set, else data/
    dirs = [Path(os.environ["LDP_DATA_DIR"]) if os.environ.get("LDP_DATA_DIR") else ROOT / "data"]
    out = [(str(dirs[0]), -1)]
    for d in dirs:
        if d.is_dir():
            out += [(str(p), p.stat().st_size) for p in sorted(d.iterdir()) if p.is_file()]
    return out


def cache_key(nb_path: Path, params: dict) -> str:
    """Hash of everything an execution depends on (notebook, ldp, pins, data, parameters)."""
    h = hashlib.sha256()
    h.update(nb_path.read_bytes())
    for name in SHARED_INPUTS:
        _hash_tree(h, ROOT / name)
    h.update(json.dumps(params, sort_keys=True).encode())
    h.update(json.dumps(_data_listing()).encode())
    return h.hexdigest()


# --------------------------------------------------------------------------- #
# execution
# --------------------------------------------------------------------------- #
@dataclass
class Result:
    name: str
    ok: bool
    seconds: float
    cached: bool
    message: str = ""


def papermill_command(src: Path, dst: Path, params: dict) -> list[str]:
    cmd = [
        sys.executable, "-m", "papermill", str(src), str(dst),
        "--kernel", KERNEL_NAME, "--language", "python", "--cwd", str(ROOT),
        "--no-progress-bar", "--log-level", "WARNING",
    ]
    for key, value in params.items():
        cmd += ["-p", key, str(value)]
    return cmd


def error_report(executed: Path, log: str) -> str:
    """Describe the failing cell of a partially executed notebook."""
    lines = []
    try:
        nb = json.loads(executed.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        nb = {"cells": []}
    for i, cell in enumerate(nb.get("cells", [])):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                src = cell["source"]
                src = "".join(src) if isinstance(src, list) else src
                lines.append(f"--- cell {i} (execution_count {cell.get('execution_count')}):")
                lines.append(src)
                lines.append("--- traceback:")
                tb = ANSI.sub("", "\n".join(out.get("traceback", []))).rstrip()
                lines.append(tb)
                last = f"{out.get('ename')}: {out.get('evalue')}"
                if not tb.endswith(last):
                    lines.append(last)
    if not lines:  # e.g. kernel died or papermill itself failed
        tail = ANSI.sub("", log).strip().splitlines()[-60:]
        lines = ["--- papermill output (last lines):", *tail]
    return "\n".join(lines)


def execute(
    src: Path,
    dst: Path,
    params: dict,
    figure_dir: Path,
    log_path: Path | None = None,
    threads: int | None = None,
) -> tuple[bool, str]:
    """Execute one notebook with papermill in a subprocess.

    Parameters
    ----------
    src, dst : pathlib.Path
        Source notebook and where to write the executed copy.
    params : dict
        Papermill parameters (``{"quick": True}`` or empty for paper settings).
    figure_dir : pathlib.Path
        Exported to the kernel as ``LDP_FIGURE_DIR``.
    log_path : pathlib.Path, optional
        Where to keep papermill's output.
    threads : int, optional
        Thread cap for BLAS/numba in the kernel.

    Returns
    -------
    (ok, report) : tuple of (bool, str)
        ``report`` holds the failing cell and traceback when ``ok`` is false.
    """
    dst.parent.mkdir(parents=True, exist_ok=True)
    figure_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        papermill_command(src, dst, params),
        cwd=ROOT,
        env=kernel_env(figure_dir, threads),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(proc.stdout)
    if proc.returncode == 0:
        return True, ""
    return False, error_report(dst, proc.stdout)


def run_all(
    quick: bool, jobs: int, force: bool, only: list[str] | None
) -> list[Result]:
    mode = "quick" if quick else "full"
    params = {"quick": True} if quick else {}
    cache = GENERATED / "cache" / mode
    manifest_path = cache / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}

    notebooks = source_notebooks(only)
    errors = []
    for nb in notebooks:
        try:
            parameters_cell(nb)
        except NotebookError as exc:
            errors.append(str(exc))
    if errors:
        raise NotebookError("\n".join(errors))

    todo, results = [], []
    for nb in notebooks:
        key = cache_key(nb, params)
        entry = manifest.get(nb.stem)
        done = cache / "notebooks" / nb.name
        if not force and entry and entry.get("key") == key and done.is_file():
            results.append(Result(nb.stem, True, entry.get("seconds", 0.0), True))
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
            nb, cache / "notebooks" / nb.name, params, cache / "figures",
            cache / "logs" / f"{nb.stem}.log", threads,
        )
        return nb, key, ok, time.perf_counter() - t0, report

    for nb, _ in todo:
        manifest.pop(nb.stem, None)
    print(f"[run_notebooks] mode={mode}: executing {len(todo)} notebook(s) "
          f"with {workers} worker(s), {len(results)} unchanged", flush=True)
    with cf.ThreadPoolExecutor(max_workers=workers) as pool:
        for nb, key, ok, seconds, report in pool.map(one, todo):
            status = "ok" if ok else "FAILED"
            print(f"[run_notebooks]   {nb.stem}: {status} in {seconds:.1f} s", flush=True)
            results.append(Result(nb.stem, ok, seconds, False, report))
            if ok:
                manifest[nb.stem] = {"key": key, "seconds": round(seconds, 2),
                                     "params": params, "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
                cache.mkdir(parents=True, exist_ok=True)
                manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return sorted(results, key=lambda r: r.name)


# --------------------------------------------------------------------------- #
# staging for the book
# --------------------------------------------------------------------------- #
def stage(quick: bool) -> None:
    """Copy the mode's executed notebooks and figures to the paths the book uses."""
    cache = GENERATED / "cache" / ("quick" if quick else "full")
    for sub in ("notebooks", "figures"):
        target = GENERATED / sub
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
    for folder in (GENERATED / "notebooks", cache / "notebooks"):
        for path in folder.glob("*.ipynb"):
            if path.stem not in current:
                path.unlink()
    (GENERATED / "MODE").write_text("quick\n" if quick else "full\n")


def _md_cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def parse_parameters(src: str) -> list[dict[str, str]]:
    """Parse a parameters cell into ``name``, ``type``, ``default`` and ``help``.

    ``help`` is the comment at the end of the assignment's last line (or, if
    there is none, the comment lines right above it).
    """
    tree = ast.parse(src)
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    out = []
    for node in tree.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        help_text = comments.get(node.end_lineno, "")
        if not help_text:
            above, line = [], node.lineno - 1
            while line in comments:
                above.insert(0, comments[line])
                line -= 1
            help_text = " ".join(above)
        out.append(
            {
                "name": node.target.id,
                "type": ast.unparse(node.annotation),
                "default": ast.get_source_segment(src, node.value) or ast.unparse(node.value),
                "help": help_text,
            }
        )
    return out


def params_markdown() -> str:
    """Markdown (MyST) with one section per notebook: rerun command and parameter table."""
    out = [
        "<!-- Generated by scripts/run_notebooks.py from the notebooks' "
        "`parameters` cells. Do not edit. -->",
        "",
    ]
    for nb in source_notebooks():
        params = parse_parameters(parameters_cell(nb))
        title = notebook_title(nb)
        example = " ".join(
            f"-p {p['name']} {_shell_value(p['default'])}"
            for p in params if p["name"] != "quick"
        )
        out += [
            f"## {title}",
            "",
            f"Source: `notebooks/{nb.name}`. Rerun with your own values:",
            "",
            "```bash",
            f"mkdir -p my-runs && LDP_FIGURE_DIR=my-runs/figures .venv/bin/papermill "
            f"notebooks/{nb.name} my-runs/{nb.name} -k {KERNEL_NAME} --cwd . {example}".rstrip(),
            "```",
            "",
            "| Parameter | Type | Default (paper setting) | Meaning |",
            "| --- | --- | --- | --- |",
        ]
        for p in params:
            out.append(
                f"| `{p['name']}` | `{_md_cell(p['type'])}` | "
                f"`{_md_cell(p['default'])}` | {_md_cell(p['help'])} |"
            )
        out.append("")
    if len(out) == 2:
        out.append("*No notebooks yet.*")
    return "\n".join(out) + "\n"


def _shell_value(default: str) -> str:
    """Render a parameter's default for a shell command line."""
    d = default.strip()
    if re.fullmatch(r"[A-Za-z0-9_.+\-]+", d):
        return d.replace("_", "") if re.fullmatch(r"[0-9_]+", d) else d
    if len(d) >= 2 and d[0] == d[-1] and d[0] in "'\"":
        inner = d[1:-1]
        return inner if re.fullmatch(r"[A-Za-z0-9_.+\-/]+", inner) else f"'{inner}'"
    return f"'{d}'"


def write_params_page() -> Path:
    path = GENERATED / "params.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(params_markdown(), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- #
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="pass -p quick True (fast settings)")
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed in parallel (default 2)")
    ap.add_argument("--force", action="store_true", help="execute even if the cache is current")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="execute only these notebooks")
    ap.add_argument("--params-only", action="store_true", help="only write _generated/params.md")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")

    t0 = time.perf_counter()
    try:
        if not args.params_only:
            results = run_all(args.quick, args.jobs, args.force, args.only)
            failed = [r for r in results if not r.ok]
            for r in failed:
                print(f"\n[run_notebooks] ===== {r.name} failed =====\n{r.message}\n",
                      file=sys.stderr, flush=True)
            if failed:
                print(f"[run_notebooks] {len(failed)} notebook(s) failed: "
                      f"{', '.join(r.name for r in failed)}; logs in "
                      f"_generated/cache/{'quick' if args.quick else 'full'}/logs/",
                      file=sys.stderr)
                return 1
            stage(args.quick)
        write_params_page()
    except NotebookError as exc:
        print(f"[run_notebooks] error:\n{exc}", file=sys.stderr)
        return 2
    print(f"[run_notebooks] done in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
