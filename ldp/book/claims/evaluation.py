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
           "NOT_COVERED", "COLUMNS", "SCALE", "RUN_COUNTS", "cause_problem"]

#: the parameters that only set the size of a run (users): a quick build shrinks them on purpose, so there they
#: do not make a claim "not covered" (its row says the size it ran at); a rerun that changes them does
SCALE = ("n_users", "n_synthetic")
#: the mark of a claim whose setting the run's parameters leave out
NOT_COVERED = "not covered by this run's parameters"
#: the columns of :func:`evaluate`'s table
COLUMNS = ["id", "sentence", "decides", "section", "ref", "quote", "paper", "tested", "measured", "rule", "rule_kind",
           "verdict", "explanation", "cause_class", "cause", "sensitivity", "note", "stand_in", "stand_in_decides",
           "interpretation", "chapter", "figure", "covered", "coverage", "excess", "ours", "reading", "figure_title",
           "cause_numbers", "numbers"]
#: the parameters that count a chapter's runs: a quick build's small-sample cause quotes them
RUN_COUNTS = ("repetitions", "n_repetitions", "n_reps", "n_runs", "mc_reps", "trials")
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


def _deciding(kind: str, numbers: dict) -> dict[str, float]:
    """The rule's deciding difference (``gap``) and the threshold its row carries (``holm_z``, ``tolerance``): what
    a genuine difference quotes (the other thresholds are constants of the rules)."""
    try:
        if kind == "within-se":
            return {"gap": float(numbers["max_abs_z"]), "holm_z": float(numbers["bonferroni_z"])}
        if kind == "within-tolerance":
            return {"gap": float(numbers["max_abs_diff"]), "tolerance": float(numbers["tol"])}
        if kind == "ordering":
            return {"gap": float(numbers["losses"])}
        if kind == "monotone":
            return {"gap": abs(float(numbers["worst_z"]))}
        if kind == "argmax":
            return {"gap": float(numbers["largest_gap_z"])}
    except (KeyError, TypeError, ValueError):
        pass
    return {}


def _small_sample(claim: Claim, store: ResultStore) -> V.Because:
    """A quick build's cause: the run sizes it decided on (its run counts, and its populations below the claim's)."""
    params = store.parameters(claim.chapter) or {}
    sizes = {k: params[k] for k in RUN_COUNTS if isinstance(params.get(k), (int, float))}
    sizes |= {k: params[k] for k in SCALE if isinstance(params.get(k), (int, float))
              and isinstance(claim.test.setting.get(k), (int, float)) and params[k] < claim.test.setting[k]}
    if not sizes:
        return V.Because("small-sample", "quick build: decided on small samples; the paper-scale build decides it")
    said = ", ".join(f"{k} = {v:,}" + (f" (the claim's setting: {claim.test.setting[k]:,})" if k in SCALE else "")
                     for k, v in sizes.items())
    return V.Because("small-sample", f"quick build: decided on {said}; the paper-scale build decides it", sizes)


def _derived(claim: Claim, store: ResultStore, decision: V.Decision) -> list[V.Because]:
    """The causes the numbers of a decision support, in the order they are tried: a quick build's small sample, a
    strict ordering that fails on ties only (a near-tie), and the measurement itself (a genuine difference); a
    rule that could not decide on the measurement leaves its input missing."""
    if decision.verdict == V.NOT_TESTABLE:  # the rule could not decide on what was measured
        return [V.Because("missing", f"the measured results cannot decide it: {decision.explanation}")]
    out = [_small_sample(claim, store)] if store.mode == "quick" else []
    n = decision.numbers
    if n.get("losses") == 0 and n.get("ties", 0) > 0 and "worst_z" in n:
        out.append(V.Because("near-tie", (
            (f"{n['ties']} of {n['points']} points are ties" if n["ties"] > 1 else
             f"1 of {n['points']} points is a tie")
            + f" within {V.Z_TOL:g} SE, which the rule does not count as holding; none is reversed (the nearest to a "
              f"reversal: {n['worst_z']:+.2f} SE at {n['worst_at']})"),
            {"gap_se": abs(float(n["worst_z"]))}))
    out.append(V.Because("genuine", f"{decision.summary} ({decision.explanation})",
                         _deciding(claim.test.rule.kind, dict(n))))
    return out


def cause_problem(because: V.Because, row: dict, mode: str | None) -> str:
    """Why ``because`` cannot be a row's cause (``""``: it can): its class's test fails on the row's numbers
    (:func:`~ldp.book.claims.verdicts.cause_failure`), its line leaves one of those numbers unquoted (but for the
    thresholds of :data:`~ldp.book.claims.verdicts.THRESHOLDS`), or it repeats itself
    (:func:`~ldp.book.claims.verdicts.repeats`)."""
    failure = V.cause_failure(because.kind, because.numbers, row, mode)
    if failure:
        return f"{V.CAUSES[because.kind][0]}: {failure}"
    unquoted = [k for k, v in because.numbers.items() if k not in V.THRESHOLDS and not V.quotes(because.text, v)]
    if unquoted:
        return f"the line does not quote {', '.join(f'{k} = {because.numbers[k]:g}' for k in unquoted)}"
    slip = V.repeats(because.text, V.CAUSES[because.kind][0])
    return f"the line repeats itself: {slip}" if slip else ""


def _unlabelled(because: V.Because) -> V.Because:
    """``because`` without its class label opening its line (the page prints "label: line")."""
    label = V.CAUSES[because.kind][0]
    text = because.text
    while text.lower().startswith(label.lower()):
        text = text[len(label):].lstrip(" :;,")
    return V.Because(because.kind, text, because.numbers)


