"""No verdict is typed by hand: every verdict word in a table of the book must come from ldp.book.claims.

Scans the Markdown tables of every page in book/ and of every markdown cell of the chapter notebooks: a cell
that contains one of the verdict words (reproduced, partly reproduced, not reproduced, not testable here)
outside a glued value or inline code was typed by hand.  Generated pages (the report that
ldp.book.report.render_report writes into _generated/) are not in book/ and are not scanned.
"""
import json
import re
from pathlib import Path

from ldp.book.claims.verdicts import VERDICTS

ROOT = Path(__file__).resolve().parents[1]
WORDS = re.compile(r"\b(" + "|".join(re.escape(v) for v in sorted(VERDICTS, key=len, reverse=True)) + r")\b",
                   re.IGNORECASE)
COMPUTED = re.compile(r"\{glue(?::\w+)?\}`[^`]*`|`[^`]*`")  # glued values and inline code are not typed


def table_cells(text: str):
    """(line number, cell text) of every cell of every Markdown table (pipe rows, not separators)."""
    fence = False
    for no, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        s = line.strip()
        if fence or not s.startswith("|") or re.fullmatch(r"\|?[\s:|-]+\|?", s):
            continue
        for cell in re.split(r"(?<!\\)\|", s.strip("|")):
            yield no, cell.strip()


def typed_verdicts(text: str):
    return [(no, cell) for no, cell in table_cells(text) if WORDS.search(COMPUTED.sub("", cell))]


def sources():
    for md in sorted((ROOT / "book").rglob("*.md")):
        if "_static" not in md.parts:
            yield md.relative_to(ROOT).as_posix(), md.read_text(encoding="utf-8")
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] == "markdown":
                yield f"{nb.relative_to(ROOT).as_posix()} (cell {i})", "".join(cell["source"])


def test_the_scanner_finds_typed_verdicts_and_ignores_computed_ones():
    text = ("| Claim | Verdict |\n| --- | --- |\n| a | reproduced (exactly) |\n"
            "| b | {glue:text}`nb.ipynb::x_verdict:s` |\n| c | `not reproduced` in code |\n"
            "| d | Partly Reproduced |\n| e | the reproduction |\n")
    assert [cell for _, cell in typed_verdicts(text)] == ["reproduced (exactly)", "Partly Reproduced"]
    assert typed_verdicts("reproduced in prose, not in a table\n```\n| x | reproduced |\n```\n") == []


def test_no_verdict_is_typed_in_a_table_of_the_book():
    found = [f"{where}:{no}: {cell[:80]}" for where, text in sources() for no, cell in typed_verdicts(text)]
    assert not found, "verdicts typed by hand:\n" + "\n".join(found)
