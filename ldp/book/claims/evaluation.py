"""Evaluate every claim against a result store: verdicts, causes, other readings, one row per sentence.

:func:`evaluate` (one row per claim, each decided by :func:`evaluate_claim`, which documents when a claim is
"not testable here", its cause and its ``sensitivity``) and :func:`sentences` (each sentence of the paper
counted once); the pages (:mod:`ldp.book.report`) render these tables.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from . import verdicts as V
from .claim import CANNOT_DECIDE, STAND_INS, Claim, Measurement, MissingInput, NotCovered, NotRun, Registry
from .store import MissingResult, ResultStore

__all__ = ["evaluate", "evaluate_claim", "check_setting", "sentences", "largest_differences", "verdict_counts",
           "NOT_COVERED", "COLUMNS", "SCALE"]

#: the parameters that only set the size of a run (users): a quick build shrinks them on purpose, so there they
#: do not make a claim "not covered" (its row says the size it ran at); a rerun that changes them does
SCALE = ("n_users", "n_synthetic")
#: the mark of a claim whose setting the run's parameters leave out
NOT_COVERED = "not covered by this run's parameters"
#: the columns of :func:`evaluate`'s table
COLUMNS = ["id", "sentence", "decides", "section", "ref", "quote", "paper", "tested", "measured", "rule", "rule_kind",
           "verdict", "explanation", "cause_class", "cause", "sensitivity", "note", "stand_in", "stand_in_decides",
           "interpretation", "chapter", "figure", "covered", "coverage", "excess", "ours", "reading", "figure_title",
           "numbers"]
_FAILED = (MissingResult, MissingInput, NotCovered, KeyError, ValueError, IndexError)


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
    setting = claim.test.setting
    if not params or not setting:
        return ""
    misses = []
    for name, want in setting.items():
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


def _decide(measure, rule, store) -> tuple[V.Decision, str]:
    out = measure(store)
    m = out if isinstance(out, Measurement) else Measurement(out)
    return rule.decide(m.frame), m.note


def _cause(claim: Claim, store: ResultStore, decision: V.Decision) -> tuple[str, str]:
    """The class and line of a decided claim's cause: its own (computed from the results), else a default."""
    cause = claim.test.cause
    if cause is not None:
        try:
            out = cause.explain(store)  # a line, or (class, line) when the data decide the class
            return out if isinstance(out, tuple) else (cause.kind, out)
        except _FAILED as exc:  # the cause's input is missing: say so, keep the class
            return cause.kind, f"(its measured cause is not in this build: {exc})"
    if store.mode == "quick":
        return "small-sample", "quick build: decided on small samples; the paper-scale build decides it"
    n = decision.numbers
    if n.get("losses") == 0 and n.get("ties", 0) > 0:  # a strict ordering that fails only on ties
        return "near-tie", (f"{n['ties']} of {n['points']} points are ties within {V.Z_TOL:g} SE, which the rule "
                            f"does not count as holding; none is reversed")
    return "genuine", f"{decision.summary} ({decision.explanation})"


def _sensitivity(claim: Claim, store: ResultStore, verdict: str, stand_in: bool = False) -> list[dict]:
    """The claim decided again under each documented other reading (:class:`~ldp.book.claims.claim.Alternative`);
    ``stand_in``: it rests on a stand-in that cannot decide it, under that reading too."""
    out = []
    for alt in claim.test.other_readings:
        try:
            decision, _ = _decide(alt.measure, alt.rule or claim.test.rule, store)
            v, measured = decision.verdict, decision.summary
            if stand_in:
                v, measured = V.NOT_TESTABLE, f"the rule alone would give: {v} ({measured})"
        except _FAILED as exc:
            v, measured = V.NOT_TESTABLE, f"not computed in this build: {exc}"
        out.append({"reading": alt.reading, "anchor": alt.anchor, "verdict": v, "measured": measured,
                    "flips": v != verdict and v != V.NOT_TESTABLE})
    return out