def _cause(claim: Claim, store: ResultStore, decision: V.Decision, row: dict) -> V.Because:
    """The cause of a decided claim: its own (computed from the results), shown only if the row's numbers pass its
    class's test; else the first of the causes the numbers support (:func:`_derived`)."""
    candidates = []
    cause = claim.test.cause
    if cause is not None:
        try:
            out = cause.explain(store)  # a Because, or a line alone (of the declared class, without numbers)
            candidates.append(out if isinstance(out, V.Because) else V.Because(cause.kind, str(out)))
        except _FAILED:  # the cause's inputs are not in this build: the numbers decide
            pass
    candidates += _derived(claim, store, decision)
    deciding = _deciding(claim.test.rule.kind, dict(decision.numbers))  # what a genuine difference must quote
    candidates = [_unlabelled(V.Because(b.kind, b.text, {**deciding, **b.numbers}) if b.kind == "genuine" else b)
                  for b in candidates]
    return next((b for b in candidates if not cause_problem(b, row, store.mode)), candidates[-1])


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


def _calibrated(claim: Claim, decision: V.Decision) -> V.Because:
    """The cause of a claim that rests on a stand-in calibrated to the paper's numbers: the number measured on it."""
    names = " and ".join(dict.fromkeys(STAND_INS[s].split(":")[0] for s in claim.test.stand_ins if s in CANNOT_DECIDE))
    gap = _deciding(claim.test.rule.kind, dict(decision.numbers)).get("gap")
    return V.Because("stand-in", f"rests on a stand-in calibrated to the paper's numbers, which therefore cannot test "
                                 f"them ({names}); measured on it: {decision.summary}",
                     {} if gap is None else {"measured": gap})


def _shown(because: V.Because) -> dict:
    """A row's cause columns: ``cause_class``, ``cause`` and ``cause_numbers`` (JSON: the numbers its test read)."""
    return {"cause_class": because.kind, "cause": because.text,
            "cause_numbers": json.dumps({k: float(v) for k, v in because.numbers.items()}, ensure_ascii=False)}


def evaluate_claim(claim: Claim, store: ResultStore, *, title: str = "", sentence: str = "",
                   decides: bool = True) -> dict:
    """One row of :func:`evaluate` for ``claim``, and ``numbers``: the numbers its rule decided on (or ``{}``).

    This is the one place a verdict is computed: the report, a rerun's claims table and a
    chapter's sentences about a claim (:func:`ldp.book.claim_values`) all read this row.
    ``title`` is what the paper calls the claim's figure (:meth:`Registry.title`); ``sentence`` the id of the
    sentence it is part of (default: its own) and ``decides`` whether it decides that sentence (a detail does
    not; :meth:`Registry.sentence_of`, :meth:`Registry.decides`).  "Not testable here": inputs missing, the
    run's parameters leave out the claim's setting (``covered`` False) or a stand-in cannot decide it.  A
    verdict other than reproduced gets a cause: a class of :data:`~ldp.book.claims.verdicts.CAUSES`, a line and
    ``cause_numbers``, the row's numbers that pass the class's test (:func:`cause_problem`: the claim's own cause
    when they pass it, else the first class they support: a quick build's small sample, a near-tie, a genuine
    difference); ``sensitivity``: the claim under each other reading.
    """
    test = claim.test
    row = {"numbers": {}, "figure_title": title, "id": claim.id, "sentence": sentence or claim.id,
           "decides": decides, "section": claim.section, "ref": claim.ref, "quote": claim.quote,
           "paper": claim.says, "tested": test.what, "measured": "", "rule": test.rule.describe(),
           "rule_kind": test.rule.kind, "verdict": V.NOT_TESTABLE, "explanation": "", "cause_class": "",
           "cause": "", "cause_numbers": "{}", "sensitivity": "[]", "note": claim.note,
           "stand_in": ", ".join(test.stand_ins),
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
        return row | {"covered": False, "coverage": f"{NOT_COVERED}: {exc}", "explanation": f"{NOT_COVERED}: {exc}"
                      } | _shown(_unlabelled(V.Because("missing", f"{NOT_COVERED}: {exc}")))
    except (MissingResult, MissingInput) as exc:
        why = str(exc) if isinstance(exc, NotRun) else f"input missing: {exc}"
        return row | {"explanation": why} | _shown(_unlabelled(
            V.Because("not-run" if isinstance(exc, NotRun) else "missing", why)))
    except Exception as exc:  # a table whose columns changed: fail loudly, naming the claim
        raise RuntimeError(f"claim {claim.id}: measuring it failed ({type(exc).__name__}: {exc}); "
                           f"its inputs: {', '.join(test.inputs) or 'none'}") from exc
    row |= {"measured": decision.summary + (f"; {note}" if note else ""), "verdict": decision.verdict,
            "numbers": dict(decision.numbers), "explanation": decision.explanation,
            "excess": _excess(test.rule.kind, dict(decision.numbers))}
    if not row["stand_in_decides"] and decision.verdict != V.NOT_TESTABLE:
        names = " and ".join(dict.fromkeys(STAND_INS[s].split(":")[0] for s in test.stand_ins))
        return row | {"verdict": V.NOT_TESTABLE, "sensitivity": json.dumps(
                          _sensitivity(claim, store, V.NOT_TESTABLE, stand_in=True), ensure_ascii=False),
                      "explanation": f"rests on a stand-in that cannot decide it ({names}); the rule alone would "
                                     f"give: {decision.verdict} ({decision.explanation})"} | _shown(
                          _calibrated(claim, decision))
    if decision.verdict != V.REPRODUCED:
        row |= _shown(_cause(claim, store, decision, row))
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
                    "cause_numbers": next(iter(bad["cause_numbers"]), "{}"),
                    "cause": "; ".join(dict.fromkeys(bad.drop_duplicates("cause_class")["cause"])),  # a line per class
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
