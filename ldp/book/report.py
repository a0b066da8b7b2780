"""The reproduction report's page, rendered from the evaluated claims, and the MyST pieces the book's pages share.

The claims are decided below, by :func:`ldp.book.claims.evaluation` (one row per claim) and
:func:`ldp.book.claims.sentences` (one row per sentence of the paper); this module only renders them, as MyST
Markdown:

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
- the pieces of MyST every page of the report uses: :func:`cell`, :func:`anchor`, :func:`caret_math`,
  :func:`cause_label`, :data:`BADGE`, :func:`quick_banner`.

The first page's answer and gallery are :mod:`ldp.book.answer`; :mod:`ldp.book.pages` writes the files.
"""
from __future__ import annotations

import json
import math
import re

import pandas as pd

from .claims import verdicts as V
from .claims.claim import STAND_INS, Registry, display_quote
from .claims.evaluation import NOT_COVERED, largest_differences, sentences, verdict_counts

__all__ = ["REPORT_DIR", "CLAIMS_JSON", "REPORT_DOC", "SECTIONS", "BADGE", "anchor", "caret_math", "cell",
           "major_section", "cause_label", "sentence_end", "check_mode", "quick_banner", "render_report",
           "render_scorecard", "summary_sentence", "claims_json"]

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
BADGE = {V.REPRODUCED: "success", V.PARTLY: "warning", V.NOT_REPRODUCED: "danger", V.NOT_TESTABLE: "muted"}
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


def check_mode(mode: str | None) -> None:
    """Refuse a mode other than ``"full"``, ``"quick"``, ``"rerun"`` or None, naming the allowed ones."""
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


def cell(text) -> str:
    """Text safe for one line of MyST (a table cell, a list item): pipes escaped, powers as math."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    return caret_math(re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip())


def anchor(sentence_id: str) -> str:
    """The label of a sentence's evidence on the report page (explorer rows, scorecard and boxes link to it)."""
    return f"claim-{sentence_id}"


def major_section(section: str) -> str:
    """The report's group of a claim's section (a key of :data:`SECTIONS`; the appendix goes with section 4)."""
    head = str(section).split(".")[0]
    return head if head in SECTIONS else "4"


def _badge(verdict: str) -> str:
    return f"{{bdg-{BADGE[verdict]}}}`{verdict}`"


def cause_label(kind: str) -> str:
    """The short label of a cause class (:data:`ldp.book.claims.verdicts.CAUSES`), empty for an unknown one."""
    return V.CAUSES[kind][0] if kind in V.CAUSES else ""


def _where(row) -> str:
    title = row["figure_title"] if isinstance(row["figure_title"], str) and row["figure_title"] else ""
    ref = cell(row["ref"])
    return f"§{row['section']}, {ref}" if not title or title in ref else f"§{row['section']}, {ref} ({title})"


def _link(row) -> str:
    """Where the book measures a claim: its figure (numbered as the paper numbers it), else its chapter."""
    if row["figure"]:
        return f"{{numref}}`Figure %s <{row['figure']}>`"
    return f"{{doc}}`/_generated/notebooks/{row['chapter']}`"


def _flips(row) -> dict[str, str]:
    return json.loads(row.get("flips") or "{}")


def sentence_end(text: str) -> str:
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
        claim = f"{{ref}}`{r['id']} <{anchor(r['id'])}>` §{r['section']}, {cell(r['ref'])}"
        cause = (f"**{cause_label(r['cause_class'])}**: {sentence_end(cell(r['cause']))}"
                 if r["cause_class"] else "")
        cause += "".join(f" *Another reading: {v}.*" for v in _flips(r).values())
        out += [f"* - {claim}", f"  - {cell(r['paper'])}", f"  - {_badge(r['verdict'])}", f"  - {cause}"]
    return out + [":::", ""]


def _part_lines(p, indent: str = "") -> list[str]:
    """What the evidence says about one claim (a sentence of one part, or one part of a sentence)."""
    lines = [f"{indent}- **We test:** {cell(p['tested'])} ({cell(p['rule'])})",
             f"{indent}- **We measure:** {cell(p['measured'] or '—')}"
             + (f" *{cell(p['note'])}*" if p["note"] else ""),
             f"{indent}- **Verdict:** {_badge(p['verdict'])} {cell(p['explanation'])}"]
    if p["cause_class"]:
        lines.append(f"{indent}- **Cause ({cause_label(p['cause_class'])}):** {cell(p['cause'])}")
    others = json.loads(p["sensitivity"] or "[]")
    if p["interpretation"] and not others and p["verdict"] != V.NOT_TESTABLE:
        lines.append(f"{indent}- **Under another reading:** none computed (the readings cited below have no "
                     "documented alternative that the saved results can decide)")
    for s in others:
        flips = " — **the verdict flips**" if s["flips"] else " — the verdict stands"
        lines.append(f"{indent}- **Under another reading** "
                     f"([{cell(s['reading'])}]({INTERPRETATION_DOC}#{s['anchor']})):"
                     f" {s['verdict']}{flips if s['verdict'] != V.NOT_TESTABLE else ''}; {cell(s['measured'])}")
    flags = []
    if p["stand_in"]:
        flags.append("rests on " + ", ".join(_SHORT_STAND_IN.get(s, s) for s in p["stand_in"].split(", "))
                     + ("" if p["stand_in_decides"] else " (which cannot decide it)"))
    if p["interpretation"]:
        flags.append("our reading: " + " ".join(f"[{i + 1}]({INTERPRETATION_DOC}#{a})"
                                                for i, a in enumerate(p["interpretation"].split(", "))))
    if p["coverage"]:
        flags.append(cell(p["coverage"]))
    if flags:
        lines.append(f"{indent}- **Flags:** " + "; ".join(flags))
    return lines + [f"{indent}- **Measured in** {_link(p)}"]


