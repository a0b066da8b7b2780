"""The PDF of the book (``make pdf``, which ``make test`` runs in quick mode) against the HTML.

``make test`` builds ``_build/html`` and then ``_build/latex/ldp-book.pdf`` from the same
executed notebooks; these tests only read the results:

- the PDF is the reproduction a reader prints: exactly the pages of ``_toc_pdf.yml`` (the chapters, the
  report, the interpretation, how to cite), in its parts, and nothing of the library reference (no API
  entry); a chapter's code cells tagged ``hide-input`` (imports, glue) are not printed, its other code is;

- every figure and every numbered equation of the HTML book has the same number in the
  PDF (from LaTeX's ``.aux`` labels): the paper's number for what the book reproduces
  (``book/_ext/paper_numbers.yml``), A.1, A.2, ... for the book's own; and every figure's
  graphic went into the PDF;
- every figure of the paper (Figures 1-9) is in the PDF's text as "Figure N: caption", N the
  paper's number, and every figure of the book's own as "Figure A.n: caption";
- notebook tables shown as HTML (pandas DataFrame, Styler) are tables in the PDF too
  (book/_ext/ldp_latex.py), not the Styler's "<pandas.io.formats.style.Styler at 0x...>";
- the final LaTeX run left no missing glyph, undefined reference or error behind.

Under ``CI=true`` a missing build or a missing ``pdftotext`` is a failure; elsewhere the
tests are skipped with the reason.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from docutils import nodes

from builds import unavailable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import ldp_latex  # noqa: E402  (book/_ext/ldp_latex.py)

HTML = ROOT / "_build" / "html"
LATEX = ROOT / "_build" / "latex"
PDF = LATEX / "ldp-book.pdf"
# book label -> the paper's figure number (Figures 1-9)
PAPER_FIGURES = {label: entry["number"]
                 for entry in yaml.safe_load((ROOT / "book" / "_ext" / "paper_numbers.yml").read_text())["figures"]
                 for label in entry["book"]}

FIGURE = re.compile(
    r'<figure[^>]*\bid="(fig-[^"]+)".*?<img[^>]*\bsrc="[^"]*?([^"/]+)\.svg".*?'
    r'<span class="caption-number">Figure (\d+|A\.\d+) </span><span class="caption-text">(.*?)</span>',
    re.S,
)
EQUATION = re.compile(r'id="equation-([^"]+)">\s*<span class="eqno">\((\d+|A\.\d+)\)')
AUX_LABEL = re.compile(r"\\newlabel\{(equation:)?([^{}]+):([^:{}]+)\}\{\{([^{}]*)\}")


@pytest.fixture(scope="module")
def built() -> Path:
    if not PDF.is_file():
        unavailable(f"no PDF at {PDF}: run `make pdf QUICK=1` (make test does)")
    if not (HTML / "index.html").is_file():
        unavailable(f"no HTML book in {HTML}: run `make book QUICK=1` (make test does)")
    return PDF


@pytest.fixture(scope="module")
def pdf_text(built: Path) -> str:
    if shutil.which("pdftotext") is None:
        unavailable("pdftotext missing: apt-get install poppler-utils")
    out = subprocess.run(["pdftotext", "-enc", "UTF-8", str(built), "-"], capture_output=True,
                         text=True, check=True).stdout
    return " ".join(out.split())


def html_numbers() -> tuple[dict, dict, dict]:
    """From the HTML book: {(docname, figure id): (number, graphic, caption)} and equations."""
    figures, equations, captions = {}, {}, {}
    for page in HTML.rglob("*.html"):
        docname = page.relative_to(HTML).with_suffix("").as_posix()
        text = page.read_text(encoding="utf-8")
        for fig_id, graphic, number, caption in FIGURE.findall(text):
            figures[(docname, fig_id)] = (number, graphic)
            captions[fig_id] = (number, " ".join(html.unescape(re.sub(r"<[^>]+>", "", caption)).split()))
        for label, number in EQUATION.findall(text):
            equations[(docname, label)] = number
    return figures, equations, captions


def aux_numbers() -> tuple[dict, dict]:
    figures, equations = {}, {}
    for is_eq, docname, label, number in AUX_LABEL.findall((LATEX / "ldp-book.aux").read_text(encoding="utf-8")):
        (equations if is_eq else figures)[(docname, label)] = number
    return figures, equations


def test_figure_and_equation_numbers_match_html(built: Path):
    html_figs, html_eqs, _ = html_numbers()
    aux_figs, aux_eqs = aux_numbers()
    assert len(html_figs) > len(PAPER_FIGURES), f"only {len(html_figs)} numbered figures in the HTML book"
    assert html_eqs, "no numbered equations in the HTML book"
    wrong = [(key, n, aux_figs.get(key)) for key, (n, _) in html_figs.items() if aux_figs.get(key) != str(n)]
    assert not wrong, f"figures numbered differently in the PDF (key, HTML, PDF): {wrong}"
    wrong = [(key, n, aux_eqs.get(key)) for key, n in html_eqs.items() if aux_eqs.get(key) != str(n)]
    assert not wrong, f"equations numbered differently in the PDF (key, HTML, PDF): {wrong}"


def test_every_figure_graphic_is_in_the_pdf(built: Path):
    """LaTeX included each figure's PDF (the wildcard {figure} picks NAME.pdf), not a stand-in."""
    html_figs, _, _ = html_numbers()
    log = (LATEX / "ldp-book.log").read_text(encoding="utf-8", errors="replace")
    used = set(re.findall(r"<use ([^<>]+?)\.pdf>", log))
    missing = sorted(graphic for _, graphic in html_figs.values() if graphic not in used)
    assert not missing, f"figure graphics not included in the PDF: {missing}"


