"""The paper's numbers for what the book reproduces; the book's own numbers in a series of their own.

A Sphinx extension (listed in ``_config.yml``). ``paper_numbers.yml`` (next to this file) lists the
paper's figures, equations, statements and sections, and for each figure and equation the labels
of the book that reproduce it. This extension

- gives those figures and equations the paper's number: "Figure 5", "(5)", in the caption and
  in every ``{numref}`` and ``{eq}`` reference, in HTML and in the PDF;
- numbers every other captioned figure and every other labelled equation of the book in its own
  series, in book (table of contents) order: Figure A.1, A.2, ... and (A.1), (A.2), ..., so that
  a number of the book never looks like one of the paper's;
- warns (an error under ``-W``) when a label the file gives a chapter is not numbered in the build
  although that chapter numbers figures or equations, or when a label is listed twice;
- resolves a reference to a reproduced figure or equation whose chapter is not part of the
  build (a partial build, as in the tests) to the paper's number as text;
- provides the directive ``ldp-paper-numbers`` (argument: ``figures``, ``equations``,
  ``statements`` or ``sections``), a table of the paper's labels and numbers and where the book
  shows them, for ``book/paper_numbers.md``; in the PDF its columns have fixed shares of the
  text width (``WIDTHS``) and a label may break after ``:`` and ``_``, so no table leaves the page
  and no label is cut.

How. Sphinx numbers figures and equations (``numfig``, ``math_numfig``) in
``env.toc_fignumbers[docname][figtype][node id]``, a tuple that HTML captions and references join
with "."; ``('A', 3)`` reads "A.3". After Sphinx has assigned them (``env-get-updated``), the
numbers are replaced as above. LaTeX numbers its floats and equations itself, so for a LaTeX build
each numbered figure gets ``\\renewcommand{\\thefigure}{5}`` inside its float, before the caption,
and each numbered equation ``\\renewcommand{\\theequation}{A.1}`` just before it: captions,
``\\label`` and ``\\ref`` then show the same numbers as the HTML. (For LaTeX,
sphinx-jupyterbook-latex numbers figures per chapter; ``numfig_secnum_depth`` is set back to 0 so
that the series' order, read from Sphinx's numbers, is the book order there too.)
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.builders.latex import LaTeXBuilder
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.texescape import escape

logger = logging.getLogger(__name__)

DATA = Path(__file__).with_name("paper_numbers.yml")
#: the series of the book's own figures and equations
OWN_SERIES = "A"
#: Sphinx's figure types for figures and for numbered equations
FIGTYPES = {"figures": "figure", "equations": "displaymath"}
KINDS = ("figures", "equations", "statements", "sections")


def load(path: Path = DATA) -> dict[str, list[dict]]:
    """The paper's numbers (``paper_numbers.yml``), every kind present (possibly empty).

    A figure's or equation's ``book`` is ``{book label: its chapter}`` (empty if not reproduced).
    The file is parsed once per version of it (a build asks for it once per unresolved reference);
    each caller gets its own copy.
    """
    stat = path.stat()
    return copy.deepcopy(_parsed(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=4)
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, list[dict]]:
    """:func:`load`'s parse of ``path`` as it is at (``mtime_ns``, ``size``)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out = {kind: list(data.get(kind) or []) for kind in KINDS}
    for kind in FIGTYPES:
        for entry in out[kind]:
            entry["book"] = dict(entry.get("book") or {})
    return out


def book_numbers(data: dict[str, list[dict]], kind: str) -> dict[str, int]:
    """{book label: the paper's number} of the reproduced figures or equations."""
    return {label: int(entry["number"]) for entry in data[kind] for label in entry["book"]}


def node_id(kind: str, label: str) -> str:
    """The HTML id Sphinx gives the node of a book label (equations: ``equation-LABEL``)."""
    return f"equation-{label}" if kind == "equations" else label


def paper_number_of(data: dict[str, list[dict]]) -> dict[str, dict[str, int]]:
    """{kind: {node id: paper number}} for the book labels of figures and equations."""
    out: dict[str, dict[str, int]] = {}
    for kind in FIGTYPES:
        numbers = out.setdefault(kind, {})
        for entry in data[kind]:
            for label in entry["book"]:
                key = node_id(kind, label)
                if key in numbers:
                    logger.warning(f"{DATA.name}: the book label {label!r} is listed twice",
                                   type="ldp", subtype="numbers")
                numbers[key] = int(entry["number"])
    return out