def _evidence(row, parts: pd.DataFrame) -> list[str]:
    """One sentence's evidence, folded under a one-line title (id, where, verdict): its quote, what the paper
    says, the cause and the other readings' verdicts, then its parts (or the one claim that is it)."""
    flips = "".join(f" Under {cell(k)} it would be **{v}**." for k, v in _flips(row).items())
    lines = [f"({anchor(row['id'])})=", f"::::{{dropdown}} {row['id']} · {_where(row)} · {_badge(row['verdict'])}",
             ":class-container: ldp-evidence", "", f"> “{cell(display_quote(row['quote']))}”", "",
             f"*The paper:* {cell(row['paper'])}."
             + (f" **Cause ({cause_label(row['cause_class'])}):** {cell(row['cause'])}" if row["cause_class"] else "")
             + flips, ""]
    if len(parts) == 1:
        return lines + _part_lines(parts.iloc[0]) + ["::::", ""]
    lines.append(f"This sentence has {len(parts)} parts (the verdict combines those that decide it):")
    lines.append("")
    for _, p in parts.iterrows():
        role = "" if p["decides"] else " (a detail: it shows an exception and does not decide)"
        lines.append(f"- `{p['id']}`{role}: “{cell(display_quote(p['quote']))}” ({cell(p['paper'])})")
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
             + cell(V.COMBINE_RULE[0].upper() + V.COMBINE_RULE[1:]) + ".", ""]
    lines += _list_table(("Rule", "When it says reproduced", "When partly"), "22 39 39",
                         [(k, cell(t), cell(V.PARTLY_RULE[k])) for k, t in text.items()])
    lines += ["Tolerances (written once, in `ldp.book.claims.verdicts`):", ""]
    lines += _list_table(("Constant", "Value", "Meaning"), "32 14 54",
                         [(f"`{t['constant']}`", t["value"] if isinstance(t["value"], str) else f"{t['value']:.4g}",
                           cell(t["meaning"])) for _, t in V.tolerance_table().iterrows()])
    lines += ["Every verdict other than reproduced names its cause, of one of these classes:", ""]
    lines += _list_table(("Cause", "Meaning"), "22 78", [(lab, cell(m)) for lab, m in V.CAUSES.values()])
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
    check_mode(mode)
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
        sec = paper[paper["section"].map(major_section) == major]
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
        return ", ".join(f"{' and '.join(dict.fromkeys(cell(r) for r in refs))} ({cause_label(k)})" if named
                         else f"{len(refs)} {cause_label(k)}" for k, refs in grp)

    text = f"**{n[V.REPRODUCED]} of the paper's {len(paper)} result sentences are reproduced**"
    if n[V.NOT_REPRODUCED]:
        text += f"; {n[V.NOT_REPRODUCED]} are not: {by_class(V.NOT_REPRODUCED, True)}"
    if n[V.PARTLY]:
        text += f"; {n[V.PARTLY]} partly ({by_class(V.PARTLY, False)})"
    if n[V.NOT_TESTABLE]:
        text += f"; {n[V.NOT_TESTABLE]} cannot be tested here ({by_class(V.NOT_TESTABLE, False)})"
    flips = [cell(r["ref"]) for _, r in paper.iterrows() if _flips(r)]
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
    check_mode(mode)
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
        lines += [f"- {cell(r['ref'])}, {{ref}}`{r['id']} <{anchor(r['id'])}>` (**{r['verdict']}**): "
                  f"{cell(r['paper'])}. *{cause_label(r['cause_class']).capitalize()}:* {cell(r['cause'])}"
                  for _, r in diffs.iterrows()]
        lines.append("")
    lines += ["Stand-ins and re-implementations: " + "; ".join(STAND_INS.values()) + ".", "",
              f"Every claim, its rule, its verdict and its cause: {{doc}}`the reproduction report <{report}>`.",
              "::::", "",
              f"::::{{dropdown}} What computed each figure{quick}", ":class-container: ldp-folded", ""]
    lines += [f"- {registry.title(f)} (`{f}`): {_engine_text(e, mode)}" if registry.title(f) != f
              else f"- `{f}`: {_engine_text(e, mode)}" for f, e in registry.engines.items() if not f.count("/")]
    return "\n".join([*lines, "", "::::", ""])


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
                              "cause_label": cause_label(r["cause_class"])})
        out.append({"id": s["id"], "kind": s["kind"], "verdict": s["verdict"], "cause_class": s["cause_class"],
                    "cause_label": cause_label(s["cause_class"]), "cause": caret_math(s["cause"]),
                    "flips": _flips(s), "label": anchor(s["id"]), "figures": sorted({p["figure"] for p in parts
                                                                                      if p["figure"]}), "parts": parts})
    return {"mode": mode, "counts": verdict_counts(rows[rows["kind"] == "paper"]),
            "figures": {f: t or f for f, t in sorted(zip(table["figure"], table["figure_title"])) if f}, "rows": out}
