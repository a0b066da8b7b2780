"""The first page of the book: the answer, in at most five plain sentences, and the gallery of the paper's figures.

- :func:`render_answer`: what the paper claims and what this build finds: PEM against SPM and MCM, the
  analysis against simulation, the verdicts counted, what did not reproduce and the measured cause of the
  largest difference (:func:`answer_sentences`), after a quick build's one-line banner.
- :func:`render_gallery`: each of the paper's figures as this build drew it, beside the verdicts of the
  sentences that read it, linking to the figure in its chapter.

Every number, verdict and cause comes from :func:`ldp.book.claims.evaluation`'s table; this module words it
(MyST, with the pieces of :mod:`ldp.book.report`).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..paths import generated_dir
from .claims import verdicts as V
from .claims.claim import paper_numbers
from .claims.evaluation import largest_differences, sentences, verdict_counts
from .report import BADGE, anchor, cause_label, cell, check_mode, sentence_end

__all__ = ["ANSWER", "COUNT_WORDS", "GALLERY_WORDS", "answer_sentences", "quick_line", "render_answer",
           "render_gallery"]


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
COUNT_WORDS = {V.REPRODUCED: "are reproduced", V.PARTLY: "partly", V.NOT_REPRODUCED: "are not",
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
    return title if title.startswith("Figure") else cell(row["ref"])


def _tally(table: pd.DataFrame, ids: tuple[str, ...]) -> str:
    """'58 of 58 points of Figure 5 and 64 of 64 of Figure 6', each figure linked to its claim's evidence; a
    verdict other than reproduced follows its count; a claim not measured says why."""
    pieces, unit = [], ""
    for row in (r for _, r in table[table["id"].isin(ids)].iterrows()):
        name = f"{{ref}}`{_figure_name(row)} <{anchor(row['sentence'])}>`"
        counted = _passed(row) if row["verdict"] != V.NOT_TESTABLE else None
        if counted is None:
            pieces.append(f"none of {name}, which {COUNT_WORDS[V.NOT_TESTABLE]} ({cell(row['cause'])})")
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
               + _join([f"{c} {COUNT_WORDS[v]}" for v, c in counts.items()]) + ".")
    missed = paper[paper["verdict"] == V.NOT_REPRODUCED]
    if len(missed):
        out.append("Not reproduced, by the class of their cause: " + "; ".join(
            _join([f"{{ref}}`{cell(r['ref'])} <{anchor(r['id'])}>`" for _, r in grp.iterrows()])
            + f" ({cause_label(kind)})" for kind, grp in missed.groupby("cause_class", sort=False)) + ".")
    top = largest_differences(rows, 1)
    if len(top):
        r = top.iloc[0]
        out.append(f"The largest difference is in {{ref}}`{cell(r['ref'])} <{anchor(r['id'])}>` "
                   f"(“{cell(r['paper'])}”, {r['verdict']}); its cause: {sentence_end(cell(r['cause']))}")
    return out


def quick_line(mode: str | None) -> str:
    """A quick build's banner in one line, for the first screen (MyST admonition), empty otherwise."""
    if mode != "quick":
        return ""
    return ("```{warning}\n:class: ldp-banner\n**Quick build.** Small samples: these numbers exercise the rules; the "
            "reproduction's verdicts come from the paper-scale build.\n```\n")


def render_answer(table: pd.DataFrame, mode: str | None) -> str:
    """The first page's answer (:func:`answer_sentences`), after a quick build's banner (MyST)."""
    check_mode(mode)
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
        badges = " ".join(f"{{bdg-{BADGE[v]}}}`{c} {GALLERY_WORDS[v]}`" for v, c in counts.items() if c)
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
GALLERY_WORDS = {V.REPRODUCED: "reproduced", V.PARTLY: "partly", V.NOT_REPRODUCED: "not reproduced",
                  V.NOT_TESTABLE: "not testable"}
