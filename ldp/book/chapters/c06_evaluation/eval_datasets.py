"""The data sets of section 6.1 (chapter 06): their sizes, against the numbers the paper gives.

A table, not a figure: :func:`frame` is the result table ``06_evaluation/datasets``
(:func:`ldp.book.chapters.c06_evaluation.compute.dataset_sizes` of the evaluation's grids) the chapter
saves and the claims read.
"""
from __future__ import annotations

import pandas as pd

from ...claims import rules as R
from ...claims.claim import Alternative, Cause, Claim, ClaimFields, MissingInput, Readings
from ...claims.measures import one
from ...claims.readings import under
from .compute import dataset_sizes

__all__ = ["CHAPTER", "NAME", "ENGINES", "frame", "CLAIMS"]

CHAPTER, NAME = "06_evaluation", "datasets"
ENGINES = {f"{CHAPTER}/{NAME}": "the data sets themselves (ldp.datasets)"}


def frame(runs: pd.DataFrame) -> pd.DataFrame:
    """``dataset, n, n_distinct, f_16``: users, distinct values and 16th largest frequency of each data set."""
    return dataset_sizes(runs, k=16)


def _m_size(dataset: str, column: str, scale: float, target: float, what: str = ""):
    def measure(store):
        t = store.load(CHAPTER, NAME).set_index("dataset")
        if dataset not in t.index:
            raise MissingInput(f"the {dataset} data set is not in this build")
        return one(what or f"{dataset}: {column.replace('_', ' ')} (in units of {scale:,.0f})",
                   float(t.loc[dataset, column]) / scale, target)
    return measure


def _n(store, dataset: str, column: str) -> int:
    return int(store.load(CHAPTER, NAME).set_index("dataset").loc[dataset, column])


_m_theta_f16 = _m_size("Synthetic", "f_16", 1, 0.023, "frequency of the 16th most frequent synthetic value")
_TABLE: ClaimFields = dict(chapter=CHAPTER, inputs=(f"table:{CHAPTER}/{NAME}",))
_PRINTED = R.WithinTolerance.printed  # within half a unit of the last printed digit
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s61-url-size", section="6.1", ref="URL data set",
          quote=r"resulting a dataset containing $1.2$ million data points, and $27$ thousand unique urls.",
          paper="1.2 million users", tested="users of the URL stand-in (millions)",
          measure=_m_size("URL", "n", 1e6, 1.2), rule=_PRINTED("1.2"), stand_in=("url",), stand_in_decides=False,
          interpretation=(Readings.URL,), note="The stand-in is calibrated to these numbers, so they cannot test it.",
          alternatives=(Alternative("the URL stand-in's binomial calibration (one random 5-minute slot)", Readings.URL,
                                    under(_m_size("URL", "n", 1e6, 1.2), CHAPTER, "url-binomial")),), **_TABLE),
    Claim(id="s61-aol-users", section="6.1", ref="AOL data set",
          quote=r"This results a dataset of around $0.5$ million queries", paper="around 0.5 million users",
          tested="users of the AOL tally (millions)", measure=_m_size("AOL", "n", 1e6, 0.5), rule=_PRINTED("0.5"),
          interpretation=(Readings.AOL,), note="The tally is the authors' own published file.",
          cause=Cause("genuine", lambda store: f"the authors' published tally holds {_n(store, 'AOL', 'n'):,} queries, "
                                               "more than 'around 0.5 million' allows"),
          alternatives=(Alternative("AOL without its empty-query placeholder, the most frequent row", Readings.AOL,
                                    under(_m_size("AOL", "n", 1e6, 0.5), CHAPTER, "aol-placeholder")),), **_TABLE),
    Claim(id="s61-aol-unique", section="6.1", ref="AOL data set", quote=r"including $0.2$ million unique ones.",
          paper="0.2 million distinct (errata: 0.12 million)",
          tested="distinct queries of the AOL tally (millions), against the errata's 0.12",
          measure=_m_size("AOL", "n_distinct", 1e6, 0.12), rule=_PRINTED("0.12"), interpretation=(Readings.AOL,),
          part_of="s61-aol-users", alternatives=(Alternative("the paper's printed 0.2 million, not its errata's 0.12",
                                                             Readings.AOL, _m_size("AOL", "n_distinct", 1e6, 0.2),
                                                             _PRINTED("0.2")),),
          note="The authors' errata corrects 0.2 million to 0.12 million; the errata's value is tested.", **_TABLE),
    Claim(id="s623-theta-f16", section="6.2.3", ref="Figure 7(a)",
          quote=r"($0.023$ is around frequency of the $16$-the most frequent value in the dataset)",
          paper="f_16 ≈ 0.023", tested="frequency of the 16th most frequent value of the synthetic set",
          measure=_m_theta_f16, rule=_PRINTED("0.023"), interpretation=(Readings.SYNTHETIC,),
          part_of="fig7a-pem-better", setting={"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20},
          alternatives=(Alternative("the synthetic set cut at RAPPOR's 100 values", Readings.SYNTHETIC,
                                    under(_m_theta_f16, CHAPTER, "exp-100")),), **_TABLE),
)
