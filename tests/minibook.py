"""A small Jupyter Book in a temporary folder, configured like the project's.

Used by the tests that build one chapter or page with this repository's
``_config.yml`` and ``-W -n`` (warnings are errors): the configuration, the local
MathJax (``book/_static``) and the project's Sphinx extensions (``book/_ext``) are
linked in, and the table of contents lists what the test asks for.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def scaffold(book: Path, files: list[str]) -> None:
    """Write ``_config.yml``, ``_toc.yml`` (root ``index`` plus ``files``) and the shared folders."""
    book.mkdir(parents=True, exist_ok=True)
    if not (book / "index.md").exists():
        (book / "index.md").write_text("# Index\n")
    toc = "format: jb-book\nroot: index\nchapters:\n" + "".join(f"  - file: {f}\n" for f in files)
    (book / "_toc.yml").write_text(toc)
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    (book / "book").mkdir(exist_ok=True)
    for sub in ("_static", "_ext"):  # html_static_path (local MathJax) and local_extensions
        src, dst = ROOT / "book" / sub, book / "book" / sub
        if src.is_dir():
            dst.symlink_to(src, target_is_directory=True)
        else:
            dst.mkdir()


def build(book: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``jupyter-book build BOOK -W -n --keep-going --all`` with this venv's jupyter-book."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("jupyter-book")), "build", str(book), "-W", "-n",
         "--keep-going", "--all"],
        env=env, capture_output=True, text=True,
    )
