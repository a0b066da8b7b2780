"""Every notebook in notebooks/ follows the conventions and runs with quick=True.

- ``test_parameters_cell``: one cell tagged ``parameters``, type-annotated
  defaults only, ``quick: bool = False``, valid ``[quick: ...]`` values
  (checked without running anything).
- ``test_executes_quick``: the notebook runs to the end with papermill,
  ``quick=True`` and its quick values (kernel ``ldp``, cwd = repository root) into a temporary
  folder, with figures going to a temporary ``LDP_FIGURE_DIR``. When the quick
  book build (``make test`` runs it first) already executed the *same* inputs
  (same cache key: notebook, ``ldp/`` sources, pins, data listing), its executed
  copy is checked instead of running the notebook a second time; set
  ``LDP_NOTEBOOK_TESTS_REEXECUTE=1`` to always execute. No output shows a warning (stderr).
- ``test_cross_document_glue``: a Markdown page can paste a value glued in a
  notebook (``{glue:text}`path/NAME.ipynb::key:fmt```) and reference its
  numbered figure, with this repository's ``_config.yml`` and ``-W``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import minibook

ROOT = Path(__file__).resolve().parents[1]


def _load_runner():
    spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "scripts" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_notebooks", module)
    spec.loader.exec_module(module)
    return module


runner = _load_runner()
NOTEBOOKS = runner.source_notebooks()


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks in {runner.NOTEBOOK_DIR}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_cell(nb_path: Path):
    runner.parameters_cell(nb_path)  # raises NotebookError with the reason
    params = runner.notebook_parameters(nb_path)  # also checks defaults and quick values
    assert "quick" in params
    undocumented = [name for name, p in params.items() if not p.help]
    assert not undocumented, (
        f"{nb_path.name}: parameters without a `# meaning` comment: {undocumented}"
    )


def _errors(nb: nbformat.NotebookNode) -> list[str]:
    return [
        f"{out.get('ename')}: {out.get('evalue')}"
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


def _warnings(nb: nbformat.NotebookNode) -> list[str]:
    """Warning lines a reader would see under a cell (a stderr stream), e.g. a pandas deprecation."""
    return [line for cell in nb.cells for out in cell.get("outputs", [])
            if out.get("output_type") == "stream" and out.get("name") == "stderr"
            for line in out.get("text", "").splitlines() if "Warning" in line]


def _injected_quick(nb: nbformat.NotebookNode) -> bool:
    return nb.metadata.get("papermill", {}).get("parameters", {}).get("quick") is True


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_executes_quick(nb_path: Path, tmp_path: Path):
    cache = runner.GENERATED / "cache" / "quick"
    manifest_path = cache / "manifest.json"
    entry = json.loads(manifest_path.read_text()).get(nb_path.stem) if manifest_path.is_file() else None
    cached = cache / "notebooks" / nb_path.name
    quick = runner.mode_parameters(nb_path, True)
    reuse = (
        os.environ.get("LDP_NOTEBOOK_TESTS_REEXECUTE", "") not in {"1", "true", "yes"}
        and entry is not None
        and entry.get("key") == runner.cache_key(nb_path, quick)
        and cached.is_file()
    )
    if reuse:
        executed = cached
    else:
        runner.ensure_kernel()
        executed = tmp_path / nb_path.name
        ok, report = runner.execute(
            nb_path, executed, quick, tmp_path / "figures", tmp_path / "papermill.log"
        )
        assert ok, f"{nb_path.name} failed with quick=True:\n{report}"

    nb = nbformat.read(executed, as_version=4)
    assert _injected_quick(nb), f"{executed}: papermill did not inject quick=True"
    assert not _errors(nb), f"{executed}: error outputs {_errors(nb)}"
    assert not _warnings(nb), f"{executed}: warnings in the outputs {_warnings(nb)}"
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert code_cells and all(c.get("execution_count") for c in code_cells), (
        f"{executed}: not every code cell was executed"
    )


GLUE_NOTEBOOK_CELLS = [
    ("code", 'answer: float = 41.5  # a parameter\nquick: bool = False  # quick mode', ["parameters"]),
    ("code", "import matplotlib.pyplot as plt\nfrom myst_nb import glue\n"
             "glue('answer', answer + 0.5, display=False)\n"
             "fig, ax = plt.subplots(figsize=(2, 2))\nax.plot([0, 1], [0, 1])\n"
             "fig.savefig('fig-mini.svg')\nplt.close(fig)", []),
    ("markdown", "# Mini notebook\n\n```{figure} fig-mini.svg\n:name: fig-mini\n\nA line.\n```\n\n"
                 "Here: {glue:text}`answer:.1f`.", []),
]


@pytest.mark.slow
def test_cross_document_glue(tmp_path: Path):
    """Glue from a notebook pasted into a Markdown page builds with -W (the recipe in README)."""
    book = tmp_path / "book"
    (book / "nb").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": runner.KERNEL_NAME, "display_name": "ldp", "language": "python"}
    for kind, src, tags in GLUE_NOTEBOOK_CELLS:
        cell = nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_markdown_cell(src)
        cell.metadata["tags"] = tags
        nb.cells.append(cell)
    # the markdown heading must come first for a page title
    nb.cells.insert(0, nb.cells.pop())
    src = book / "nb" / "source.ipynb"
    nbformat.write(nb, src)
    runner.ensure_kernel()
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", str(src), str(book / "nb" / "mini.ipynb"),
         "-k", runner.KERNEL_NAME, "--cwd", str(book / "nb"), "--no-progress-bar",
         "-p", "quick", "True"],
        env=runner.kernel_env(tmp_path / "figures"), capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    src.unlink()
    (book / "page.md").write_text(
        "# Page\n\nPasted: {glue:text}`nb/mini.ipynb::answer:.2f`; "
        "see {numref}`fig-mini`.\n"
    )
    minibook.scaffold(book, ["nb/mini", "page"])
    proc = minibook.build(book, env=runner.kernel_env(tmp_path / "figures"))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    html = (book / "_build" / "html" / "page.html").read_text()
    assert '<span class="pasted-text">42.00</span>' in html
    assert "Figure A.1" in html  # not a figure of the paper: the book's own series (book/_ext/ldp_numbers.py)
