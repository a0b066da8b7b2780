"""The PDFs (``make pdf``: the reproduction a reader prints; ``make pdf-reference``: the library reference).

A Sphinx extension (listed in ``_config.yml``); it acts on LaTeX builds only. (The numbers of
figures and equations, the same in the PDF as in the HTML, are set by ``ldp_numbers.py``.)

Two documents. ``make pdf`` builds the table of contents ``_toc_pdf.yml`` (the chapters, the report,
the interpretation and how to cite), ``make pdf-reference`` builds ``_toc_reference.yml`` (rooted at the
reference's index, :data:`REFERENCE_ROOT`), which this extension names ``ldp-reference.tex`` with its own
title (:data:`REFERENCE`). A link (``{doc}``, or ``{ref}`` to a target) from a printed page to a page of the
online book that is not in this PDF (the rerun page, the deployment page) is printed as that page's or
section's title, in italics, with the words "in the online book" (:func:`outside_link`), instead of
failing the nitpicky build.

Code. The printed chapters show only the code a reader learns from: a notebook cell's input tagged
``hide-input`` (the imports, the glue that collects what the text quotes) is folded in the HTML and left
out of the PDF (sphinx-jupyterbook-latex's ``MystNbPostTransform`` replaces it by a node LaTeX skips;
``tests/test_pdf.py`` checks the PDF), and myst-nb leaves ``remove-input`` and ``remove-cell`` out of both.

Tables. For LaTeX, myst-nb shows a notebook output's PDF, PNG, LaTeX, Markdown or plain-text
form, never its HTML. A pandas ``Styler``'s plain text is only ``<pandas.io.formats.style.Styler
at 0x...>`` and a ``DataFrame``'s a fixed-width dump, so the PDF would lose the tables. When an
output has no PDF, image or LaTeX form but an HTML form holding one ``<table>``, the output
becomes a docutils table of the same cells (header rows, ``colspan``/``rowspan``, ``$...$``
as math; a ``<caption>`` as a paragraph above it, so no "Table N" number the HTML lacks).
Tables of more than ``MAX_COLUMNS`` columns do not fit the page and keep their plain text.

Column widths. Every other table of the book's pages (MyST tables: the interpretation page, the
parameters on the rerun page, ...) gets column widths in proportion to its longest word plus half
its mean cell length, each at least its longest word (:func:`column_widths`), instead of LaTeX's ``tabulary``/``longtable``
guesses, which squeeze a column of code below its longest name or run a long table off the page.
The reproduction report lays out its own tables.

Title page. A quick build (``_generated/MODE`` reads ``quick``: small settings, not the
paper's) says so under the title, so that a printed copy cannot pass for the paper-scale book.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

# outputs that LaTeX shows as they are: the HTML table is then not needed
_LATEX_READY = {"application/pdf", "image/png", "image/jpeg", "text/latex"}
# wider tables do not fit the page's text width legibly; they stay plain text
MAX_COLUMNS = 12
#: body text (characters) above which a table is set as a longtable, whose rows break across pages: about
#: half a page of the tables' small type, so no tabular can be taller than a page
LONG_TABLE_CHARS = 2500
_MATH = re.compile(r"(?<!\\)\$([^$]+?)(?<!\\)\$")


def _cell_content(text: str) -> nodes.paragraph:
    """A paragraph of the cell's text, ``$...$`` as inline math."""
    para = nodes.paragraph()
    pos = 0
    for match in _MATH.finditer(text):
        if match.start() > pos:
            para += nodes.Text(text[pos:match.start()])
        para += nodes.math(match.group(1), match.group(1))
        pos = match.end()
    if pos < len(text):
        para += nodes.Text(text[pos:])
    return para


