"""What a claim is: :class:`Claim`, the :class:`Registry` of them, the paper's numbers and quotes.

A claim (:class:`Claim`, fields documented there) is written as data beside its figure, in the figure's
module of :mod:`ldp.book.chapters`; :data:`ldp.book.chapters.REGISTRY` collects them in the paper's order.  The paper's
numbers are read from ``book/_ext/paper_numbers.yml`` (:func:`paper_numbers`).
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
from .verdicts import CAUSES

__all__ = ["Claim", "Cause", "Alternative", "ClaimFields", "Measurement", "NotCovered", "MissingInput", "NotRun",
           "Registry", "Readings", "STAND_INS",
           "display_quote", "paper_numbers", "paper_titles", "PAPER_NUMBERS_FILE"]


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


#: the data sets and methods that are not the paper's own
STAND_INS = {
    "url": "URL data set: a calibrated stand-in (the paper's Quantcast counts were never published)",
    "mcm": "MCM: re-implemented from the paper's text (the authors' code has no MCM)",
    "spm": "SPM: re-implemented from the paper's text (the authors' code has no SPM)",
}


@dataclass(frozen=True)
class Cause:
    """Why a claim is not reproduced: a class of :data:`ldp.book.claims.verdicts.CAUSES` and one line computed from
    the results (``explain(store) -> str``, numbers read from the figure data or a chapter's table; or
    ``(class, str)`` when the data decide the class)."""

    kind: str
    explain: Callable[[ResultStore], str]


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
    FIG2_N = "7-section-5-text-vs-caption"
    THRESHOLD = "threshold-mode-section-623"
    OPTIMIZER = "3-optimizer-section-43"
    COMPETITORS = "2-zero-frequency-competitors-competitorspaper-or-lower"
    SLOTS = "1-threshold-rank-in-eq-5-slotstext-default-vs-formula"
    ZIPF = "2-zipf-and-zipf-20-section-5"
    TREEHIST = "treehist"
    SFP = "sfp"


#: the type of a module's shared claim fields (``_FIG = dict(chapter=..., figure=...)``, given as ``**_FIG``)
ClaimFields = dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One claim of the paper (or ours) and how it is decided; every field by keyword.

    Attributes
    ----------
    id, section, ref : str
        Stable identifier (``"fig5-pem-best"``), the paper's section (``"6.2.1"``,
        ``"Appendix"``) and the figure, equation or statement as the paper numbers it.
    quote : str
        A short verbatim quote of the paper's LaTeX source.
    paper, tested : str
        What the paper says and what we test, in a few words.
    measure : callable
        ``measure(store) -> DataFrame | Measurement``; raises
        :class:`~ldp.book.claims.store.MissingResult` / :class:`MissingInput`
        (inputs absent) or :class:`NotCovered` (the run leaves out the claim's point).
    rule : ldp.book.claims.rules.Rule
        The decision rule with its parameters.
    chapter : str
        The chapter (notebook) that measures it.
    figure : str or None
        The label of the figure that shows it.
    inputs : tuple of str, optional
        ``"figure:NAME"`` and ``"table:CHAPTER/NAME"`` it reads; default ``("figure:<figure>",)``.
    stand_in, stand_in_decides, interpretation
        Keys of :data:`STAND_INS` it rests on; ``False`` when the stand-in cannot
        decide it (the verdict is then "not testable here"); anchors of
        ``book/interpretation.md`` (:class:`Readings`).
    setting : mapping
        Chapter parameters the claim needs: name -> value, or -> tuple of values the list must contain.
    note : str
        A remark shown with the claim.
    ours : bool
        A claim of ours (after PEM), not the paper's.
    reading : bool
        Our reading of a sentence (or an assumption) that states no result: listed apart from the
        paper's claims, never among the largest differences.
    part_of, decides
        The id of the sentence's first claim when this one tests another part of the same sentence
        (the report counts the sentence once, :func:`ldp.book.claims.verdicts.combine`); ``decides=False``
        for a detail that shows an exception the sentence allows ("in most cases").
    cause : Cause, optional
        What explains a verdict other than reproduced (else one is derived: a stand-in, an input
        missing, a small sample, or the rule's own explanation as a genuine difference).
    alternatives : tuple of Alternative
        The claim under the other readings of what it rests on (the report shows whether the verdict flips).
    """

    id: str
    section: str
    ref: str
    quote: str
    paper: str
    tested: str
    measure: Callable[[ResultStore], Any]
    rule: Rule
    chapter: str
    figure: str | None = None
    inputs: tuple[str, ...] | None = None
    stand_in: tuple[str, ...] = ()
    stand_in_decides: bool = True
    interpretation: tuple[str, ...] = ()
    setting: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    ours: bool = False
    reading: bool = False
    part_of: str = ""
    decides: bool = True
    cause: Cause | None = None
    alternatives: tuple[Alternative, ...] = ()

    def __post_init__(self):
        if self.cause is not None and self.cause.kind not in CAUSES:
            raise ValueError(f"claim {self.id}: cause kind {self.cause.kind!r} must be one of {sorted(CAUSES)}")
        if self.inputs is None:
            object.__setattr__(self, "inputs", (f"figure:{self.figure}",) if self.figure else ())
        unknown = set(self.stand_in) - set(STAND_INS)
        if unknown:
            raise ValueError(f"claim {self.id}: stand_in {sorted(unknown)} must be among {sorted(STAND_INS)}")


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
          r"\ncr": "NCR", r"\olh": "OLH", r"\grr": "GRR", r"\var": "Var", r"\rap": "RAPPOR", r"\blh": "BLH"}


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


@dataclass(frozen=True, kw_only=True)
class Registry:
    """The claims and what the report says about the results they read.

    Attributes
    ----------
    claims : tuple of Claim
        In the order the report lists them (the paper's, then ours).
    engines : mapping
        Figure label or ``"chapter/table"`` -> what computed it (for the scorecard).
    titles : mapping
        Our figures that are not a paper figure -> what the paper calls what they show
        (``"section 4.3"``); the paper's own figures are titled from :func:`paper_titles`.
    """

    claims: tuple[Claim, ...]
    engines: Mapping[str, str] = field(default_factory=dict)
    titles: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        ids = [c.id for c in self.claims]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"claims share an id: {twice}")
        # a part names its sentence's first claim, which is no part itself (a registry of some claims, as a
        # rerun's or a test's, may leave the first claim out: the sentence is then shown by the parts it has)
        by_id = {c.id: c for c in self.claims}
        bad = [c.id for c in self.claims if c.part_of and (c.part_of == c.id or by_id.get(c.part_of, c) is not c
                                                           and by_id[c.part_of].part_of)]
        if bad:
            raise ValueError(f"claims {bad}: part_of must name the sentence's first claim, which is no part itself")

    def get(self, claim_id: str) -> Claim:
        """The claim with id ``claim_id`` (KeyError naming the known ids otherwise)."""
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(f"no claim {claim_id!r}; known: {', '.join(c.id for c in self.claims)}")

    def title(self, figure: str) -> str:
        """What the paper calls figure ``figure`` ("Figure 5", "section 4.3"; the label itself if unknown)."""
        return {**paper_titles(), **self.titles}.get(figure, figure)
