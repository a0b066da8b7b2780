"""sphinx-proof's directives build with this repository's _config.yml, in HTML and in the PDF.

A tiny book (a proposition with a title and label, its proof with a numbered equation, a
lemma, references to all three) is built with ``-W -n`` as HTML and, when XeLaTeX and
latexmk are installed (``make test`` needs them for ``make pdf``), as a PDF. The README's
developer notes show the same syntax.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")

PAGE = r"""# Proofs

```{prf:proposition} Unbiased counts
:label: prop-unbiased

For every value $v$, $\mathbb{E}[\tilde c(v)] = c(v)$.
```

```{prf:proof}
By linearity of expectation,

$$
\mathbb{E}[\tilde c(v)] = \frac{\mathbb{E}[C(v)] - n q}{p - q} = c(v).
$$ (eq-unbiased)
```

```{prf:lemma}
:label: lem-small

A lemma, used in the proof of {prf:ref}`prop-unbiased`.
```

See {prf:ref}`prop-unbiased`, {prf:ref}`lem-small` and {eq}`eq-unbiased`.
"""


@pytest.fixture
def mini_book(tmp_path: Path) -> Path:
    book = tmp_path / "book"
    (book / "book").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", book / "_config.yml")
    # the folders _config.yml names: extensions, LaTeX files, static files (local MathJax)
    for name in ("_ext", "_latex", "_static"):
        src = ROOT / "book" / name
        if src.is_dir():
            (book / "book" / name).symlink_to(src, target_is_directory=True)
        else:
            (book / "book" / name).mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n  - file: proofs\n")
    (book / "index.md").write_text("# A tiny book\n\nsphinx-proof example.\n")
    (book / "proofs.md").write_text(PAGE)
    return book


def _build(book: Path, *args: str) -> None:
    proc = subprocess.run([str(JUPYTER_BOOK), "build", str(book), "-W", "-n", "--keep-going", "--all", *args],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


@pytest.mark.slow
def test_proof_directives_html(mini_book: Path):
    _build(mini_book)
    html = (mini_book / "_build" / "html" / "proofs.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "Proposition 1 (Unbiased counts)" in text, "numbered, titled proposition"
    assert re.search(r"Lemma 1\b", text)
    assert re.search(r"\bProof\.", text)
    assert '<a class="reference internal" href="#prop-unbiased">Proposition 1</a>' in html
    assert '<a class="reference internal" href="#lem-small">Lemma 1</a>' in html
    assert 'href="#equation-eq-unbiased">(A.1)</a>' in html  # the book's own series (book/_ext/ldp_numbers.py)


@pytest.mark.slow
def test_proof_directives_pdf(mini_book: Path):
    if not (shutil.which("xelatex") and shutil.which("latexmk") and shutil.which("pdftotext")):
        reason = "xelatex, latexmk or pdftotext missing (see README, The PDF)"
        if IN_CI:
            pytest.fail(reason)
        pytest.skip(reason)
    _build(mini_book, "--builder", "pdflatex")
    pdf = mini_book / "_build" / "latex" / "ldp-book.pdf"
    text = " ".join(subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True,
                                   text=True, check=True).stdout.split())
    assert "Proposition 1 (Unbiased counts)" in text
    assert "Lemma 1" in text and "Proof." in text
    assert "See Proposition 1, Lemma 1 and (A.1)." in text