def html_table_to_nodes(html: str) -> list[nodes.Node] | None:
    """docutils nodes for the single ``<table>`` in ``html``.

    None when ``html`` has no table, several or nested ones, no body rows, or more than
    ``MAX_COLUMNS`` columns.
    """
    soup = BeautifulSoup(html, "html.parser")
    tables = soup.find_all("table")
    if len(tables) != 1 or tables[0].find("table") is not None:
        return None
    table = tables[0]
    head, body = [], []
    width = 0
    longest: dict[int, int] = {}  # column -> its longest word (numbers must not be cut)
    pending: dict[int, int] = {}  # column -> rows still covered by a rowspan from above
    for tr in table.find_all("tr"):
        row = []
        col = 0
        for cell in tr.find_all(["th", "td"], recursive=False):
            while pending.get(col, 0) > 0:
                col += 1
            colspan = max(int(cell.get("colspan", 1) or 1), 1)
            rowspan = max(int(cell.get("rowspan", 1) or 1), 1)
            entry = nodes.entry(morecols=colspan - 1, morerows=rowspan - 1)
            text = " ".join(cell.get_text(" ", strip=True).split())
            if text:
                entry += _cell_content(text)
                if colspan == 1:
                    longest[col] = max(longest.get(col, 0), *(len(word) for word in text.split()))
            row.append(entry)
            for c in range(col, col + colspan):
                pending[c] = rowspan
            col += colspan
        width = max(width, col, max(pending, default=-1) + 1)
        pending = {c: n - 1 for c, n in pending.items() if n > 1}
        (head if tr.find_parent("thead") is not None else body).append(row)
    if not body or not 0 < width <= MAX_COLUMNS:
        return None
    # column widths in proportion to each column's longest word, so that LaTeX breaks
    # headers between words and never cuts a number (Sphinx: class colwidths-given)
    group = nodes.tgroup(cols=width)
    group += [nodes.colspec(colwidth=max(longest.get(c, 0), 3)) for c in range(width)]
    for part, rows in ((nodes.thead(), head), (nodes.tbody(), body)):
        if rows:
            for cells in rows:
                part += nodes.row("", *cells)
            group += part
    out: list[nodes.Node] = []
    caption = table.find("caption")
    if caption is not None and caption.get_text(strip=True):
        out.append(_cell_content(" ".join(caption.get_text(" ", strip=True).split())))
    # a table with much text breaks across pages (longtable): a tabular taller than the page overflows it
    chars = sum(len(" ".join(td.get_text(" ", strip=True).split())) for td in table.find_all("td"))
    long = ["longtable"] if chars > LONG_TABLE_CHARS else []
    out.append(nodes.table("", group, classes=["colwidths-given", *long]))
    # LaTeX environment sphinxclassldptable (book/_latex/ldpbook.sty): small type
    return [nodes.container("", *out, classes=["ldptable"])]


class HtmlTablesForLatex(SphinxPostTransform):
    """LaTeX only: notebook outputs that are HTML tables become tables (see the module)."""

    default_priority = 3  # before myst-nb's SelectMimeType (4) picks one form per output
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        def is_bundle(node) -> bool:
            return isinstance(node, nodes.container) and node.get("nb_element") == "mime_bundle"

        for bundle in list(self.document.findall(is_bundle)):
            forms = {child.get("mime_type"): child for child in bundle.children}
            if _LATEX_READY & set(forms) or "text/html" not in forms:
                continue
            html = "".join(raw.astext() for raw in forms["text/html"].findall(nodes.raw))
            table = html_table_to_nodes(html)
            if table is not None:
                bundle.replace_self(table)


#: the text width (6.5 in: letter paper, 1 in margins, jupyterBook.cls) in characters of 10 pt
#: text (4.8 pt on average); a character of code (FreeMono, 6 pt) or of a header counts 1.25
LINE_CHARS = 97
#: what a column needs beyond its longest word: the column gap (2 x 6 pt) and one character of slack
_PAD = 3.5


def column_widths(rows: list[list[str]], code: list[list[bool]] | None = None) -> list[int]:
    """Column widths of a table of cell texts, in characters, adding up to about ``LINE_CHARS``.

    Each column wants its longest word + 4.5 + half its mean cell length; the wants are scaled to the
    text width, except that no column gets less than its longest word + ``_PAD`` (then the others
    share what is left), so that no word runs into the next column. A word of a cell marked in
    ``code`` (typewriter type or a header, wider than the text's) counts 1.25 times. When the longest
    words do not fit side by side, the columns with the longest words (widest first) count only
    their longest piece of code up to an underscore (``\\sphinxcode`` may break there: ldpbook.sty)
    or one of ``. , ; ? ! /`` (Sphinx's ``\\sphinxupquote``).
    """
    width = max(map(len, rows))
    code = code or [[False] * len(r) for r in rows]
    whole, piece, want = [], [], []
    for c in range(width):
        cells = [(r[c], k[c]) for r, k in zip(rows, code) if c < len(r)]
        words = [(w, k) for t, k in cells for w in t.split()]
        whole.append(max((len(w) * (1.25 if k else 1) for w, k in words), default=0) + _PAD)
        piece.append(max((max(map(len, re.split(r"(?<=[_.,;?!/])", w))) * 1.25 if k else len(w) for w, k in words),
                         default=0) + _PAD)
        want.append(whole[c] + 1 + sum(len(t) for t, _ in cells) / len(cells) / 2)
    floor = list(whole)
    for c in sorted(range(width), key=lambda c: -whole[c]):
        if sum(floor) <= LINE_CHARS:
            break
        floor[c] = piece[c]
    pinned: set[int] = set()
    while True:  # pin the columns whose scaled share is below their floor, rescale the others
        free = [c for c in range(width) if c not in pinned]
        scale = (LINE_CHARS - sum(floor[c] for c in pinned)) / max(sum(want[c] for c in free), 1)
        short = {c for c in free if want[c] * scale < floor[c]}
        pinned |= short
        if not short or len(pinned) == width:
            break
    return [math.ceil(floor[c]) if c in pinned else max(round(want[c] * scale), 1) for c in range(width)]