def test_every_paper_figure_is_in_the_pdf(pdf_text: str):
    """Figures 1-9 of the paper appear as "Figure N: caption" with the paper's N, the book's own
    figures as "Figure A.n: caption", each with the caption of the HTML book."""
    _, _, captions = html_numbers()
    numbers = {fig_id: number for fig_id, (number, _) in captions.items()}
    assert {k: numbers.get(k) for k in PAPER_FIGURES} == {k: str(n) for k, n in PAPER_FIGURES.items()}
    own = sorted(n for k, n in numbers.items() if k not in PAPER_FIGURES)
    assert own and all(n.startswith("A.") for n in own), f"the book's own figures: {own}"
    missing = []
    for fig_id, (number, caption) in captions.items():
        start = r"\W+".join(re.findall(r"\w+", caption)[:5])
        if not re.search(rf"Figure {re.escape(number)}: \W*{start}", pdf_text):
            missing.append(f"Figure {number} ({fig_id}): {caption[:50]}")
    assert not missing, "captions not in the PDF as in the HTML:\n" + "\n".join(missing)


def test_latex_log_clean(built: Path):
    """The final XeLaTeX run: no missing glyph, undefined reference or citation, or error."""
    log = (LATEX / "ldp-book.log").read_text(encoding="utf-8", errors="replace")
    problems = re.findall(
        r"^(?:Missing character: .*|! .*|LaTeX Warning: (?:Reference|Citation|Hyper reference) .*undefined.*"
        r"|LaTeX Warning: There were undefined references.*|LaTeX Warning: Label\(s\) may have changed.*)$",
        log, re.M,
    )
    assert not problems, "LaTeX problems in ldp-book.log:\n" + "\n".join(problems[:20])


def test_notebook_tables_are_tables_in_the_pdf(pdf_text: str):
    # an output printed as its repr (the library reference may name the type in a docstring)
    assert not re.search(r"pandas\.io\.formats\.style\.Styler (object )?at 0x", pdf_text)
    tex = (LATEX / "ldp-book.tex").read_text(encoding="utf-8")
    assert tex.count(r"\begin{sphinxuseclass}{ldptable}") >= 10, "notebook tables were not converted"


