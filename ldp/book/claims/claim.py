"""What a claim is: :class:`Claim` (a sentence, with its parts) and its :class:`Test`, the :class:`Registry` of
them, the paper's numbers and quotes.

A claim is written as data beside the figure it reads, in the figure's module of :mod:`ldp.book.chapters`;
:data:`ldp.book.chapters.REGISTRY` collects them in the book's order.  The paper's numbers are read from
``book/_ext/paper_numbers.yml`` (:func:`paper_numbers`).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from ...paths import repo_root
from .rules import Rule
from .store import ResultStore
from .verdicts import CAUSES, Because

__all__ = ["Claim", "Test", "Cause", "Because", "Alternative", "ClaimFields", "Measurement", "NotCovered",
           "MissingInput", "NotRun", "Registry", "Readings", "STAND_INS", "CANNOT_DECIDE", "KINDS", "TableDocs",
           "display_quote", "paper_numbers", "paper_titles", "section_major", "PAPER_NUMBERS_FILE"]


class NotCovered(LookupError):
    """The run's parameters leave out the setting the claim is about."""


class MissingInput(LookupError):
    """An input of the claim is not in the store (e.g. the AOL data was absent), or was never run."""


class NotRun(MissingInput):
    """The book does not run the setting the claim is about."""


@dataclass(frozen=True)
class Measurement:
    """What a claim's ``measure`` may return: the rule's input table and a note with extra facts."""

    frame: pd.DataFrame
    note: str = ""


#: the data sets and methods that are not the paper's own (keys a test's ``rests_on`` may name)
STAND_INS = {
    "url": "URL data set: a calibrated stand-in (the paper's Quantcast counts were never published)",
    "url-calibrated": "URL data set: the stand-in is calibrated to the paper's numbers, so a number measured on it "
                      "cannot test the paper's (only a qualitative comparison can)",
    "mcm": "MCM: re-implemented from the paper's text (the authors' code has no MCM)",
    "spm": "SPM: re-implemented from the paper's text (the authors' code has no SPM)",
}
#: the stand-ins on which a test is decided by its rule but cannot decide the paper's claim ("not testable here")
CANNOT_DECIDE = frozenset({"url-calibrated"})
#: a claim's kinds: a result of the paper, our reading of a sentence (or an assumption) that states no result, ours
KINDS = ("paper", "reading", "ours")


@dataclass(frozen=True)
class Cause:
    """Why a claim is not reproduced: a class of :data:`ldp.book.claims.verdicts.CAUSES` and one line computed from
    the results (``explain(store)``, numbers read from the figure data or a chapter's table).

    ``explain`` returns a :class:`~ldp.book.claims.verdicts.Because` (its class, when the data decide it, its
    line and the numbers its class's test reads), or a line alone (a ``str``, of class ``kind``, with no numbers).
    The class is shown only when the row's numbers pass its test
    (:func:`ldp.book.claims.verdicts.cause_failure`); otherwise the evaluation falls back to the class the numbers
    support (:func:`ldp.book.claims.evaluation.evaluate_claim`)."""

    kind: str
    explain: Callable[[ResultStore], str | Because]


@dataclass(frozen=True)
class Alternative:
    """Another reading the paper leaves open (anchor ``anchor`` of ``book/interpretation.md``), and the claim
    measured under it: ``measure(store)`` as the claim's, decided by ``rule`` (default the claim's)."""

    reading: str
    anchor: str
    measure: Callable[[ResultStore], Any]
    rule: Rule | None = None


class Readings:
    """Anchors of ``book/interpretation.md``: our readings of what the paper leaves open, as claims cite them."""

    SYNTHETIC = "1-exponential-synthetic-set-section-61"
    URL = "3-url-set-section-61-calibrated-stand-in"
    AOL = "4-aol-section-61"
    SPM = "spm-section-33-with-section-61s-improvements"
    MCM = "mcm-section-34-with-section-61s-improvements"
    GRIDS = "experiment-settings-the-paper-does-not-state"
    CASES = "most-of-the-cases-section-622"
    OBSERVATION1 = "observation-1-decided-on-the-papers-own-model-section-44"
    EQUIVALENCE = "practical-equivalence-of-configurations-section-43"
    THRESHOLD_K = "threshold-claims-decided-on-the-translated-k-section-623"
    SMALL_ETA = "a-very-small-eta-section-43"
    INDEPENDENCE = "independence-of-the-identifications-section-421"
    STOPS = "the-number-identified-stops-increasing-section-622"
    FEW_DOZEN = "a-few-dozen-values-at-or-above-01-percent-section-222"
    DOMAIN = "the-advantage-and-the-domain-size-section-1"
    FIG2_N = "7-section-5-text-vs-caption"
    THRESHOLD = "threshold-mode-section-623"
    OPTIMIZER = "3-optimizer-section-43"
    COMPETITORS = "2-zero-frequency-competitors-competitorspaper-or-lower"
    SLOTS = "1-threshold-rank-in-eq-5-slotstext-default-vs-formula"
    ZIPF = "2-zipf-and-zipf-20-section-5"
    TREEHIST = "treehist"
    SFP = "sfp"