def cell_text(entry: nodes.Element) -> str:
    """A table cell's text as wide as it prints, about: math without its commands and braces."""
    return "".join(re.sub(r"\\[A-Za-z]+|[{}^_]", "", str(t)) if isinstance(t.parent, nodes.math) else str(t)
                   for t in entry.findall(nodes.Text))


class TableColumnWidths(SphinxPostTransform):
    """LaTeX only: tables without given widths get :func:`column_widths` (see the module)."""

    default_priority = 5
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        if self.env.docname in OWN_LAYOUT:
            return
        for table in self.document.findall(nodes.table):
            group = table.next_node(nodes.tgroup)
            if "colwidths-given" in table["classes"] or group is None:
                continue
            cells = [list(row.findall(nodes.entry)) for row in group.findall(nodes.row)]
            rows = [[cell_text(e) for e in row] for row in cells]
            code = [[e.next_node(nodes.literal) is not None or isinstance(e.parent.parent, nodes.thead)
                     for e in row] for row in cells]
            specs = list(group.findall(nodes.colspec))
            if rows and len(specs) == max(map(len, rows)):
                table["classes"].append("colwidths-given")
                for spec, w in zip(specs, column_widths(rows, code)):
                    spec["colwidth"] = w


#: pages whose tables have a layout of their own
OWN_LAYOUT = {"book/reproduction"}

#: the root document of the library reference's own PDF (``_toc_reference.yml``)
REFERENCE_ROOT = "book/api/index"
#: its LaTeX file (``make pdf-reference``: ``_build/reference/_build/latex/ldp-reference.pdf``) and title
REFERENCE = ("ldp-reference.tex", "The ldp library: reference")


QUICK_NOTE = r"\setreleaseinfo{\par\medskip quick build: small settings, not the paper's results}"


def quick_title(app: Sphinx, config) -> None:
    """A quick build's PDF title page says so, under the title (Sphinx's ``\\releaseinfo``; not in the headers);
    the library reference's does not (it holds no result)."""
    mode = Path(app.srcdir, "_generated", "MODE")
    if getattr(config, "root_doc", "") == REFERENCE_ROOT:
        return
    if mode.is_file() and mode.read_text(encoding="utf-8").strip() == "quick":
        elements = dict(config.latex_elements)
        elements["preamble"] = elements.get("preamble", "") + "\n" + QUICK_NOTE
        config.latex_elements = elements


def reference_document(app: Sphinx, env, docnames) -> None:
    """The reference's PDF is its own document: its file name and title (``env-before-read-docs``: after
    Jupyter Book wrote ``latex_documents`` from ``_config.yml``, before the LaTeX builder reads it)."""
    if app.builder.format != "latex" or app.config.root_doc != REFERENCE_ROOT:
        return
    app.config.latex_documents = [(start, REFERENCE[0], REFERENCE[1], *rest)
                                  for start, _target, _title, *rest in app.config.latex_documents]


def _title_of(path: Path, after: int = 0) -> str:
    """The first heading of a MyST page (``# Title``) at or after line ``after``, else the page's name."""
    for line in path.read_text(encoding="utf-8").splitlines()[after:]:
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return path.stem


def _outside_labels(app: Sphinx, env) -> dict[str, str]:
    """The targets ``(label)=`` of the book's Markdown pages this PDF leaves out: label -> the heading it marks."""
    out = {}
    for page in sorted(Path(app.srcdir, "book").glob("*.md")):
        if f"book/{page.stem}" in env.found_docs:
            continue
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines()):
            target = re.fullmatch(r"\(([^()\s]+)\)=\s*", line)
            if target:
                out[target.group(1)] = _title_of(page, i + 1)
    return out


def outside_link(app: Sphinx, env, node, contnode):
    """A ``{doc}`` or ``{ref}`` link to a page of the book that this PDF leaves out: the page's (or the section's)
    title, in italics, "in the online book"."""
    if app.builder.format != "latex" or node.get("refdomain") not in ("std", None):
        return None
    target = node.get("reftarget", "")
    if node.get("reftype") == "doc":
        base = Path(node.get("refdoc", "")).parent
        name = target.lstrip("/") if target.startswith("/") else (base / target).as_posix()
        source = next((Path(app.srcdir, name + ext) for ext in (".md", ".ipynb", ".rst")
                       if Path(app.srcdir, name + ext).is_file()), None)
        if source is None or name in env.found_docs:
            return None
        title = _title_of(source) if source.suffix == ".md" else source.stem
    elif node.get("reftype") == "ref":
        title = _outside_labels(app, env).get(target)
        if title is None:
            return None
    else:
        return None
    text = contnode.astext() if node.get("refexplicit") else title
    return nodes.inline("", "", nodes.emphasis(text, text), nodes.Text(" (in the online book)"))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_post_transform(HtmlTablesForLatex)
    app.add_post_transform(TableColumnWidths)
    # after sphinx-external-toc (priority 900) has set the root document from the table of contents
    app.connect("config-inited", quick_title, priority=950)
    app.connect("env-before-read-docs", reference_document)
    app.connect("missing-reference", outside_link)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