def evaluate_claim(claim: Claim, store: ResultStore, *, title: str = "", sentence: str = "",
                   decides: bool = True) -> dict:
    """One row of :func:`evaluate` for ``claim``, and ``numbers``: the numbers its rule decided on (or ``{}``).

    This is the one place a verdict is computed: the report, a rerun's claims table and a
    chapter's sentences about a claim (:func:`ldp.book.claim_values`) all read this row.
    ``title`` is what the paper calls the claim's figure (:meth:`Registry.title`); ``sentence`` the id of the
    sentence it is part of (default: its own) and ``decides`` whether it decides that sentence (a detail does
    not; :meth:`Registry.sentence_of`, :meth:`Registry.decides`).  "Not testable here": inputs missing, the
    run's parameters leave out the claim's setting (``covered`` False) or a stand-in cannot decide it.  A
    verdict other than reproduced gets a cause (a class of :data:`~ldp.book.claims.verdicts.CAUSES` and a
    line); ``sensitivity``: the claim under each other reading.
    """
    test = claim.test
    row = {"numbers": {}, "figure_title": title, "id": claim.id, "sentence": sentence or claim.id,
           "decides": decides, "section": claim.section, "ref": claim.ref, "quote": claim.quote,
           "paper": claim.says, "tested": test.what, "measured": "", "rule": test.rule.describe(),
           "rule_kind": test.rule.kind, "verdict": V.NOT_TESTABLE, "explanation": "", "cause_class": "",
           "cause": "", "sensitivity": "[]", "note": claim.note, "stand_in": ", ".join(test.stand_ins),
           "stand_in_decides": not set(test.stand_ins) & CANNOT_DECIDE, "interpretation": ", ".join(test.readings),
           "chapter": test.chapter, "figure": test.figure or "", "covered": True, "coverage": "",
           "excess": float("nan"), "ours": claim.kind == "ours", "reading": claim.kind == "reading"}
    params = store.parameters(test.chapter)
    if store.mode == "quick":
        scaled = check_setting(claim, params, skip=[n for n in test.setting if n not in SCALE])
        if scaled:
            row["coverage"] = f"quick build, smaller population: {scaled}"
    reason = check_setting(claim, params, skip=SCALE if store.mode == "quick" else ())
    try:
        if reason:
            raise NotCovered(reason)
        decision, note = _decide(test.measure, test.rule, store)
    except NotCovered as exc:
        return row | {"covered": False, "coverage": f"{NOT_COVERED}: {exc}", "cause_class": "missing",
                      "explanation": f"{NOT_COVERED}: {exc}", "cause": f"{NOT_COVERED}: {exc}"}
    except (MissingResult, MissingInput) as exc:
        why = str(exc) if isinstance(exc, NotRun) else f"input missing: {exc}"
        return row | {"explanation": why, "cause_class": "not-run" if isinstance(exc, NotRun) else "missing",
                      "cause": why}
    except Exception as exc:  # a table whose columns changed: fail loudly, naming the claim
        raise RuntimeError(f"claim {claim.id}: measuring it failed ({type(exc).__name__}: {exc}); "
                           f"its inputs: {', '.join(test.inputs) or 'none'}") from exc
    row |= {"measured": decision.summary + (f"; {note}" if note else ""), "verdict": decision.verdict,
            "numbers": dict(decision.numbers), "explanation": decision.explanation,
            "excess": _excess(test.rule.kind, dict(decision.numbers))}
    if not row["stand_in_decides"] and decision.verdict != V.NOT_TESTABLE:
        names = " and ".join(dict.fromkeys(STAND_INS[s].split(":")[0] for s in test.stand_ins))
        return row | {"verdict": V.NOT_TESTABLE, "cause_class": "stand-in", "sensitivity": json.dumps(
                          _sensitivity(claim, store, V.NOT_TESTABLE, stand_in=True), ensure_ascii=False),
                      "cause": f"rests on a stand-in that cannot decide it ({names})",
                      "explanation": f"rests on a stand-in that cannot decide it ({names}); the rule alone would "
                                     f"give: {decision.verdict} ({decision.explanation})"}
    if decision.verdict != V.REPRODUCED:
        row["cause_class"], row["cause"] = _cause(claim, store, decision)
    row["sensitivity"] = json.dumps(_sensitivity(claim, store, decision.verdict), ensure_ascii=False)
    return row