def test_html_table_to_nodes():
    html = """<style>td {}</style><table><caption>Costs, $\\varepsilon = 1$</caption>
      <thead><tr><th rowspan="2">method</th><th colspan="2">users</th></tr>
             <tr><th>n[1]</th><th>$n_2$</th></tr></thead>
      <tbody><tr><th>PEM</th><td>20000</td><td>1.5e+07</td></tr></tbody></table>"""
    (wrapper,) = ldp_latex.html_table_to_nodes(html)
    assert wrapper["classes"] == ["ldptable"]  # LaTeX environment sphinxclassldptable
    caption, table = wrapper.children
    assert caption.astext() == "Costs, \\varepsilon = 1" and caption.next_node(nodes.math)
    group = table.next_node(nodes.tgroup)
    assert group["cols"] == 3
    assert [c["colwidth"] for c in group.findall(nodes.colspec)] == [6, 5, 7]
    head = table.next_node(nodes.thead)
    first, second = head.findall(nodes.row)
    assert [(e["morerows"], e["morecols"]) for e in first.findall(nodes.entry)] == [(1, 0), (0, 1)]
    assert [e.astext() for e in second.findall(nodes.entry)] == ["n[1]", "n_2"]
    assert second.next_node(nodes.math).astext() == "n_2"
    body = table.next_node(nodes.tbody)
    assert [e.astext() for e in body.findall(nodes.entry)] == ["PEM", "20000", "1.5e+07"]
    wide = "<table><tr>" + "<td>1</td>" * (ldp_latex.MAX_COLUMNS + 1) + "</tr></table>"
    assert ldp_latex.html_table_to_nodes(wide) is None
    assert ldp_latex.html_table_to_nodes("<p>no table</p>") is None
    assert ldp_latex.html_table_to_nodes("<table><thead><tr><th>a</th></tr></thead></table>") is None
    assert "longtable" not in table["classes"]  # a short table stays a tabular
    words = " ".join(["privacy"] * (ldp_latex.LONG_TABLE_CHARS // 8 + 1))
    (long,) = ldp_latex.html_table_to_nodes(f"<table><tr><td>{words}</td></tr></table>")
    assert "longtable" in long.children[-1]["classes"]  # much text: its rows break across pages


def test_column_widths_keep_the_longest_word():
    rows = [["Parameter", "Meaning"], ["`tuning_repetitions`", "runs per candidate setting and epsilon in the sweep"]]
    name, meaning = ldp_latex.column_widths(rows)
    assert name >= len("`tuning_repetitions`") + 2 and meaning > len("candidate") + 2


def test_column_widths_fit_the_text_width():
    """A column of short code beside a long text column (the rerun page's parameter tables) gets
    room for its longest word plus the column gap; a table whose longest words cannot all fit
    side by side counts its code up to the places where it may break."""
    head = ["Parameter", "Type", "Default (paper setting)", "Quick", "Meaning"]
    meaning = "root seed, split with numpy.random.SeedSequence.spawn (allowed: x ≥ 0) " * 2
    rows = [head, ["ldp_check_seeds", "float", "20190101", "20_000", meaning]]
    code = [[True] * 5, [True] * 4 + [False]]
    widths = ldp_latex.column_widths(rows, code)
    share = [w / sum(widths) * ldp_latex.LINE_CHARS for w in widths]
    need = [1.25 * n + 2.5 for n in (15, 5, 8, 6)]  # code (and header) characters + the 12 pt gap
    assert all(s >= n for s, n in zip(share, need)), (widths, need)
    assert widths[4] == max(widths)  # the text column takes the rest
    rows.append(["benchmark_csv", "str", '"benchmarks/results/bench_scale.csv"', "[1024]", meaning])
    code.append([True] * 4 + [False])
    widths = ldp_latex.column_widths(rows, code)
    assert sum(widths) <= ldp_latex.LINE_CHARS + len(widths)
    assert widths[2] >= 1.25 * len('"benchmarks/') + 2.5


def test_cell_text_counts_math_as_printed():
    entry = nodes.entry("", nodes.paragraph("", "", nodes.Text("eq. (3), "),
                                            nodes.math("", r"\frac{d-2+e^\varepsilon}{(e^\varepsilon-1)^2}n")))
    assert ldp_latex.cell_text(entry) == "eq. (3), d-2+e(e-1)2n"


def test_quick_build_says_so_on_the_title_page(tmp_path: Path):
    from types import SimpleNamespace

    (tmp_path / "_generated").mkdir()
    for mode, root, noted in (("quick\n", "book/intro", True), ("paper\n", "book/intro", False),
                              ("quick\n", ldp_latex.REFERENCE_ROOT, False)):  # the reference holds no result
        (tmp_path / "_generated" / "MODE").write_text(mode)
        config = SimpleNamespace(latex_elements={"preamble": r"\usepackage{ldpbook}"}, root_doc=root)
        ldp_latex.quick_title(SimpleNamespace(srcdir=str(tmp_path)), config)
        assert config.latex_elements["preamble"].endswith(ldp_latex.QUICK_NOTE) is noted


def test_quick_pdf_title_page(pdf_text: str):
    if (ROOT / "_generated" / "MODE").read_text().strip() == "quick":
        assert "quick build: small settings" in pdf_text[:600]


def test_no_overfull_box(built: Path):
    """Nothing runs off the bottom of a page or out of the text width: the log reports no overfull
    vbox or hbox, with LaTeX's default tolerances in force (0.1 pt: not Sphinx's \\sloppy's 0.5 pt).

    Each overfull box of the log is placed on its page of the book by the last ``.tex`` line the
    log named before it (LaTeX reports one found while shipping a page without a line).
    """
    log = (LATEX / "ldp-book.log").read_text(encoding="utf-8", errors="replace")
    assert r"ldpbook: \hfuzz=0.1pt, \vfuzz=0.1pt" in log, "the fuzz in force is not LaTeX's default"
    tex = (LATEX / "ldp-book.tex").read_text(encoding="utf-8").splitlines()
    starts = [(i, m.group(1)) for i, line in enumerate(tex, 1)
              for m in [re.search(r"\\label\{\\detokenize\{([^}]*?)::doc\}\}", line)] if m]
    found, line = [], 0
    for m in re.finditer(r"lines? (\d+)|^(Overfull \\[hv]box.*)$", log, re.M):
        if m.group(1):
            line = int(m.group(1))
        if m.group(2):
            own = re.search(r"lines? (\d+)", m.group(2))  # "in paragraph at lines N--M", "detected at line N"
            line = int(own.group(1)) if own else line
            doc = max((d for d in starts if d[0] <= line), default=(0, "?"))[1]
            found.append(f"{doc} (.tex line {line}): {m.group(2)}")
    assert not found, f"{len(found)} overfull boxes:\n" + "\n".join(found[:30])


def test_no_fuzz_in_the_latex_settings():
    """The book's LaTeX settings hide no overfull box: in book/_latex and the preamble of
    _config.yml, no \\hfuzz, \\vfuzz or badness setting but the one that restores LaTeX's
    defaults after Sphinx's \\sloppy (ldpbook.sty)."""
    sources = [*(ROOT / "book" / "_latex").glob("*.sty"), ROOT / "_config.yml"]
    setting = re.compile(r"\\+[hv](?:fuzz|badness)\b")
    restore = r"\AtBeginDocument{\hfuzz=0.1pt \vfuzz=\hfuzz"
    found = [f"{path.name}: {line.strip()}" for path in sources
             for line in path.read_text(encoding="utf-8").splitlines()
             if setting.search(line.split("%")[0]) and line.strip() != restore and "\\typeout" not in line]
    assert not found, found
    assert restore in (ROOT / "book" / "_latex" / "ldpbook.sty").read_text(encoding="utf-8")


def _toc_pages(name: str) -> tuple[list[str], list[str]]:
    """The parts' captions and every page (root first) of a table of contents."""
    toc = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [c["file"] for c in part["chapters"]]
    return [part["caption"] for part in toc.get("parts", [])], pages


def test_the_reader_pdf_is_the_reproduction_without_the_reference(built: Path):
    tex = (LATEX / "ldp-book.tex").read_text(encoding="utf-8")
    docs = set(re.findall(r"\\label\{\\detokenize\{([^}]*?)::doc\}\}", tex))
    captions, pages = _toc_pages("_toc_pdf.yml")
    assert docs == set(pages), (sorted(docs - set(pages)), sorted(set(pages) - docs))
    assert re.findall(r"^\\part\{([^}]*)\}", tex, re.M) == captions
    assert not [d for d in docs if d.startswith("book/api/")]
    assert "fulllineitems" not in tex and "\\pysigline" not in tex  # no entry of the library reference
    assert r"\part{Library reference}" not in tex


def _code_lines(cell: dict) -> list[str]:
    """A code cell's statements as a reader would find them in the PDF's text (no comments, no blank lines)."""
    lines = [" ".join(line.split("#")[0].split()) for line in "".join(cell["source"]).splitlines()]
    return [line for line in lines if len(line) >= 12]


def test_hidden_code_is_not_printed(pdf_text: str):
    """Each chapter's ``hide-input`` cells (imports, the glue it quotes) are not in the PDF; its other code is.

    A hidden line is looked for only if no printed code of any chapter holds it (chapters share statements)."""
    notebooks = sorted((ROOT / "_generated" / "notebooks").glob("*.ipynb"))
    assert notebooks, "no executed notebooks in _generated/notebooks"
    hidden, shown = {}, {}
    for nb in notebooks:
        cells = [c for c in json.loads(nb.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        tags = [set(c.get("metadata", {}).get("tags", [])) for c in cells]
        shown[nb.name] = [line for c, t in zip(cells, tags) if not t & {"hide-input", "remove-input", "remove-cell"}
                          for line in _code_lines(c)]
        hidden[nb.name] = [line for c, t in zip(cells, tags) if "hide-input" in t for line in _code_lines(c)]
    everywhere = " | ".join(line for lines in shown.values() for line in lines)
    for name in shown:
        secret = [line for line in hidden[name] if line not in everywhere and len(line) <= 70]
        printed = [line for line in shown[name] if len(line) <= 60]
        assert secret and printed, name  # every chapter hides its imports and shows some code
        assert not [line for line in secret if line in pdf_text], name
        assert [line for line in printed if line in pdf_text], name


REFERENCE_PDF = ROOT / "_build" / "reference" / "_build" / "latex" / "ldp-reference.pdf"


def test_the_library_reference_is_its_own_pdf():
    """``make pdf-reference`` (not part of ``make test``: skipped without it): the reference alone, titled as such,
    every page of ``_toc_reference.yml`` and no chapter; no quick-build note (it holds no result)."""
    if not REFERENCE_PDF.is_file():
        pytest.skip(f"no {REFERENCE_PDF}: run `make pdf-reference`")
    tex = REFERENCE_PDF.with_suffix(".tex").read_text(encoding="utf-8")
    docs = set(re.findall(r"\\label\{\\detokenize\{([^}]*?)::doc\}\}", tex))
    assert docs == set(_toc_pages("_toc_reference.yml")[1] + [c["file"] for c in yaml.safe_load(
        (ROOT / "_toc_reference.yml").read_text(encoding="utf-8"))["chapters"]])
    assert r"\title{The ldp library: reference}" in tex and "fulllineitems" in tex
    assert ldp_latex.QUICK_NOTE not in tex