#: the type of a module's shared test fields (``_FIG = dict(chapter=..., figure=...)``, given as ``**_FIG``)
ClaimFields = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Test:
    """How a statement is checked: what is measured, the rule that decides it and what it rests on.

    Attributes
    ----------
    what : str
        What we test, in a few words ("PEM against the best of MCM and SPM at each (data set, metric, ε)").
    measure : callable
        ``measure(store) -> DataFrame | Measurement``: the rule's input table, read from the results a chapter
        saved; raises :class:`~ldp.book.claims.store.MissingResult` / :class:`MissingInput` (inputs absent) or
        :class:`NotCovered` (the run leaves out the claim's point).
    rule : ldp.book.claims.rules.Rule
        The decision rule with its parameters.
    chapter : str
        The chapter (notebook) whose results it reads.
    figure : str or None
        The label of the figure that shows it.
    reads : tuple of str, optional
        What ``measure`` reads: figure labels (``"fig-eval-vary-eps"``) and chapter tables
        (``"06_evaluation/anomalies"``); default: ``figure``.
    setting : mapping
        Chapter parameters it needs: name -> value, or -> tuple of values the list must contain.
    rests_on : tuple of str
        What is not the paper's own: keys of :data:`STAND_INS` (stand-in data or re-implemented methods) and
        anchors of ``book/interpretation.md`` (:class:`Readings`: our readings of what the paper leaves open).
    cause : Cause, optional
        What explains a verdict other than reproduced (else one is derived: a stand-in, an input missing, a
        small sample, a tie, or the rule's own explanation as a genuine difference).
    other_readings : tuple of Alternative
        The test under the other readings of what it rests on (the report shows whether the verdict flips).
    """

    what: str
    measure: Callable[[ResultStore], Any]
    rule: Rule
    chapter: str
    figure: str | None = None
    reads: tuple[str, ...] | None = None
    setting: Mapping[str, Any] = field(default_factory=dict)
    rests_on: tuple[str, ...] = ()
    cause: Cause | None = None
    other_readings: tuple[Alternative, ...] = ()

    def __post_init__(self):
        if self.reads is None:
            object.__setattr__(self, "reads", (self.figure,) if self.figure else ())
        if self.cause is not None and self.cause.kind not in CAUSES:
            raise ValueError(f"test {self.what!r}: cause kind {self.cause.kind!r} must be one of {sorted(CAUSES)}")

    @property
    def inputs(self) -> tuple[str, ...]:
        """``reads`` as the report names them: ``"figure:<label>"`` and ``"table:<chapter>/<name>"``."""
        return tuple(f"table:{r}" if "/" in r else f"figure:{r}" for r in self.reads or ())

    @property
    def stand_ins(self) -> tuple[str, ...]:
        """The keys of :data:`STAND_INS` among ``rests_on``."""
        return tuple(r for r in self.rests_on if r in STAND_INS)

    @property
    def readings(self) -> tuple[str, ...]:
        """Our readings it rests on: the anchors of ``book/interpretation.md`` among ``rests_on``."""
        return tuple(r for r in self.rests_on if r not in STAND_INS)


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A sentence of the paper (or of ours) and how it is decided; every field by keyword.

    A sentence that says several things holds them as ``parts``: each part is a claim of its own (its quote,
    what it says, its test), and the sentence is decided from its own test and its parts'
    (:func:`ldp.book.claims.verdicts.combine`).  ``details`` are parts shown with their own verdict that do
    not decide the sentence: the exceptions a qualifier such as "in most cases" allows.

    Attributes
    ----------
    id, section, ref : str
        Stable identifier (``"fig5-pem-best"``), the paper's section (``"6.2.1"``, ``"Appendix"``) and the
        figure, equation or statement as the paper numbers it.
    quote : str
        A short verbatim quote of the paper's LaTeX source.
    says : str
        What the paper says, in a few words.
    test : Test
        How it is checked.
    kind : str
        ``"paper"`` (a result of the paper), ``"reading"`` (our reading of a sentence, or an assumption, that
        states no result: listed apart, never among the largest differences) or ``"ours"`` (a claim of ours).
    note : str
        A remark shown with the claim.
    parts, details : tuple of Claim
        The sentence's other parts, and its details (see above); a part has neither.
    """

    id: str
    section: str
    ref: str
    quote: str
    says: str
    test: Test
    kind: str = "paper"
    note: str = ""
    parts: tuple[Claim, ...] = ()
    details: tuple[Claim, ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind={self.kind!r} must be one of {KINDS}")
        nested = [c.id for c in (*self.parts, *self.details) if c.parts or c.details]
        if nested:
            raise ValueError(f"claim {self.id}: its parts {nested} have parts of their own (a part has none)")

    # the test's facts the report and the chapters read, by the names they read them
    @property
    def chapter(self) -> str:
        """The chapter whose results the claim reads (its test's)."""
        return self.test.chapter

    @property
    def figure(self) -> str | None:
        """The label of the figure that shows it (its test's)."""
        return self.test.figure

    @property
    def rule(self) -> Rule:
        """Its test's decision rule."""
        return self.test.rule

    def every(self) -> tuple[Claim, ...]:
        """The claim, its parts and its details, in that order."""
        return (self, *self.parts, *self.details)


def section_major(section: str) -> int:
    """The paper's major section of a claim's ``section`` ("6.2.3" -> 6); the appendix belongs with section 4
    (it proves section 4's Proposition 1), as the report groups it."""
    return 4 if section == "Appendix" else int(str(section).split(".")[0])


#: where the book lists the paper's numbers (figures, equations, statements, sections)
PAPER_NUMBERS_FILE = Path("book") / "_ext" / "paper_numbers.yml"


@functools.lru_cache(maxsize=4)
def paper_numbers(path: str | None = None) -> dict[str, list[dict]]:
    """The book's list of the paper's numbers (``book/_ext/paper_numbers.yml``); empty lists if absent.

    Parameters
    ----------
    path : str, optional
        Another copy of the file (default: the one of the checkout this package is in, else the
        one under :func:`ldp.paths.repo_root`).

    Returns
    -------
    dict
        ``{"figures": [...], "equations": [...], "statements": [...], "sections": [...]}``, each
        entry a dict with ``number``, ``label``, ``title`` and, for figures and equations,
        ``book`` (the book's labels that show it).
    """
    if path is not None:
        file = Path(path)
    else:  # the checkout this package is in, else the project folder (an installed package run from one)
        here = Path(__file__).resolve().parents[3] / PAPER_NUMBERS_FILE
        file = here if here.is_file() else repo_root() / PAPER_NUMBERS_FILE
    data = yaml.safe_load(file.read_text(encoding="utf-8")) if file.is_file() else {}
    return {kind: list((data or {}).get(kind) or []) for kind in ("figures", "equations", "statements",
                                                                  "sections")}


def paper_titles() -> dict[str, str]:
    """The book's figure label -> ``"Figure N"`` for every figure of the paper the book reproduces."""
    return {label: f"Figure {fig['number']}" for fig in paper_numbers()["figures"] for label in (fig.get("book") or {})}


#: the sub-figure labels the quotes cite (paper_numbers.yml lists panels by letter, not by label)
SUBFIGURE_LABELS = {"subfig:eval_eps_synthesizeexponential_thres": "7(a)",
                    "subfig:eval_k_synthesize_exponential_thres": "7(b)",
                    "subfig:eval_k_synthesize_exponential_thres_e4": "7(c)", "fig:eval_improve": "8(a)",
                    "fig:eval_s": "8(b)", "fig:eval_dist": "8(c)"}
MACROS = {r"\itergroup": "PEM", r"\hash": "MCM", r"\spm": "SPM", r"\rappor": "SPM", r"\fone": "F1",
          r"\ncr": "NCR", r"\olh": "OLH", r"\grr": "GRR", r"\var": "Var", r"\rap": "RAPPOR", r"\blh": "BLH",
          r"\Domain": "D"}


@functools.lru_cache(maxsize=1)
def latex_labels() -> dict[str, str]:
    """LaTeX label -> the paper's number ("5", "7(b)", "(3)"), sub-figures included."""
    numbers = paper_numbers()
    out = {fig["label"]: str(fig["number"]) for fig in numbers["figures"] if fig.get("label")}
    out |= {eq["label"]: f"({eq['number']})" for eq in numbers["equations"] if eq.get("label")}
    return out | SUBFIGURE_LABELS


def display_quote(quote: str) -> str:
    """A quote as the paper prints it: macros expanded (``\\itergroup`` -> PEM), references numbered."""
    pieces = quote.split("$")
    for i, piece in enumerate(pieces):
        for macro, text in sorted(MACROS.items(), key=lambda kv: -len(kv[0])):
            # outside math: the word and a space (\xspace); inside math: upright letters (no backslash escapes)
            repl = (text + " " if i % 2 == 0 else rf"\mathsf{{{text}}}").replace("\\", "\\\\")
            piece = re.sub(re.escape(macro) + r"(?![A-Za-z])" + (r"\s?" if i % 2 == 0 else ""), repl, piece)
        pieces[i] = piece
    out = "$".join(pieces)
    out = re.sub(r"~?\\(?:eq)?ref\{([^}]*)\}", lambda m: " " + latex_labels().get(m.group(1), "?"), out)
    out = re.sub(r"\s+([,.;:)])", r"\1", out)
    return re.sub(r"\s+", " ", out).strip()


#: the type of :attr:`Registry.tables`: chapter -> table name -> (its columns, what it holds)
TableDocs = Mapping[str, Mapping[str, tuple[tuple[str, ...], str]]]


@dataclass(frozen=True, kw_only=True)
class Registry:
    """The claims and what the report says about the results they read.

    Attributes
    ----------
    sentences : tuple of Claim
        The sentences, in the order the report lists them (the paper's, then ours); each holds its parts.
    claims : tuple of Claim
        Every sentence followed by its parts and details: the rows the report evaluates (read-only).
    engines : mapping
        Figure label or ``"chapter/table"`` -> what computed it (for the scorecard).
    titles : mapping
        Our figures that are not a paper figure -> what the paper calls what they show
        (``"section 4.3"``); the paper's own figures are titled from :func:`paper_titles`.
    tables : mapping
        The result tables the claims read besides the figures' CSVs: chapter -> name -> (columns, meaning).
    """

    sentences: tuple[Claim, ...]
    engines: Mapping[str, str] = field(default_factory=dict)
    titles: Mapping[str, str] = field(default_factory=dict)
    tables: TableDocs = field(default_factory=dict)
    claims: tuple[Claim, ...] = field(init=False, repr=False)
    _sentence_of: Mapping[str, Claim] = field(init=False, repr=False)

    def __post_init__(self):
        flat = tuple(c for sentence in self.sentences for c in sentence.every())
        ids = [c.id for c in flat]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"claims share an id: {twice}")
        odd = [c.id for sentence in self.sentences for c in (*sentence.parts, *sentence.details)
               if c.kind != sentence.kind]
        if odd:
            raise ValueError(f"claims {odd}: a part is of its sentence's kind (paper, reading or ours)")
        object.__setattr__(self, "claims", flat)
        object.__setattr__(self, "_sentence_of", {c.id: sentence for sentence in self.sentences
                                                  for c in sentence.every()})

    def get(self, claim_id: str) -> Claim:
        """The claim (a sentence or a part of one) with id ``claim_id`` (KeyError naming the known ids otherwise)."""
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(f"no claim {claim_id!r}; known: {', '.join(c.id for c in self.claims)}")

    def sentence_of(self, claim_id: str) -> Claim:
        """The sentence that holds claim ``claim_id`` (the claim itself for a sentence)."""
        self.get(claim_id)
        return self._sentence_of[claim_id]

    def decides(self, claim_id: str) -> bool:
        """Whether claim ``claim_id`` decides its sentence (a detail does not)."""
        return all(d.id != claim_id for d in self.sentence_of(claim_id).details)

    def title(self, figure: str) -> str:
        """What the paper calls figure ``figure`` ("Figure 5", "section 4.3"; the label itself if unknown)."""
        return {**paper_titles(), **self.titles}.get(figure, figure)
