"""The book's chapter notebooks: finding them in ``notebooks/`` and reading them.

The notebooks are part of the source repository, not of the installed package,
so everything here needs a source checkout (or ``$LDP_ROOT`` naming one).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from ...paths import repo_root

__all__ = ["NotebookError", "notebook_dir", "source_notebooks", "find_notebook", "read_notebook", "cell_source",
           "notebook_title", "rerun_example"]


class NotebookError(RuntimeError):
    """A source notebook does not follow the project's conventions (or is missing)."""



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
        hits = [p for p in paths if (num := re.match(r"\d+", p.stem)) and int(num[0]) == int(key)]
    if not hits and key:
        hits = [p for p in paths if key.lower() in p.stem.lower()]
    if len(hits) == 1:
        return hits[0]
    names = ", ".join(p.stem for p in (hits or paths))
    what = "matches several notebooks" if hits else "names no notebook"
    raise NotebookError(f"{name!r} {what}; the notebooks are: {names}")


def read_notebook(nb_path: Path) -> dict:
    """The notebook's JSON as a dict (no validation)."""
    return json.loads(Path(nb_path).read_text(encoding="utf-8"))


def cell_source(cell: dict) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def notebook_title(nb_path: Path) -> str:
    """First level-1 markdown heading of a notebook, else its file stem."""
    for cell in read_notebook(nb_path).get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in cell_source(cell).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return Path(nb_path).stem

def rerun_example(nb_path: Path) -> list[str]:
    """The example ``NAME=VALUE`` settings of a notebook (metadata ``ldp.rerun_example``).

    The parameters page prints them as the notebook's rerun command, and the
    tests run that command; an empty list when the notebook declares none.
    """
    example = read_notebook(nb_path).get("metadata", {}).get("ldp", {}).get("rerun_example", [])
    if not (isinstance(example, list) and all(isinstance(s, str) for s in example)):
        raise NotebookError(f"{Path(nb_path).name}: metadata ldp.rerun_example must be a list of "
                            "'NAME=VALUE' strings")
    return example

