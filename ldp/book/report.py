"""The reproduction report's pages, rendered from the evaluated claims: the answer, the gallery, the report.

The claims are decided below, by :func:`ldp.book.claims.evaluation` (one row per claim) and
:func:`ldp.book.claims.sentences` (one row per sentence of the paper); this module only
renders them, as MyST Markdown, and writes the files:

- :func:`render_answer`: the first page's answer, at most five plain sentences with this build's numbers: PEM
  against SPM and MCM, the analysis against simulation, the verdicts counted, what did not reproduce and the
  measured cause of the largest difference (:func:`answer_sentences`).
- :func:`render_gallery`: the first page's gallery, each of the paper's figures as this build drew it, beside
  the verdicts of the sentences that read it, linking to the figure in its chapter.
- :func:`render_report`: the report page. It opens with the **summary**, one row per sentence of the paper
  (id, where, what it says, the verdict as a coloured badge, the class and the whole line of its cause),
  which ``book/_static/ldp-explorer.js`` makes sortable and filterable in the browser (offline; in the PDF it
  is a long table). Each row links to its evidence below, folded by section: the quote, what was tested and
  measured, the rule, the verdict with its cause, the verdicts under the other readings the paper leaves
  open, and the sentence's parts. Our readings of sentences that state no result, and our own claims, are
  listed apart; the rules close the page, folded too.
- :func:`render_scorecard`: the first page's details, folded: the counts, the largest differences, the
  stand-ins and what computed each figure.
- :func:`claims_json`: the rows the Sphinx extension ``book/_ext/ldp_evidence.py`` puts in a box
  under each of the paper's figures.

A book build (:func:`ldp.book.rerun.build.stage` calls :func:`write_book_report` once the notebooks
ran) writes, atomically, into ``_generated/report/``: ``report.md`` (included by
``book/reproduction.md``), ``answer.md``, ``gallery.md`` and ``scorecard.md`` (by ``book/intro.md``),
``claims.json`` and ``claims.csv`` (the tidy table of :func:`ldp.book.claims.evaluation`; the report page
offers both for download).  A rerun (:func:`ldp.book.rerun.run.rerun` calls :func:`write_rerun_report`) gets
``claims.csv`` and ``claims.md`` in its folder, with only the claims its chapter measures.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..paths import atomic_path, generated_dir
from .claims import verdicts as V
from .claims.claim import STAND_INS, Registry, display_quote, paper_numbers
from .claims.evaluation import NOT_COVERED, evaluate, largest_differences, sentences, verdict_counts
from .claims.store import MODES, ResultStore

__all__ = ["REPORT_DIR", "CLAIMS_JSON", "REPORT_DOC", "SECTIONS", "ANSWER", "anchor", "caret_math", "quick_banner",
           "answer_sentences", "render_answer", "render_gallery", "render_report", "render_scorecard",
           "summary_sentence", "claims_json", "write_outputs", "write_book_report", "write_rerun_report"]

#: the folder under ``_generated/`` the book's generated report pages go to
REPORT_DIR = "report"
#: the evidence data the Sphinx extension reads (under ``_generated/report/``)
CLAIMS_JSON = "claims.json"
#: where the report page lives in the book (absolute MyST path, no suffix)
REPORT_DOC = "/book/reproduction"
INTERPRETATION_DOC = "/book/interpretation.md"
#: the report's groups: the paper's sections, then section 7 and what came after PEM
SECTIONS = {"2": "Section 2: frequency oracles", "3": "Section 3: existing methods",
            "4": "Section 4: PEM and its analysis (with the appendix)", "5": "Section 5: validation of the analysis",
            "6": "Section 6: evaluation",
            "7": "Section 7 and after (ours): PEM against TreeHist and SFP, malicious users, scale"}
#: each verdict's badge colour (sphinx-design); not testable is grey ("muted": the theme's "secondary" is orange)
_BADGE = {V.REPRODUCED: "success", V.PARTLY: "warning", V.NOT_REPRODUCED: "danger", V.NOT_TESTABLE: "muted"}
_SHORT_STAND_IN = {"url": "the URL stand-in", "url-calibrated": "the URL stand-in", "mcm": "our MCM (from the text)",
                   "spm": "our SPM (from the text)"}
_GREEK = {"ε": r"\varepsilon", "η": r"\eta", "θ": r"\theta", "γ": r"\gamma"}
_CARET = re.compile(r"(?<![\w.])([A-Za-z0-9.]+|\([^()]*\))\^([A-Za-z0-9.εηθγ]+)")


def quick_banner(mode: str | None) -> str:
    """The banner of a quick build or a rerun (MyST admonition), empty for the paper-scale build."""
    if mode == "quick":
        return ("```{warning}\n**Quick build.** These verdicts come from small samples (fewer runs, smaller grids "
                "and populations). They exercise the rules; they are **not** the reproduction's verdicts, which "
                "come from the paper-scale build (`make book`).\n```\n")
    if mode == "rerun":
        return ("```{note}\n**Rerun with your own parameters.** Claims whose setting your parameters leave out are "
                f"marked \"{NOT_COVERED}\" and are not testable here.\n```\n")
    return ""


def _check_mode(mode: str | None) -> None:
    if mode not in (None, "full", "quick", "rerun"):
        raise ValueError(f"mode={mode!r} must be 'full', 'quick', 'rerun' or None")


def caret_math(text: str) -> str:
    """Powers written with a caret in plain text (``2^16``, ``e^ε``) as inline math (``$2^{16}$``).

    Spans already in ``$...$`` are left as they are.  Plain ``x^y`` would show as TeX in the book.
    """
    pieces = str(text).split("$")
    if len(pieces) % 2 == 0:  # unbalanced: leave it
        return str(text)
    for i in range(0, len(pieces), 2):
        pieces[i] = _CARET.sub(lambda m: "$" + "".join(_GREEK.get(ch, ch) for ch in m.group(1)) + "^{"
                               + "".join(_GREEK.get(ch, ch) for ch in m.group(2)) + "}$", pieces[i])
    return "$".join(pieces)


def _cell(text) -> str:
    """Text safe for one line of MyST (a table cell, a list item): pipes escaped, powers as math."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    return caret_math(re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip())