def renumber(fignumbers: dict[str, dict[str, dict[str, tuple]]],
             paper: dict[str, dict[str, int]]) -> dict[str, dict[str, dict[str, tuple]]]:
    """Sphinx's numbers with paper numbers for the listed nodes and the own series for the rest.

    ``fignumbers`` is ``env.toc_fignumbers``: Sphinx's numbers, whose order is the book order.
    Figure types other than figures and equations keep their numbers.
    """
    out = {doc: {figtype: dict(ids) for figtype, ids in types.items()} for doc, types in fignumbers.items()}
    for kind, figtype in FIGTYPES.items():
        placed = sorted((_order(number), doc, ident) for doc, types in fignumbers.items()
                        for ident, number in types.get(figtype, {}).items())
        own = 0
        for _, doc, ident in placed:
            if ident in paper[kind]:
                out[doc][figtype][ident] = (paper[kind][ident],)
            else:
                own += 1
                out[doc][figtype][ident] = (OWN_SERIES, own)
    return out


def _order(number: tuple) -> tuple:
    # Sphinx's numbers are tuples of ints; any other part sorts after them, as text
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in number)


def number_text(number: tuple) -> str:
    """A number as captions and references print it: (5,) -> "5", ("A", 2) -> "A.2"."""
    return ".".join(map(str, number))


def _apply(app: Sphinx, env: BuildEnvironment) -> list[str]:
    data = load()
    paper = paper_number_of(data)
    placed = {kind: {ident for types in env.toc_fignumbers.values() for ident in types.get(figtype, {})}
              for kind, figtype in FIGTYPES.items()}
    for kind in FIGTYPES:
        for entry in data[kind]:
            for label, doc in entry["book"].items():
                if doc not in env.toc_fignumbers:
                    continue  # a build without that chapter, or with a stand-in that numbers nothing (tests)
                if node_id(kind, label) not in placed[kind]:
                    logger.warning(f"{DATA.name}: {doc} has no numbered {kind[:-1]} {label!r} "
                                   f"(the paper's {kind[:-1]} {entry['number']})", type="ldp", subtype="numbers")
    old = env.toc_fignumbers
    env.toc_fignumbers = renumber(old, paper)
    return [doc for doc in env.toc_fignumbers if env.toc_fignumbers[doc] != old.get(doc)]


def _paper_reference_elsewhere(app: Sphinx, env: BuildEnvironment, node: addnodes.pending_xref,
                               contnode: nodes.Element) -> nodes.Node | None:
    """A reference to a reproduced figure or equation whose chapter is not in this build (a
    partial build, e.g. one chapter in the tests): the paper's number as text, without a link."""
    target, kind = node.get("reftarget", ""), (node.get("refdomain"), node.get("reftype"))
    data = load()
    if kind == ("math", "eq"):
        numbers = book_numbers(data, "equations")
        if target in numbers:
            text = app.config.math_eqref_format.format(number=numbers[target]) if app.config.math_eqref_format \
                else f"({numbers[target]})"
            return nodes.inline(text, text)
    elif kind == ("std", "numref"):
        numbers = book_numbers(data, "figures")
        if target in numbers:
            template = contnode.astext() if node.get("refexplicit") else app.config.numfig_format["figure"]
            text = template.replace("%s", str(numbers[target])).replace("{number}", str(numbers[target]))
            return nodes.inline(text, text)
    return None


def _secnum_depth_for_latex(app: Sphinx) -> None:
    # sphinx_jupyterbook_latex sets numfig_secnum_depth = 2 in its builder-inited handler
    # (priority 500): numbers per chapter. Numbers through the book keep the book order.
    if isinstance(app.builder, LaTeXBuilder):
        app.config.numfig_secnum_depth = 0


