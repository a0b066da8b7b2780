"""Evaluate every claim against a result store and render the report, the scorecard and evidence boxes.

:func:`evaluate` turns a registry of claims (:data:`ldp.figures.REGISTRY`) and a
:class:`~ldp.reporting.results.ResultStore` into a tidy table, one row per claim
(:data:`COLUMNS`), each decided by :func:`evaluate_claim`.  A claim is "not
testable here" when its inputs are missing (e.g. the AOL data was absent), when
the run's parameters leave out its setting (``covered`` is then ``False``), or
when a stand-in cannot decide it.  Three MyST renderings, each taking the build
mode (a quick build's open with a banner: small samples, not the reproduction's
verdicts): :func:`render_report` (the report page, by the paper's sections, the
rules and tolerances first), :func:`render_scorecard` (counts per verdict, the
largest differences, stand-ins, engines) and :func:`render_evidence` (a box under a figure).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from . import verdicts as V
from .claims import STAND_INS, Claim, Measurement, MissingInput, NotCovered, Registry, display_quote
from .results import MissingResult, ResultStore

__all__ = ["evaluate", "evaluate_claim", "check_setting", "render_report", "render_scorecard", "render_evidence",
           "quick_banner", "group_label", "largest_differences", "verdict_counts", "NOT_COVERED", "REPORT_DOC",
           "COLUMNS", "SECTIONS", "SCALE", "caret_math"]

#: the parameters that only set the size of a run (users): a quick build shrinks them on purpose, so there they
#: do not make a claim "not covered" (its row says the size it ran at); a rerun that changes them does
SCALE = ("n_users", "n_synthetic")
#: the mark of a claim whose setting the run's parameters leave out
NOT_COVERED = "not covered by this run's parameters"
#: where the report page lives in the book (absolute MyST path, no suffix)
REPORT_DOC = "/book/reproduction"
INTERPRETATION_DOC = "/book/interpretation.md"
#: the columns of :func:`evaluate`'s table
COLUMNS = ["id", "section", "ref", "quote", "paper", "tested", "measured", "rule", "rule_kind", "verdict",
           "explanation", "note", "stand_in", "stand_in_decides", "interpretation", "chapter", "figure", "link",
           "covered", "coverage", "excess", "ours", "figure_title"]

_SHORT_STAND_IN = {"url": "the URL stand-in", "mcm": "our MCM (from the text)", "spm": "our SPM (from the text)"}
#: the report's groups: the paper's sections, then section 7 and our claims about what came after PEM
SECTIONS = {
    "2": "Section 2: frequency oracles",
    "3": "Section 3: existing methods",
    "4": "Section 4: PEM and its analysis (with the appendix)",
    "5": "Section 5: validation of the analysis",
    "6": "Section 6: evaluation",
    "7": "Section 7 and after: PEM against TreeHist and SFP, malicious users, scale (ours: not the paper's)",
}


# --------------------------------------------------------------------------- #
# evaluation
# --------------------------------------------------------------------------- #
def _contains(values, wanted) -> bool:
    try:
        have = np.asarray(list(values), dtype=float)
        return bool(np.any(np.isclose(have, float(wanted), rtol=1e-9, atol=1e-12)))
    except (TypeError, ValueError):
        return wanted in list(values)


def check_setting(claim: Claim, params: dict | None, *, skip: Iterable[str] = ()) -> str:
    """``""`` if the chapter's parameters cover the claim's setting (or are unknown), else the reason.

    Parameters named in ``skip`` are not checked (a quick build's smaller populations, :data:`SCALE`).
    """
    if not params or not claim.setting:
        return ""
    misses = []
    for name, want in claim.setting.items():
        if name not in params or name in skip:
            continue
        have = params[name]
        if isinstance(want, tuple):
            if not isinstance(have, (list, tuple)):
                have = [have]
            missing = [w for w in want if not _contains(have, w)]
            if missing:
                misses.append(f"{name} = {have} leaves out {', '.join(f'{w:g}' for w in missing)}")
        else:
            same = (math.isclose(float(have), float(want), rel_tol=1e-9)
                    if isinstance(want, (int, float)) and isinstance(have, (int, float)) else have == want)
            if not same:
                misses.append(f"{name} = {have!r} (the claim's setting: {want!r})")
    return "; ".join(misses)


def _excess(kind: str, numbers: dict) -> float:
    """How far beyond its threshold a decision is, in units of the threshold (<= 1: within)."""
    try:
        if kind == "within-se":
            return float(numbers["max_abs_z"]) / float(numbers["bonferroni_z"])
        if kind == "within-tolerance":
            tol = float(numbers["tol"])
            if tol > 0:
                return float(numbers["max_abs_diff"]) / tol
            # an exact comparison (a count, a layout): a mismatch counts as just beyond its threshold
            return 0.0 if numbers["max_abs_diff"] <= V.EXACT_TOL else 1.0
        if kind == "ordering":
            return max(0.0, -float(numbers["worst_z"])) / V.Z_TOL
        if kind == "monotone":
            return abs(float(numbers["worst_z"])) / V.Z_TOL
        if kind == "argmax":
            return float(numbers["largest_gap_z"]) / V.Z_TOL
    except (KeyError, TypeError, ValueError):
        pass
    return float("nan")


def _link(claim: Claim) -> str:
    """Where the book measures the claim: its figure (numbered as the paper numbers it), else its chapter."""
    if claim.figure:
        return f"{{numref}}`Figure %s <{claim.figure}>`"
    return f"{{doc}}`/_generated/notebooks/{claim.chapter}`"


def evaluate_claim(claim: Claim, store: ResultStore, *, title: str = "") -> dict:
    """One row of :func:`evaluate` for ``claim``, and ``numbers``: the numbers its rule decided on (or ``{}``).

    This is the one place a verdict is computed: the report, a rerun's claims table and a
    chapter's sentences about a claim (:func:`ldp.book.claim_values`) all read this row.
    ``title`` is what the paper calls the claim's figure (:meth:`Registry.title`).
    """
    row = {"numbers": {}, "figure_title": title, "id": claim.id, "section": claim.section, "ref": claim.ref,
           "quote": claim.quote, "paper": claim.paper,
           "tested": claim.tested, "measured": "", "rule": claim.rule.describe(), "rule_kind": claim.rule.kind,
           "verdict": V.NOT_TESTABLE, "explanation": "", "note": claim.note,
           "stand_in": ", ".join(claim.stand_in), "stand_in_decides": claim.stand_in_decides,
           "interpretation": ", ".join(claim.interpretation), "chapter": claim.chapter, "figure": claim.figure or "",
           "link": _link(claim), "covered": True, "coverage": "", "excess": float("nan"), "ours": claim.ours}
    params = store.parameters(claim.chapter)
    if store.mode == "quick":
        scaled = check_setting(claim, params, skip=[n for n in claim.setting if n not in SCALE])
        if scaled:
            row["coverage"] = f"quick build, smaller population: {scaled}"
    reason = check_setting(claim, params, skip=SCALE if store.mode == "quick" else ())
    if reason:
        row |= {"covered": False, "coverage": f"{NOT_COVERED}: {reason}",
                "explanation": f"{NOT_COVERED}: {reason}"}
        return row
    try:
        out = claim.measure(store)
        m = out if isinstance(out, Measurement) else Measurement(out)
        decision = claim.rule.decide(m.frame)
    except NotCovered as exc:
        row |= {"covered": False, "coverage": f"{NOT_COVERED}: {exc}", "explanation": f"{NOT_COVERED}: {exc}"}
        return row
    except (MissingResult, MissingInput) as exc:
        row["explanation"] = f"input missing: {exc}"
        return row
    except Exception as exc:  # a table whose columns changed: fail loudly, naming the claim
        raise RuntimeError(f"claim {claim.id}: measuring it failed ({type(exc).__name__}: {exc}); "
                           f"its inputs: {', '.join(claim.inputs or ()) or 'none'}") from exc
    row |= {"measured": decision.summary + (f"; {m.note}" if m.note else ""), "verdict": decision.verdict,
            "numbers": dict(decision.numbers), "explanation": decision.explanation,
            "excess": _excess(claim.rule.kind, dict(decision.numbers))}
    if claim.stand_in and not claim.stand_in_decides and decision.verdict != V.NOT_TESTABLE:
        names = " and ".join(STAND_INS[s].split(":")[0] for s in claim.stand_in)
        row |= {"verdict": V.NOT_TESTABLE,
                "explanation": f"rests on a stand-in that cannot decide it ({names}); the rule alone would give: "
                               f"{decision.verdict} ({decision.explanation})"}
    return row


def evaluate(store: ResultStore, registry: Registry, *, chapters: Iterable[str] | None = None) -> pd.DataFrame:
    """Every claim's verdict against ``store``: a tidy table with :data:`COLUMNS`.

    Parameters
    ----------
    store : ResultStore
        The results of a build mode or a rerun.
    registry : Registry
        The claims (:data:`ldp.figures.REGISTRY`).
    chapters : iterable of str, optional
        Only the claims measured in these chapters (e.g. the one a rerun ran).

    Returns
    -------
    pandas.DataFrame
        One row per claim, in registry order.
    """
    if not isinstance(store, ResultStore):
        raise TypeError(f"store must be a ResultStore, got {type(store).__name__}")
    wanted = None if chapters is None else set(chapters)
    rows = [evaluate_claim(c, store, title=registry.title(c.figure) if c.figure else "")
            for c in registry.claims if wanted is None or c.chapter in wanted]
    return pd.DataFrame(rows, columns=COLUMNS)


# --------------------------------------------------------------------------- #
# rendering
# --------------------------------------------------------------------------- #
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


_GREEK = {"ε": r"\varepsilon", "η": r"\eta", "θ": r"\theta", "γ": r"\gamma"}
_CARET = re.compile(r"(?<![\w.])([A-Za-z0-9.]+|\([^()]*\))\^([A-Za-z0-9.εηθγ]+)")


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
    """Text safe for a Markdown table cell: one line, pipes escaped, powers as math (:func:`caret_math`)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    return caret_math(re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip())


def _major(section: str) -> str:
    head = section.split(".")[0]
    return head if head in SECTIONS else "4"


def group_label(row) -> str:
    """The Sphinx label of the report's group (section, figure) that holds a claim's row."""
    fig = row["figure"] or "text"
    return f"claims-s{_major(row['section'])}-{fig}"


def _flags(row) -> str:
    out = []
    if row["stand_in"]:
        out.append("rests on " + ", ".join(_SHORT_STAND_IN.get(s, s) for s in row["stand_in"].split(", "))
                   + ("" if row["stand_in_decides"] else " (cannot decide it)"))
    if row["interpretation"]:
        links = [f"[{i + 1}]({INTERPRETATION_DOC}#{a})" for i, a in enumerate(row["interpretation"].split(", "))]
        out.append("our reading: " + " ".join(links))
    if not row["covered"]:
        out.append(NOT_COVERED)
    elif row["coverage"]:  # a quick build's smaller population
        out.append(row["coverage"])
    if row.get("ours", False):
        out.insert(0, "**ours**, not the paper's")
    return "; ".join(out)


def _group_title(fig: str, title: str) -> str:
    return f"{title or fig}: our figure `{fig}`" if fig else "Text and equations"


def rules_section() -> str:
    """The rules, tolerances and the meaning of each verdict, for the top of the report page."""
    lines = ["## How the verdicts are decided", "",
             "Every verdict is computed from the saved figure data by one of five rules "
             "(`ldp.reporting.rules`); none is typed by hand. The verdicts are exactly: "
             + ", ".join(f"**{v}**" for v in V.VERDICTS) + ". A claim is *not testable here* when its inputs are "
             "missing, when the run's parameters leave out its setting, or when it rests on a stand-in that cannot "
             "decide it.", "",
             "| Rule | When it says reproduced | When partly |", "| --- | --- | --- |"]
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
    for kind in ("within-se", "within-tolerance", "ordering", "monotone", "argmax"):
        lines.append(f"| {kind} | {_cell(text[kind])} | {_cell(V.PARTLY_RULE[kind])} |")
    lines += ["", "Tolerances (written once, in `ldp.reporting.verdicts`):", "",
              "| Constant | Value | Meaning |", "| --- | --- | --- |"]
    for _, t in V.tolerance_table().iterrows():
        value = t["value"] if isinstance(t["value"], str) else f"{t['value']:.4g}"
        lines.append(f"| `{t['constant']}` | {value} | {_cell(t['meaning'])} |")
    return "\n".join(lines) + "\n"


def render_report(table: pd.DataFrame, mode: str | None) -> str:
    """The report page: banner, rules and tolerances, then one table per (paper section, figure).

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`evaluate`'s table.
    mode : {"full", "quick", "rerun", None}
        The build mode; "quick" adds the small-sample banner.

    Returns
    -------
    str
        MyST Markdown.
    """
    _check_mode(mode)
    parts = [quick_banner(mode), rules_section()]
    table = table.assign(_major=table["section"].map(_major))
    for major, title in SECTIONS.items():
        sec = table[table["_major"] == major]
        if sec.empty:
            continue
        parts.append(f"## {title}\n")
        for fig, grp in sec.groupby("figure", sort=False):
            parts.append(f"({group_label(grp.iloc[0])})=\n### {_group_title(fig, grp['figure_title'].iloc[0])}\n")
            lines = ["| Claim | Paper | Ours | Rule | Verdict | Flags | Measured in |",
                     "| --- | --- | --- | --- | --- | --- | --- |"]
            for _, r in grp.iterrows():
                claim = f"`{r['id']}` (§{r['section']}, {_cell(r['ref'])}): \"{_cell(display_quote(r['quote']))}\""
                ours = _cell(r["measured"] or "—") + (f" *{_cell(r['note'])}*" if r["note"] else "")
                verdict = f"**{r['verdict']}**: {_cell(r['explanation'])}"
                lines.append(f"| {claim} | {_cell(r['paper'])} | {ours} | {_cell(r['rule'])} | {verdict} | "
                             f"{_cell(_flags(r))} | {r['link']} |")
            parts.append("\n".join(lines) + "\n")
    return "\n".join(p for p in parts if p)


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows of ``table`` got each verdict (every verdict of the vocabulary, best first)."""
    return {v: int((table["verdict"] == v).sum()) for v in V.VERDICTS}


def _is_ours(table: pd.DataFrame) -> pd.Series:
    if "ours" not in table.columns:
        return pd.Series(False, index=table.index)
    return table["ours"].fillna(False).astype(bool)


def largest_differences(table: pd.DataFrame, n: int = 3) -> pd.DataFrame:
    """The ``n`` claims of the paper furthest from it: not reproduced first, then partly, by excess over the rule.

    Our own claims (``ours``) are left out: they are not the paper's.
    """
    rank = {V.NOT_REPRODUCED: 0, V.PARTLY: 1}
    t = table[table["verdict"].isin(rank) & ~_is_ours(table)].copy()
    t["_rank"] = t["verdict"].map(rank)
    t["_excess"] = t["excess"].fillna(0.0)
    return t.sort_values(["_rank", "_excess"], ascending=[True, False]).head(n)


def _counts_text(table: pd.DataFrame) -> str:
    return ", ".join(f"**{c}** {v}" for v, c in verdict_counts(table).items())


def _engine_text(engine: str, mode: str | None) -> str:
    """What computed a figure; a quick build drops the paper-scale run counts ("(10 runs)")."""
    return re.sub(r" \(\d+ runs\)", "", engine) if mode == "quick" else engine


def render_scorecard(table: pd.DataFrame, mode: str | None, registry: Registry, *, report: str = REPORT_DOC) -> str:
    """The scorecard: verdict counts, three largest differences, stand-ins, engines, link to the report.

    Parameters
    ----------
    table, mode
        As for :func:`render_report` (the claims table; the build mode, "quick" adding the banner).
    registry : Registry
        Its ``engines``: what computed each figure.
    report : str
        The report page's document name (a ``{doc}`` target).

    Returns
    -------
    str
        MyST Markdown: an admonition (after the banner of a quick build).
    """
    _check_mode(mode)
    ours = _is_ours(table)
    paper, own = table[~ours], table[ours]
    title = ("Scorecard of this quick build (small samples: not the reproduction's verdicts)" if mode == "quick"
             else "Scorecard: the paper's claims against this build")
    lines = [quick_banner(mode), f"```{{admonition}} {title}", ":class: tip", "",
             f"**{len(paper)} claims of the paper** (sections 2-7, each decided by a stated rule): "
             f"{_counts_text(paper)}."
             + (f" And **{len(own)} claims of ours** about the protocols after PEM: {_counts_text(own)}."
                if len(own) else ""), ""]
    uncovered = int((~table["covered"].astype(bool)).sum())
    if uncovered:
        lines += [f"{uncovered} of them {NOT_COVERED}.", ""]
    diffs = largest_differences(table)
    if len(diffs):
        lines += ["The largest differences from the paper:", ""]
        for _, r in diffs.iterrows():
            lines.append(f"- {_cell(r['ref'])}, {{ref}}`{r['id']} <{group_label(r)}>` (**{r['verdict']}**): "
                         f"{_cell(r['paper'])}; we measure {_cell(r['measured'])}")
        lines.append("")
    lines += ["Stand-ins and re-implementations: " + "; ".join(STAND_INS.values()) + ".", "",
              "What computed each figure: " + "; ".join(
                  f"{registry.title(f)} (`{f}`): {_engine_text(e, mode)}" for f, e in registry.engines.items()
                  if not f.count("/")) + ".", "",
              f"Every claim, its rule and its verdict: {{doc}}`the reproduction report <{report}>`.", "```", ""]
    return "\n".join(x for x in lines if x is not None)


def render_evidence(table: pd.DataFrame, figure: str, mode: str | None) -> str:
    """A box for under a figure: each claim the figure measures, what we measure, the verdict, a link."""
    _check_mode(mode)
    rows = table[table["figure"] == figure]
    if rows.empty:
        return ""
    title = rows["figure_title"].iloc[0] or figure
    lines = [quick_banner(mode), f"```{{admonition}} Evidence: {title} of the paper",
             ":class: note", ""]
    for _, r in rows.iterrows():
        lines += [f"- **The paper** (§{r['section']}, {_cell(r['ref'])}): \"{_cell(display_quote(r['quote']))}\"",
                  f"  - **We measure:** {_cell(r['measured'] or '—')}",
                  f"  - **Verdict: {r['verdict']}** ({_cell(r['explanation'])}); "
                  f"{{ref}}`see the row {r['id']} <{group_label(r)}>`"]
    lines += ["```", ""]
    return "\n".join(x for x in lines if x)