def anchor(sentence_id: str) -> str:
    """The label of a sentence's evidence on the report page (explorer rows, scorecard and boxes link to it)."""
    return f"claim-{sentence_id}"


def _major(section: str) -> str:
    head = str(section).split(".")[0]
    return head if head in SECTIONS else "4"


def _badge(verdict: str) -> str:
    return f"{{bdg-{_BADGE[verdict]}}}`{verdict}`"


def _cause_label(kind: str) -> str:
    return V.CAUSES[kind][0] if kind in V.CAUSES else ""


def _where(row) -> str:
    title = row["figure_title"] if isinstance(row["figure_title"], str) and row["figure_title"] else ""
    ref = _cell(row["ref"])
    return f"§{row['section']}, {ref}" if not title or title in ref else f"§{row['section']}, {ref} ({title})"


def _link(row) -> str:
    """Where the book measures a claim: its figure (numbered as the paper numbers it), else its chapter."""
    if row["figure"]:
        return f"{{numref}}`Figure %s <{row['figure']}>`"
    return f"{{doc}}`/_generated/notebooks/{row['chapter']}`"


def _flips(row) -> dict[str, str]:
    return json.loads(row.get("flips") or "{}")


def _sentence_end(text: str) -> str:
    """``text`` closed by a full stop (unless it ends with one, or with ``?``/``!``)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".?!" else text + "."


def _explorer(rows: pd.DataFrame, caption: str, says: str) -> list[str]:
    """The summary: one list-table for the browser (sorted and filtered by ``ldp-explorer.js``) and the PDF.

    Four columns: the claim (its id, a link to its evidence, and where the paper says it), what the
    sentence says in a few words (header ``says``), the verdict as a coloured badge, and the cause: its class
    in bold (what the cause filter reads) and its whole line, with the verdict under another reading when
    that one differs.  One table serves both builders, so the book's tables are numbered as the reader sees
    them (HTML: class ``ldp-explorer``; LaTeX: ``longtable``, rows break across pages).
    """
    out = [f":::{{list-table}} {caption}", ":header-rows: 1", ":class: ldp-explorer longtable",
           ":widths: 27 19 14 40", "", "* - Claim", f"  - {says}", "  - Verdict", "  - Cause"]
    for _, r in rows.iterrows():
        claim = f"{{ref}}`{r['id']} <{anchor(r['id'])}>` §{r['section']}, {_cell(r['ref'])}"
        cause = (f"**{_cause_label(r['cause_class'])}**: {_sentence_end(_cell(r['cause']))}"
                 if r["cause_class"] else "")
        cause += "".join(f" *Another reading: {v}.*" for v in _flips(r).values())
        out += [f"* - {claim}", f"  - {_cell(r['paper'])}", f"  - {_badge(r['verdict'])}", f"  - {cause}"]
    return out + [":::", ""]


def _part_lines(p, indent: str = "") -> list[str]:
    """What the evidence says about one claim (a sentence of one part, or one part of a sentence)."""
    lines = [f"{indent}- **We test:** {_cell(p['tested'])} ({_cell(p['rule'])})",
             f"{indent}- **We measure:** {_cell(p['measured'] or '—')}"
             + (f" *{_cell(p['note'])}*" if p["note"] else ""),
             f"{indent}- **Verdict:** {_badge(p['verdict'])} {_cell(p['explanation'])}"]
    if p["cause_class"]:
        lines.append(f"{indent}- **Cause ({_cause_label(p['cause_class'])}):** {_cell(p['cause'])}")
    others = json.loads(p["sensitivity"] or "[]")
    if p["interpretation"] and not others and p["verdict"] != V.NOT_TESTABLE:
        lines.append(f"{indent}- **Under another reading:** none computed (the readings cited below have no "
                     "documented alternative that the saved results can decide)")
    for s in others:
        flips = " — **the verdict flips**" if s["flips"] else " — the verdict stands"
        lines.append(f"{indent}- **Under another reading** "
                     f"([{_cell(s['reading'])}]({INTERPRETATION_DOC}#{s['anchor']})):"
                     f" {s['verdict']}{flips if s['verdict'] != V.NOT_TESTABLE else ''}; {_cell(s['measured'])}")
    flags = []
    if p["stand_in"]:
        flags.append("rests on " + ", ".join(_SHORT_STAND_IN.get(s, s) for s in p["stand_in"].split(", "))
                     + ("" if p["stand_in_decides"] else " (which cannot decide it)"))
    if p["interpretation"]:
        flags.append("our reading: " + " ".join(f"[{i + 1}]({INTERPRETATION_DOC}#{a})"
                                                for i, a in enumerate(p["interpretation"].split(", "))))
    if p["coverage"]:
        flags.append(_cell(p["coverage"]))
    if flags:
        lines.append(f"{indent}- **Flags:** " + "; ".join(flags))
    return lines + [f"{indent}- **Measured in** {_link(p)}"]


def _evidence(row, parts: pd.DataFrame) -> list[str]:
    """One sentence's evidence, folded under a one-line title (id, where, verdict): its quote, what the paper
    says, the cause and the other readings' verdicts, then its parts (or the one claim that is it)."""
    flips = "".join(f" Under {_cell(k)} it would be **{v}**." for k, v in _flips(row).items())
    lines = [f"({anchor(row['id'])})=", f"::::{{dropdown}} {row['id']} · {_where(row)} · {_badge(row['verdict'])}",
             ":class-container: ldp-evidence", "", f"> “{_cell(display_quote(row['quote']))}”", "",
             f"*The paper:* {_cell(row['paper'])}."
             + (f" **Cause ({_cause_label(row['cause_class'])}):** {_cell(row['cause'])}" if row["cause_class"] else "")
             + flips, ""]
    if len(parts) == 1:
        return lines + _part_lines(parts.iloc[0]) + ["::::", ""]
    lines.append(f"This sentence has {len(parts)} parts (the verdict combines those that decide it):")
    lines.append("")
    for _, p in parts.iterrows():
        role = "" if p["decides"] else " (a detail: it shows an exception and does not decide)"
        lines.append(f"- `{p['id']}`{role}: “{_cell(display_quote(p['quote']))}” ({_cell(p['paper'])})")
        lines += _part_lines(p, "  ")
    return lines + ["::::", ""]


