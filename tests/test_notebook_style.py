"""The chapters read as lectures: prose in markdown, short code cells, numbers from the chapter's code.

A chapter notebook is narrative, derivation, a short visible simulation call, the figure and the finding; its
plumbing (assembling the values the prose quotes, formatting sentences) lives in the chapter's package,
``ldp/book/chapters/cNN_name/``, whose code returns the values the markdown glues by name.  These checks read the
source notebooks (``notebooks/*.ipynb``), so they need no build.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: all chapters' code cells together, non-blank lines
MAX_CODE_LINES = 1200
#: one code cell, non-blank lines
MAX_CELL_LINES = 40
#: a string literal with this many words or more in a code cell is prose, which belongs in a markdown cell
PROSE_WORDS = 6


def code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


def prose_literals(source: str) -> list[str]:
    """f-strings (and plain strings) in a code cell that read as sentences: ``PROSE_WORDS`` words or more.

    Docstrings and comments are not literals here; a parameters cell is checked like any other.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (a magic): nothing to say
        return []
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Module)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else " X " for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        else:
            continue
        words = re.findall(r"[A-Za-z][A-Za-z'’-]*", text)
        if len(words) >= PROSE_WORDS:
            found.append(text.strip()[:80])
    return found


def test_the_prose_scan_finds_what_it_should():
    assert prose_literals('x = f"PEM finds {n} of the {k} heavy hitters at this budget"\n')
    assert prose_literals('print("this execution took longer than the last one did")\n')
    assert not prose_literals('x = f"{a:.2f} s"\nsave(fig, "fig-eval-vary-eps")\n')
    assert not prose_literals('def f():\n    """A docstring of many words is not prose of the page."""\n')


def test_the_chapters_hold_at_most_1200_code_lines():
    per = {p.stem: sum(code_lines(c) for c in code_cells(p)) for p in NOTEBOOKS}
    total = sum(per.values())
    assert total <= MAX_CODE_LINES, f"{total} code lines in all (at most {MAX_CODE_LINES}): {per}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_over_40_lines(path: Path):
    long = {i: code_lines(c) for i, c in enumerate(code_cells(path)) if code_lines(c) > MAX_CELL_LINES}
    assert not long, f"{path.name}: code cells over {MAX_CELL_LINES} lines (code cell index: lines): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_prose_in_code_cells(path: Path):
    found = [text for c in code_cells(path) for text in prose_literals(c)]
    assert not found, f"{path.name}: sentences written in code cells (move them to markdown): {found}"


#: how a text speaks of a work tracker ("the issue", "issue 23", "the issue's check")
TRACKER = re.compile(r"\bthe issue\b|\bissue's\b|\bissues? #?\d", re.I)
#: what the project writes for its readers and users: code, tests, pages, notebooks, benchmarks, scripts
SUFFIXES = {".py", ".md", ".ipynb", ".rst", ".yml", ".sh", ".js", ".css", ".txt"}
WRITTEN = sorted(p for top in ("ldp", "tests", "book", "benchmarks", "scripts", "notebooks")
                 for p in (ROOT / top).rglob("*")
                 if p.is_file() and p.suffix in SUFFIXES and "_static/mathjax" not in p.as_posix()
                 and "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_nothing_a_reader_sees_speaks_of_the_tracker(path: Path):
    assert not TRACKER.search(path.read_text(encoding="utf-8")), path.name


def test_code_pages_and_tests_do_not_speak_of_the_tracker():
    """Code, tests and pages speak of what they do and why, not of the tracker that asked for it."""
    found = [f"{p.relative_to(ROOT)}:{n}" for p in WRITTEN if p != Path(__file__)
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if TRACKER.search(line)]
    assert not found, found
    assert TRACKER.search("as issue 23 asks") and TRACKER.search("the issue's check") and not TRACKER.search("issued")


#: a glue role naming another document's key (``path::key``): myst-nb reads ``key:format`` by the last colon, so
#: ``{glue:text}`path::key``` without a format would look up ``path:`` (a page's warning, a failed build)
CROSS_GLUE = re.compile(r"\{glue(?::(text|md|any|figure|math))?\}`([^`]*::[^`]*)`")


def cross_glue_without_format(text: str) -> list[str]:
    """The ``{glue:text}`` roles of ``text`` that name another document's key and give no format after it."""
    return [ref for role, ref in CROSS_GLUE.findall(text) if role == "text" and ":" not in ref.split("::", 1)[1]]


def test_the_cross_glue_scan_finds_what_it_should():
    assert cross_glue_without_format("a {glue:text}`../x.ipynb::name` b") == ["../x.ipynb::name"]
    assert cross_glue_without_format("a {glue:text}`../x.ipynb::name:s` {glue:text}`name` b") == []


@pytest.mark.parametrize("path", sorted((ROOT / "book").glob("*.md")), ids=lambda p: p.name)
def test_glue_from_another_document_has_a_format(path: Path):
    assert not cross_glue_without_format(path.read_text(encoding="utf-8"))