def evaluate(store: ResultStore, registry: Registry, *, chapters: Iterable[str] | None = None) -> pd.DataFrame:
    """Every claim's verdict against ``store``: a tidy table with :data:`COLUMNS`.

    Parameters
    ----------
    store : ResultStore
        The results of a build mode or a rerun.
    registry : Registry
        The claims (:data:`ldp.book.chapters.REGISTRY`).
    chapters : iterable of str, optional
        Only the claims measured in these chapters (e.g. the one a rerun ran).

    Returns
    -------
    pandas.DataFrame
        One row per claim, in registry order; ``numbers`` holds, as JSON, the numbers its rule decided on
        (:class:`~ldp.book.claims.verdicts.Decision`: ``points``, ``holds``, ``holm_rejected``, ...; ``{}`` when
        it was not measured).
    """
    if not isinstance(store, ResultStore):
        raise TypeError(f"store must be a ResultStore, got {type(store).__name__}")
    wanted = None if chapters is None else set(chapters)
    rows = [evaluate_claim(c, store, title=registry.title(c.figure) if c.figure else "",
                           sentence=registry.sentence_of(c.id).id, decides=registry.decides(c.id))
            for c in registry.claims if wanted is None or c.chapter in wanted]
    for row in rows:  # the numbers the rule decided on, as JSON (the pages quote them; claims.csv keeps them)
        row["numbers"] = json.dumps(row["numbers"], default=_plain_number, ensure_ascii=False)
    return pd.DataFrame(rows, columns=COLUMNS)


def _plain_number(value):
    """A numpy scalar as a Python number, for :func:`json.dumps`."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a number")


def _kind(row) -> str:
    return "ours" if row.get("ours", False) else "reading" if row.get("reading", False) else "paper"


def sentences(table: pd.DataFrame) -> pd.DataFrame:
    """One row per sentence of the paper (or of ours): its parts' verdicts combined, its cause, its other readings.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`evaluate`'s table.

    Returns
    -------
    pandas.DataFrame
        The first part's columns (id, section, ref, quote, figure, ...), with ``verdict`` from
        :func:`~ldp.book.claims.verdicts.combine` of the deciding parts, ``cause_class`` and ``cause``
        (of the deciding parts that are not reproduced), ``excess`` (their largest), ``kind``
        ("paper", "reading" or "ours"), ``parts`` (every claim id, first the sentence's own) and
        ``flips`` (JSON: each reading under which the sentence's verdict changes, and to what).
    """
    out = []
    for sid, grp in table.groupby("sentence", sort=False):
        lead = grp[grp["id"] == sid].iloc[0] if (grp["id"] == sid).any() else grp.iloc[0]
        deciding = grp[grp["decides"].astype(bool)]
        verdict = V.combine(list(deciding["verdict"]))
        bad = deciding[deciding["verdict"] != V.REPRODUCED] if verdict != V.REPRODUCED else deciding.iloc[:0]
        alts: dict[str, dict[str, str]] = {}
        for _, part in deciding.iterrows():
            for s in json.loads(part["sensitivity"] or "[]"):
                if s["verdict"] != V.NOT_TESTABLE:
                    alts.setdefault(s["reading"], {})[part["id"]] = s["verdict"]
        flips = {}
        for reading, changed in alts.items():
            alt = V.combine([changed.get(i, v) for i, v in zip(deciding["id"], deciding["verdict"])])
            if alt != verdict:
                flips[reading] = alt
        out.append({**lead.to_dict(), "verdict": verdict, "kind": _kind(lead), "parts": list(grp["id"]),
                    "cause_class": next(iter(bad["cause_class"]), ""),
                    "cause": "; ".join(bad.drop_duplicates("cause_class")["cause"]),  # one line per class
                    "excess": float(bad["excess"].max()) if len(bad) else float("nan"),
                    "flips": json.dumps(flips, ensure_ascii=False)})
    if not out:  # a chapter that measures no claim (a rerun of it)
        return pd.DataFrame(columns=[*table.columns, "kind", "parts", "flips"])
    order = {i: n for n, i in enumerate(table["id"])}  # the sentence sits where its own claim does
    return pd.DataFrame(out).sort_values("id", key=lambda ids: ids.map(order), kind="mergesort").reset_index(drop=True)


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows of ``table`` got each verdict (every verdict of the vocabulary, best first)."""
    return {v: int((table["verdict"] == v).sum()) for v in V.VERDICTS}


def largest_differences(rows: pd.DataFrame, n: int = 3) -> pd.DataFrame:
    """The ``n`` sentences of the paper furthest from it: not reproduced first, then partly, by excess over the rule.

    ``rows`` is :func:`sentences`' table; our readings and our own claims are left out (they are not the paper's).
    """
    rank = {V.NOT_REPRODUCED: 0, V.PARTLY: 1}
    t = rows[rows["verdict"].isin(rank) & (rows["kind"] == "paper")].copy()
    t["_rank"] = t["verdict"].map(rank)
    t["_excess"] = t["excess"].fillna(0.0)
    return t.sort_values(["_rank", "_excess"], ascending=[True, False]).head(n)