def rules_section() -> str:
    """The rules, tolerances, the combination of a sentence's parts and the classes of a cause."""
    text = {
        "within-se": ("every point within its standard errors: Holm's correction at family-wise level "
                      f"{V.FAMILY_ALPHA:.2g} rejects no point (the count beyond {V.Z_TOL:g} SE is shown)"),
        "within-tolerance": "every point within the claim's tolerance of the paper's value",
        "ordering": ("the ordering holds at the required share of points (all, or "
                     f"{V.MOST:.0%} for 'in most cases'); ties within {V.Z_TOL:g} SE count as holding; points "
                     "where every method scores 0, or every method 1, are left out"),
        "monotone": (f"every series moves the claimed way: no later point beyond {V.Z_TOL:g} SE of their "
                     "difference against an earlier one"),
        "argmax": f"in every series the value at the claimed optimum is within {V.Z_TOL:g} SE of the maximum",
    }
    lines = ["## How the verdicts are decided", "",
             "::::{dropdown} The five rules, the tolerances and the classes of a cause",
             ":class-container: ldp-folded", "",
             "Every verdict is computed from the saved figure data by one of five rules (`ldp.book.claims.rules`); "
             "none is typed by hand. The verdicts are exactly: " + ", ".join(f"**{v}**" for v in V.VERDICTS)
             + ". A claim is *not testable here* when its inputs are missing, when the run's parameters leave out "
               "its setting, or when it rests on a stand-in that cannot decide it. "
             + _cell(V.COMBINE_RULE[0].upper() + V.COMBINE_RULE[1:]) + ".", ""]
    lines += _list_table(("Rule", "When it says reproduced", "When partly"), "22 39 39",
                         [(k, _cell(t), _cell(V.PARTLY_RULE[k])) for k, t in text.items()])
    lines += ["Tolerances (written once, in `ldp.book.claims.verdicts`):", ""]
    lines += _list_table(("Constant", "Value", "Meaning"), "32 14 54",
                         [(f"`{t['constant']}`", t["value"] if isinstance(t["value"], str) else f"{t['value']:.4g}",
                           _cell(t["meaning"])) for _, t in V.tolerance_table().iterrows()])
    lines += ["Every verdict other than reproduced names its cause, of one of these classes:", ""]
    lines += _list_table(("Cause", "Meaning"), "22 78", [(lab, _cell(m)) for lab, m in V.CAUSES.values()])
    return "\n".join([*lines, "::::", ""])