class LatexNumbers(SphinxPostTransform):
    """LaTeX only: each numbered figure and equation shows the number Sphinx gave it (see the module)."""

    default_priority = 5
    builders = ("latex",)

    def run(self, **kwargs: Any) -> None:
        numbers = self.env.toc_fignumbers
        for fig in list(self.document.findall(nodes.figure)):
            doc = self._docname(fig)
            number = numbers.get(doc, {}).get("figure", {}).get(fig["ids"][0] if fig["ids"] else "")
            caption = next((c for c in fig.children if isinstance(c, nodes.caption)), None)
            if number and caption is not None:
                fig.insert(fig.index(caption), _latex(rf"\renewcommand{{\thefigure}}{{{number_text(number)}}}"))
        for math in list(self.document.findall(nodes.math_block)):
            if not math.get("label") or not math["ids"]:
                continue
            number = numbers.get(math.get("docname"), {}).get("displaymath", {}).get(math["ids"][0])
            if number:
                math.parent.insert(math.parent.index(math),
                                   _latex(rf"\renewcommand{{\theequation}}{{{number_text(number)}}}"))

    def _docname(self, node: nodes.Element) -> str | None:
        # the LaTeX builder inlines every document into one tree (sphinx-jupyterbook-latex
        # rearranges it): the document a node comes from is named by its source file
        ancestor = node
        while ancestor is not None and not isinstance(ancestor, addnodes.start_of_file):
            ancestor = ancestor.parent
        if ancestor is not None:
            return ancestor["docname"]
        return self.env.path2doc(node.source) if node.source else None


def _latex(text: str) -> nodes.raw:
    return nodes.raw("", text, format="latex")


# --------------------------------------------------------------------------------------------- #
# the table page
# --------------------------------------------------------------------------------------------- #
def _label(entry: dict) -> str:
    return f"`{entry['label']}`" if entry.get("label") else "(none)"


def _where(entry: dict, kind: str) -> str:
    if kind in FIGTYPES:
        role = "numref" if kind == "figures" else "eq"
        places = [f"{{{role}}}`{label}` in {{doc}}`/{doc}`" for label, doc in entry["book"].items()]
    else:
        places = [f"{{doc}}`/{entry['doc']}`"] if entry.get("doc") else []
    return "; ".join(places) if places else "not reproduced"


def table_markdown(data: dict[str, list[dict]], kind: str) -> str:
    """A MyST table of one kind of numbered thing: the paper's number, its label, where the book has it."""
    head = {"figures": "Figure", "equations": "Equation", "statements": "Statement", "sections": "Section"}[kind]
    rows = [f"| {head} | LaTeX label | What it is | In this book |", "| --- | --- | --- | --- |"]
    for entry in data[kind]:
        number = entry["number"]
        shown = {"figures": f"Figure {number}", "equations": f"({number})"}.get(kind, str(number))
        what = str(entry.get("title", ""))
        if entry.get("panels"):
            what += "; panels " + ", ".join(f"({k}) {v}" for k, v in entry["panels"].items())
        rows.append(f"| {shown} | {_label(entry)} | {what} | {_where(entry, kind)} |")
    return "\n".join(rows) + "\n"


class PaperNumbersTable(SphinxDirective):
    """``ldp-paper-numbers KIND``: the table of the paper's KIND (figures, equations, statements, sections)."""

    required_arguments = 1
    option_spec = {"class": directives.class_option}

    def run(self) -> list[nodes.Node]:
        kind = self.arguments[0]
        if kind not in KINDS:
            raise self.error(f"ldp-paper-numbers: unknown kind {kind!r}; one of {', '.join(KINDS)}")
        self.env.note_dependency(str(DATA))
        out = self.parse_text_to_nodes(table_markdown(load(), kind))
        for table in (t for node in out for t in node.findall(nodes.table)):
            table["classes"] += ["colwidths-given", "ldp-numbers"]  # the PDF: fixed column widths
            for spec, width in zip(table.findall(nodes.colspec), WIDTHS):
                spec["colwidth"] = width
        return out


#: shares of the text width of the numbering tables' columns: number, label, what it is, where
WIDTHS = (11, 27, 27, 35)


class BreakableLabels(SphinxPostTransform):
    """LaTeX only: in the numbering tables a label may break after ``:`` and ``_`` (never cut at the column)."""

    default_priority = 400
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for table in self.document.findall(lambda n: isinstance(n, nodes.table) and "ldp-numbers" in n["classes"]):
            for literal in list(table.findall(nodes.literal)):
                text = escape(literal.astext(), "xelatex")
                text = text.replace(r"\_", r"\_\allowbreak{}").replace(":", r":\allowbreak{}")
                literal.replace_self(_latex(rf"\sphinxcode{{\sphinxupquote{{{text}}}}}"))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _secnum_depth_for_latex, priority=900)
    # after Sphinx's TocTreeCollector (priority 500) has assigned its numbers
    app.connect("env-get-updated", _apply, priority=900)
    app.connect("missing-reference", _paper_reference_elsewhere)
    app.add_post_transform(LatexNumbers)
    app.add_post_transform(BreakableLabels)
    app.add_directive("ldp-paper-numbers", PaperNumbersTable)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