def _list_table(head: tuple[str, ...], widths: str, rows) -> list[str]:
    """A MyST list-table with fixed column widths (in LaTeX: columns that wrap, never off the page)."""
    out = [":::{list-table}", ":header-rows: 1", f":widths: {widths}", ""]
    for row in (head, *rows):
        out += [("* - " if i == 0 else "  - ") + str(cell) for i, cell in enumerate(row)]
    return out + [":::", ""]


def _counts_words(rows: pd.DataFrame) -> str:
    """'12 reproduced, 2 partly reproduced' (the verdicts that occur, best first)."""
    return ", ".join(f"{c} {v}" for v, c in verdict_counts(rows).items() if c)


def _evidence_group(title: str, rows: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The evidence of a group of sentences (a section of the paper, or ours), folded: one dropdown holding one
    folded block per sentence (the report's script unfolds both when a link leads to a sentence)."""
    blocks = ["\n".join(_evidence(r, table[table["sentence"] == r["id"]])) for _, r in rows.iterrows()]
    return [f":::::{{dropdown}} {title} ({len(rows)} {'sentence' if len(rows) == 1 else 'sentences'}: "
            f"{_counts_words(rows)})", ":class-container: ldp-folded", "", *blocks, ":::::", ""]


def render_report(table: pd.DataFrame, mode: str | None) -> str:
    """The report page: banner, the summary, our readings and claims, the evidence by section, the rules.

    The summary (one row per sentence of the paper) is open; everything else is folded: our own sentences,
    the evidence of each section of the paper (one block per sentence inside) and the rules.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`ldp.book.claims.evaluation`'s table.
    mode : {"full", "quick", "rerun", None}
        The build mode; "quick" adds the small-sample banner.

    Returns
    -------
    str
        MyST Markdown.
    """
    _check_mode(mode)
    rows = sentences(table)
    paper, apart = rows[rows["kind"] == "paper"], rows[rows["kind"] != "paper"]
    parts = [quick_banner(mode), "## Summary", "",
             "One row per sentence of the paper that states a result, in the paper's order: what it says, the "
             "verdict and, for any verdict but reproduced, its cause. Click a column's header to sort; choose a "
             "verdict, a section or a cause to filter; the claim's id leads to its evidence below.", "",
             *_explorer(paper, "The paper's result sentences", "The paper says")]
    if len(apart):
        parts += ["## Our readings and our own claims", "",
                  "Our readings of sentences that state no result, and our own claims about the protocols after "
                  "PEM, are not the paper's results; they are listed apart and never among its largest differences.",
                  "", f"::::{{dropdown}} {len(apart)} sentences of ours ({_counts_words(apart)})",
                  ":class-container: ldp-folded", "",
                  *_explorer(apart, "Our readings and our own claims", "We say"), "::::", ""]
    parts += ["## Evidence, sentence by sentence", "",
              "Each sentence's quote, what was tested and measured, the rule, the verdict with its cause, and the "
              "verdict under each other reading the paper leaves open, by the paper's sections.", ""]
    for major, title in SECTIONS.items():
        sec = paper[paper["section"].map(_major) == major]
        if len(sec):
            parts += _evidence_group(title, sec, table)
    for kind, title in (("reading", "Our readings of sentences that state no result"),
                        ("ours", "Our own claims: the protocols after PEM, malicious users, scale")):
        sec = rows[rows["kind"] == kind]
        if len(sec):
            parts += _evidence_group(title, sec, table)
    return "\n".join(p for p in parts if p is not None) + "\n" + rules_section()


def summary_sentence(rows: pd.DataFrame) -> str:
    """The scorecard's opening: how many of the paper's sentences are reproduced, which are not, and why.

    ``rows`` is :func:`ldp.book.claims.sentences`' table.  The sentences not reproduced are named (their
    figure or statement) under the class of their cause; the partly reproduced and the untestable are
    counted by class.
    """
    paper = rows[rows["kind"] == "paper"]
    n = verdict_counts(paper)

    def by_class(verdict: str, named: bool) -> str:
        grp = paper[paper["verdict"] == verdict].groupby("cause_class", sort=False)["ref"]
        return ", ".join(f"{' and '.join(dict.fromkeys(_cell(r) for r in refs))} ({_cause_label(k)})" if named
                         else f"{len(refs)} {_cause_label(k)}" for k, refs in grp)

    text = f"**{n[V.REPRODUCED]} of the paper's {len(paper)} result sentences are reproduced**"
    if n[V.NOT_REPRODUCED]:
        text += f"; {n[V.NOT_REPRODUCED]} are not: {by_class(V.NOT_REPRODUCED, True)}"
    if n[V.PARTLY]:
        text += f"; {n[V.PARTLY]} partly ({by_class(V.PARTLY, False)})"
    if n[V.NOT_TESTABLE]:
        text += f"; {n[V.NOT_TESTABLE]} cannot be tested here ({by_class(V.NOT_TESTABLE, False)})"
    flips = [_cell(r["ref"]) for _, r in paper.iterrows() if _flips(r)]
    return text + "." + (f" Under another reading the paper leaves open, the verdict changes for: {'; '.join(flips)}."
                         if flips else "")


def _counts_text(rows: pd.DataFrame) -> str:
    return ", ".join(f"**{c}** {v}" for v, c in verdict_counts(rows).items())


def _engine_text(engine: str, mode: str | None) -> str:
    """What computed a figure; a quick build drops the paper-scale run counts ("(10 runs)")."""
    return re.sub(r" \(\d+ runs\)", "", engine) if mode == "quick" else engine


def render_scorecard(table: pd.DataFrame, mode: str | None, registry: Registry, *, report: str = REPORT_DOC) -> str:
    """The first page's details, folded: the scorecard (every count, the largest differences, the stand-ins) and
    what computed each figure.

    Parameters
    ----------
    table, mode
        As for :func:`render_report` (the claims table; the build mode, "quick" saying so in the titles).
    registry : Registry
        Its ``engines``: what computed each figure.
    report : str
        The report page's document name (a ``{doc}`` target).

    Returns
    -------
    str
        MyST Markdown: two dropdowns.
    """
    _check_mode(mode)
    rows = sentences(table)
    by = {k: rows[rows["kind"] == k] for k in ("paper", "reading", "ours")}
    quick = " (quick build: small samples, not the reproduction's verdicts)" if mode == "quick" else ""
    lines = [f"::::{{dropdown}} The scorecard in detail: every count, the largest differences, the stand-ins{quick}",
             ":class-container: ldp-folded", "", summary_sentence(rows), "",
             f"Each sentence of the paper that states a result is one claim, decided by a stated rule: "
             f"{_counts_text(by['paper'])}."
             + (f" Apart from them, {len(by['reading'])} of our readings of sentences that state no result "
                f"({_counts_text(by['reading'])})" if len(by["reading"]) else "")
             + (f" and {len(by['ours'])} claims of ours about the protocols after PEM "
                f"({_counts_text(by['ours'])})." if len(by["ours"]) else "."), ""]
    uncovered = int((~table["covered"].astype(bool)).sum())
    if uncovered:
        lines += [f"{uncovered} of them {NOT_COVERED}.", ""]
    diffs = largest_differences(rows)
    if len(diffs):
        lines += ["Where this build differs most from the paper, and why:", ""]
        lines += [f"- {_cell(r['ref'])}, {{ref}}`{r['id']} <{anchor(r['id'])}>` (**{r['verdict']}**): "
                  f"{_cell(r['paper'])}. *{_cause_label(r['cause_class']).capitalize()}:* {_cell(r['cause'])}"
                  for _, r in diffs.iterrows()]
        lines.append("")
    lines += ["Stand-ins and re-implementations: " + "; ".join(STAND_INS.values()) + ".", "",
              f"Every claim, its rule, its verdict and its cause: {{doc}}`the reproduction report <{report}>`.",
              "::::", "",
              f"::::{{dropdown}} What computed each figure{quick}", ":class-container: ldp-folded", ""]
    lines += [f"- {registry.title(f)} (`{f}`): {_engine_text(e, mode)}" if registry.title(f) != f
              else f"- `{f}`: {_engine_text(e, mode)}" for f, e in registry.engines.items() if not f.count("/")]
    return "\n".join([*lines, "", "::::", ""])


# --------------------------------------------------------------------------- the first page: answer and gallery
#: the sentences of the answer that quote the paper's main results: the claims each one reads (ids of the
#: registry), and how it opens (what the paper claims) and words its count (what this build finds)
ANSWER = {
    "pem": (("fig5-pem-best", "fig6-pem-best"),
            "The paper finds PEM better than SPM and MCM; here PEM scores at least as high as the better of the two "
            "at"),
    "analysis": (("fig2-analysis-matches", "fig3-analysis-matches", "fig4-analysis-matches"),
                 "It finds that its analysis predicts the simulations; here they agree within noise at"),
}
#: per rule, the numbers of its decision that count what passed and out of how many (``within-se``: the points
#: Holm's correction does not reject)
_PASSED = {"ordering": ("holds", "points"), "within-tolerance": ("within", "points"),
           "monotone": ("monotone", "series"), "argmax": ("passed", "series")}
#: how the answer counts the verdicts
_COUNT_WORDS = {V.REPRODUCED: "are reproduced", V.PARTLY: "partly", V.NOT_REPRODUCED: "are not",
                V.NOT_TESTABLE: "cannot be tested here"}


def _numbers(row) -> dict:
    """The numbers a claim's rule decided on (the table's ``numbers``, JSON), ``{}`` when there are none."""
    try:
        out = json.loads(row.get("numbers") or "{}")
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def _passed(row) -> tuple[int, int, str] | None:
    """(passed, out of, unit) from a decided claim's numbers, or None when it was not measured."""
    n = _numbers(row)
    try:
        if row["rule_kind"] == "within-se":
            return int(n["points"]) - int(n["holm_rejected"]), int(n["points"]), "points"
        passed, total = _PASSED[row["rule_kind"]]
        return int(n[passed]), int(n[total]), total
    except (KeyError, TypeError, ValueError):
        return None


def _join(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _figure_name(row) -> str:
    title = row["figure_title"] if isinstance(row["figure_title"], str) and row["figure_title"] else ""
    return title if title.startswith("Figure") else _cell(row["ref"])


def _tally(table: pd.DataFrame, ids: tuple[str, ...]) -> str:
    """'58 of 58 points of Figure 5 and 64 of 64 of Figure 6', each figure linked to its claim's evidence; a
    verdict other than reproduced follows its count; a claim not measured says why."""
    pieces, unit = [], ""
    for row in (r for _, r in table[table["id"].isin(ids)].iterrows()):
        name = f"{{ref}}`{_figure_name(row)} <{anchor(row['sentence'])}>`"
        counted = _passed(row) if row["verdict"] != V.NOT_TESTABLE else None
        if counted is None:
            pieces.append(f"none of {name}, which {_COUNT_WORDS[V.NOT_TESTABLE]} ({_cell(row['cause'])})")
            continue
        passed, total, what = counted
        pieces.append(f"{passed} of {total} {'' if what == unit else what + ' '}of {name}"
                      + ("" if row["verdict"] == V.REPRODUCED else f" ({row['verdict']})"))
        unit = what
    return _join(pieces) if pieces else "no point: the claims it reads are not in this build"


def answer_sentences(table: pd.DataFrame) -> list[str]:
    """The first page's answer: at most five plain sentences (MyST), each with this build's numbers.

    1. PEM against SPM and MCM (:data:`ANSWER`): the points of Figures 5 and 6 where PEM is at least the better
       of the two;
    2. the analysis against simulation: the points of Figures 2-4 where they agree within noise;
    3. the verdicts of the paper's result sentences, counted;
    4. what did not reproduce (each sentence linked to its evidence, with the class of its cause);
    5. the largest difference (:func:`ldp.book.claims.largest_differences`) and its cause, whole.

    Every number, verdict and cause is read from ``table`` (:func:`ldp.book.claims.evaluation`'s); a sentence
    whose claims are not in it says so.
    """
    rows = sentences(table)
    paper = rows[rows["kind"] == "paper"]
    out = [f"{opening} {_tally(table, ids)}." for ids, opening in ANSWER.values()]
    counts = {v: c for v, c in verdict_counts(paper).items() if c}
    out.append(f"Of the paper's {len(paper)} result sentences, "
               + _join([f"{c} {_COUNT_WORDS[v]}" for v, c in counts.items()]) + ".")
    missed = paper[paper["verdict"] == V.NOT_REPRODUCED]
    if len(missed):
        out.append("Not reproduced, by the class of their cause: " + "; ".join(
            _join([f"{{ref}}`{_cell(r['ref'])} <{anchor(r['id'])}>`" for _, r in grp.iterrows()])
            + f" ({_cause_label(kind)})" for kind, grp in missed.groupby("cause_class", sort=False)) + ".")
    top = largest_differences(rows, 1)
    if len(top):
        r = top.iloc[0]
        out.append(f"The largest difference is in {{ref}}`{_cell(r['ref'])} <{anchor(r['id'])}>` "
                   f"(“{_cell(r['paper'])}”, {r['verdict']}); its cause: {_sentence_end(_cell(r['cause']))}")
    return out


def quick_line(mode: str | None) -> str:
    """A quick build's banner in one line, for the first screen (MyST admonition), empty otherwise."""
    if mode != "quick":
        return ""
    return ("```{warning}\n:class: ldp-banner\n**Quick build.** Small samples: these numbers exercise the rules; the "
            "reproduction's verdicts come from the paper-scale build.\n```\n")


def render_answer(table: pd.DataFrame, mode: str | None) -> str:
    """The first page's answer (:func:`answer_sentences`), after a quick build's banner (MyST)."""
    _check_mode(mode)
    items = "\n".join(f"- {s}" for s in answer_sentences(table))
    return f"{quick_line(mode)}```{{container}} ldp-answer\n{items}\n```\n"


def _figures_of(table: pd.DataFrame) -> dict[str, list[str]]:
    """Figure label -> the sentences that read it (those whose parts name it), in the report's order."""
    out: dict[str, list[str]] = {}
    for sid, figure in zip(table["sentence"], table["figure"]):
        if figure and sid not in out.setdefault(figure, []):
            out[figure].append(sid)
    return out


def render_gallery(table: pd.DataFrame, figures: str | Path | None = None) -> str:
    """The first page's gallery: each figure of the paper as this build drew it, beside its verdicts (MyST).

    One card per figure of ``book/_ext/paper_numbers.yml``, in the paper's order: the figure's image as a
    thumbnail (``<figures>/<label>.svg``; a figure this build did not draw says so), its number and one badge
    per verdict of the sentences that read it (the rows of its evidence box), counted; the card links to the
    figure in its chapter. HTML only: the PDF has the figures in their chapters.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`ldp.book.claims.evaluation`'s table.
    figures : path-like, optional
        The folder of the build's figures; default ``_generated/figures``.
    """
    folder = Path(figures) if figures is not None else generated_dir() / "figures"
    verdict = dict(zip(*(sentences(table)[c] for c in ("id", "verdict")))) if len(table) else {}
    reads = _figures_of(table)
    lines = ["```{only} html", "::::::{grid} 1 2 3 3", ":gutter: 2", ":class-container: ldp-gallery", ""]
    for fig in paper_numbers()["figures"]:
        label = next(iter(fig.get("book") or {}), "")
        if not label:
            continue
        number = fig["number"]
        counts = {v: sum(verdict.get(s) == v for s in reads.get(label, [])) for v in V.VERDICTS}
        badges = " ".join(f"{{bdg-{_BADGE[v]}}}`{c} {_GALLERY_WORDS[v]}`" for v, c in counts.items() if c)
        alt = f"Figure {number} as this build drew it: {_plain_title(fig['title'])}"
        image = ([f":::{{image}} /_generated/figures/{label}.svg", f":alt: {alt}", ":class: ldp-thumb", ":::"]
                 if (folder / f"{label}.svg").is_file() else ["*(not drawn in this build)*"])
        lines += [":::::{grid-item-card}", f":link: {label}", ":link-type: ref",
                  f":link-alt: Figure {number} in its chapter: {_plain_title(fig['title'])}",
                  ":class-card: ldp-gallery-card", "",
                  *image, "", f"**Figure {number}** {badges or 'no claim reads it'}", ":::::", ""]
    return "\n".join([*lines, "::::::", "```", ""])


def _plain_title(title) -> str:
    """A figure's title (``paper_numbers.yml``) as plain text on one line, for an image's alt text and a link's."""
    return " ".join(str(title).replace("$", "").split())


#: the gallery's badges: a count and a short word
_GALLERY_WORDS = {V.REPRODUCED: "reproduced", V.PARTLY: "partly", V.NOT_REPRODUCED: "not reproduced",
                  V.NOT_TESTABLE: "not testable"}


def _plain(value):
    """A JSON-ready scalar (NaN -> None, numpy -> Python)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


_JSON_FIELDS = ("id", "section", "ref", "paper", "tested", "measured", "verdict", "explanation", "note", "figure",
                "chapter", "covered", "ours", "reading", "decides", "cause_class", "cause")


def claims_json(table: pd.DataFrame, mode: str | None) -> dict:
    """The evaluated claims as the evidence extension reads them.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`ldp.book.claims.evaluation`'s table.
    mode : {"full", "quick", "rerun", None}
        The build mode (a quick build's boxes carry the small-sample banner).

    Returns
    -------
    dict
        ``{"mode", "counts", "figures": {label: the paper's number}, "rows": [...]}``: one row per
        sentence (the counts too), with its ``verdict``, ``cause_class``, ``cause`` (the class's label in
        ``cause_label``), ``flips``, ``kind``, ``label`` (the anchor of its evidence on the report page),
        ``figures`` (every figure its parts read) and ``parts``: each claim with the fields of
        :data:`_JSON_FIELDS`, the quote as the paper prints it and ``sensitivity``.
    """
    rows = sentences(table)
    out = []
    for _, s in rows.iterrows():
        parts = []
        for _, r in table[table["sentence"] == s["id"]].iterrows():
            p = {k: _plain(r[k]) for k in _JSON_FIELDS}
            p |= {k: caret_math(p[k]) for k in ("paper", "measured", "explanation", "note", "ref", "cause")
                  if isinstance(p.get(k), str)}  # x^y as math, as on the report page
            parts.append(p | {"quote": display_quote(r["quote"]), "sensitivity": json.loads(r["sensitivity"]),
                              "cause_label": _cause_label(r["cause_class"])})
        out.append({"id": s["id"], "kind": s["kind"], "verdict": s["verdict"], "cause_class": s["cause_class"],
                    "cause_label": _cause_label(s["cause_class"]), "cause": caret_math(s["cause"]),
                    "flips": _flips(s), "label": anchor(s["id"]), "figures": sorted({p["figure"] for p in parts
                                                                                      if p["figure"]}), "parts": parts})
    return {"mode": mode, "counts": verdict_counts(rows[rows["kind"] == "paper"]),
            "figures": {f: t or f for f, t in sorted(zip(table["figure"], table["figure_title"])) if f}, "rows": out}


def _write(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_outputs(store: ResultStore, registry: Registry, folder: str | Path | None = None, *, mode: str | None = None,
                  chapters: Iterable[str] | None = None) -> dict[str, Path]:
    """Evaluate every claim against ``store`` and write the renderings for the book, atomically.

    Writes ``claims.csv``, ``claims.json``, ``report.md``, ``answer.md``, ``gallery.md`` and ``scorecard.md``
    into ``folder`` (default ``<store>/report``); the gallery shows the figures of ``<folder>/../figures``.

    Parameters
    ----------
    store : ResultStore
        The results of a build mode or a rerun.
    registry : Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`).
    folder : path-like, optional
        Where to write.
    mode : {"full", "quick", "rerun"}, optional
        Default: the store's mode (a quick build's pages carry the banner).
    chapters : iterable of str, optional
        Only the claims of these chapters.

    Returns
    -------
    dict
        The written paths by name (``"report.md"``, ...).
    """
    mode = store.mode if mode is None else mode
    folder = Path(folder) if folder is not None else store.root / REPORT_DIR
    table = evaluate(store, registry, chapters=chapters)
    with atomic_path(folder / "claims.csv") as tmp:
        table.to_csv(tmp, index=False)
    return {"claims.csv": folder / "claims.csv",
            CLAIMS_JSON: _write(folder / CLAIMS_JSON, json.dumps(claims_json(table, mode), indent=1,
                                                                ensure_ascii=False) + "\n"),
            "report.md": _write(folder / "report.md", render_report(table, mode)),
            "answer.md": _write(folder / "answer.md", render_answer(table, mode)),
            "gallery.md": _write(folder / "gallery.md", render_gallery(table, folder.parent / "figures")),
            "scorecard.md": _write(folder / "scorecard.md", render_scorecard(table, mode, registry))}


def write_book_report(mode: str, registry: Registry, generated: str | Path | None = None) -> dict[str, Path]:
    """The claims of a book build, for the book: ``<generated>/report/`` (see the module's docstring).

    Parameters
    ----------
    mode : {"full", "quick"}
        The build's mode; its store is ``<generated>/cache/<mode>``.
    registry : Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`).
    generated : path-like, optional
        Default :func:`ldp.paths.generated_dir`.

    Returns
    -------
    dict
        The written paths by name.
    """
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} must be one of {MODES}")
    base = Path(generated) if generated is not None else generated_dir()
    return write_outputs(ResultStore.for_build(mode, base), registry, base / REPORT_DIR, mode=mode)


def write_rerun_report(folder: str | Path, chapter: str, registry: Registry) -> dict[str, Path]:
    """The claims table of a rerun, in its folder: ``claims.csv`` and ``claims.md``.

    Only the claims ``chapter`` measures; the run's ``parameters.json`` (every
    value it ran with) decides which of them its setting still covers.

    Parameters
    ----------
    folder : path-like
        The run's folder (``my-runs/NAME-HASH``, or ``--out``), holding
        ``figures/`` and ``parameters.json``.
    chapter : str
        The chapter that ran, e.g. ``"06_evaluation"``.
    registry : Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`).

    Returns
    -------
    dict
        ``{"claims.csv": path, "claims.md": path}``.
    """
    store = ResultStore.for_rerun(folder)
    params = store.root / "parameters.json"
    if params.is_file() and store.parameters(chapter) is None:  # a --out folder not named CHAPTER-HASH
        store.save_parameters(chapter, json.loads(params.read_text(encoding="utf-8")))
    table = evaluate(store, registry, chapters=[chapter])
    with atomic_path(store.root / "claims.csv") as tmp:
        table.to_csv(tmp, index=False)
    page = f"# Claims of this rerun of {chapter}\n\n" + render_report(table, "rerun")
    return {"claims.csv": store.root / "claims.csv", "claims.md": _write(store.root / "claims.md", page)}
