"""The data sets of section 6.1 (chapter 06): their sizes, against the numbers the paper gives.

A table, not a figure: :func:`frame` is the result table ``06_evaluation/datasets``
(:func:`ldp.book.chapters.c06_evaluation.compute.dataset_sizes` of the evaluation's grids) the chapter
saves and the claims read.
"""
from __future__ import annotations

import pandas as pd

from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Because, Cause, Claim, ClaimFields, Measurement, MissingInput, Readings, Test
from ...claims.measures import one
from ...claims.readings import under
from .compute import dataset_sizes

__all__ = ["CHAPTER", "NAME", "ENGINES", "frame", "CLAIMS"]

CHAPTER, NAME = "06_evaluation", "datasets"
ENGINES = {f"{CHAPTER}/{NAME}": "the data sets themselves (ldp.datasets)"}


def frame(runs: pd.DataFrame) -> pd.DataFrame:
    """``dataset, n, n_distinct, f_16, n_frequent``: users, distinct values, 16th largest frequency and values of
    frequency at least 0.1 % of each data set."""
    return dataset_sizes(runs, k=16)


def _m_size(dataset: str, column: str, scale: float, target: float, what: str = ""):
    def measure(store):
        t = store.load(CHAPTER, NAME).set_index("dataset")
        if dataset not in t.index:
            raise MissingInput(f"the {dataset} data set is not in this build")
        return one(what or f"{dataset}: {column.replace('_', ' ')} (in units of {scale:,.0f})",
                   float(t.loc[dataset, column]) / scale, target)
    return measure


def _m_few_dozen(bound: int):
    """Each data set's values of frequency at least 0.1 % against ``bound``."""
    def measure(store):
        t = store.load(CHAPTER, NAME)
        if "n_frequent" not in t.columns:
            raise MissingInput(f"{CHAPTER}/{NAME} has no count of the values at or above 0.1 % (an older build)")
        return Measurement(pd.DataFrame({"point": t["dataset"] + ": values at or above 0.1 %", "a": float(bound),
                                         "se_a": 0.0, "b": t["n_frequent"].astype(float), "se_b": 0.0}),
                           "" if "AOL" in set(t["dataset"]) else "AOL is not in this build (its data file is absent)")
    return measure


def _c_few_dozen(store) -> Because:
    """The data sets' counts of values at or above 0.1 % against five dozen, and against the other reading's 100."""
    t = store.load(CHAPTER, NAME)
    counts = ", ".join(f"{n} ({d})" for d, n in zip(t["dataset"], t["n_frequent"]))
    ours, other = (int((t["n_frequent"] > bound).sum()) for bound in (V.FEW_DOZEN, 99))
    return Because("reading", (
        f"'a few dozen' read as at most {V.FEW_DOZEN}: {counts} values at 0.1 % or more, {ours} of {len(t)} above; "
        f"read as under 100, {other} of {len(t)}"),
        {"misfit": float(ours), "misfit_other": float(other)})


def _n(store, dataset: str, column: str) -> int:
    return int(store.load(CHAPTER, NAME).set_index("dataset").loc[dataset, column])


_m_theta_f16 = _m_size("Synthetic", "f_16", 1, 0.023, "frequency of the 16th most frequent synthetic value")
_TABLE: ClaimFields = dict(chapter=CHAPTER, reads=(f"{CHAPTER}/{NAME}",))
_PRINTED = R.WithinTolerance.printed  # within half a unit of the last printed digit
#: a part of chapter 07's sentence on Figure 7(a) (its θ = 0.023 is "around" this frequency): this
#: chapter's table measures it
THETA_F16 = Claim(id="s623-theta-f16", section="6.2.3", ref="Figure 7(a)",
                  quote=r"($0.023$ is around frequency of the $16$-the most frequent value in the dataset)",
                  says="f_16 ≈ 0.023",
                  test=Test(what="frequency of the 16th most frequent value of the synthetic set", measure=_m_theta_f16,
                            rule=_PRINTED("0.023"),
                            setting={"n_synthetic": 1_000_000, "m_synthetic": 64, "query_limit": 2 ** 20},
                            rests_on=(Readings.SYNTHETIC,),
                            other_readings=(Alternative("the synthetic set cut at RAPPOR's 100 values",
                                                        Readings.SYNTHETIC,
                                                        under(_m_theta_f16, CHAPTER, "exp-100")),),
                            **_TABLE))
def _c_aol_users(store) -> str:
    """The AOL tally's queries against the paper's 'around 0.5 million', in millions as the rule compares them."""
    n = _n(store, "AOL", "n")
    return (f"the authors' published tally holds {n:,} queries, {n / 1e6 - 0.5:.3f} million more than 'around 0.5 "
            f"million' allows at half a unit of its last digit")


#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {"datasets": (("dataset", "n", "n_distinct", "f_16", "n_frequent"),
                       "users, distinct values, 16th largest frequency and values of frequency at least 0.1 % of each "
                       "evaluation data set")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s222-few-dozen", section="2.2.2", ref="values at 0.1 %",
          quote=r"in most distributions there are likely no more than a few dozen of such values,",
          says="a few dozen values at 0.1 % or more",
          test=Test(what=f"values of frequency at least 0.1 % in each evaluation data set (URL stand-in, AOL, "
                         f"synthetic), against {V.FEW_DOZEN} (five dozen)",
                    measure=_m_few_dozen(V.FEW_DOZEN),
                    rule=R.OrderingHolds(share=V.MOST, floor=None, ceiling=None,
                                         what=f"at most {V.FEW_DOZEN} values (a few dozen) at or above 0.1 %"),
                    rests_on=("url", Readings.FEW_DOZEN, Readings.URL, Readings.AOL, Readings.SYNTHETIC),
                    cause=Cause("reading", _c_few_dozen),
                    other_readings=(Alternative("'a few dozen' as fewer than 100: tens, not hundreds, against the "
                                                "'up to 1000' the sentence sets it against", Readings.FEW_DOZEN,
                                                _m_few_dozen(99)),),
                    **_TABLE)),
    Claim(id="s61-url-size", section="6.1", ref="URL data set",
          quote=r"resulting a dataset containing $1.2$ million data points, and $27$ thousand unique urls.",
          says="1.2 million users", note="The stand-in is calibrated to these numbers, so they cannot test it.",
          test=Test(what="users of the URL stand-in (millions)", measure=_m_size("URL", "n", 1e6, 1.2),
                    rule=_PRINTED("1.2"), rests_on=("url-calibrated", Readings.URL),
                    other_readings=(Alternative("the URL stand-in's binomial calibration (one random 5-minute slot)",
                                                Readings.URL,
                                                under(_m_size("URL", "n", 1e6, 1.2), CHAPTER, "url-binomial")),),
                    **_TABLE)),
    Claim(id="s61-aol-users", section="6.1", ref="AOL data set",
          quote=r"This results a dataset of around $0.5$ million queries", says="around 0.5 million users",
          note="The tally is the authors' own published file.",
          test=Test(what="users of the AOL tally (millions)", measure=_m_size("AOL", "n", 1e6, 0.5),
                    rule=_PRINTED("0.5"), rests_on=(Readings.AOL,),
                    cause=Cause("genuine", _c_aol_users),
                    other_readings=(Alternative("AOL without its empty-query placeholder, the most frequent row",
                                                Readings.AOL,
                                                under(_m_size("AOL", "n", 1e6, 0.5), CHAPTER, "aol-placeholder")),),
                    **_TABLE),
          parts=(
              Claim(id="s61-aol-unique", section="6.1", ref="AOL data set",
                    quote=r"including $0.2$ million unique ones.",
                    says="0.2 million distinct (errata: 0.12 million)",
                    note="The authors' errata corrects 0.2 million to 0.12 million; the errata's value is tested.",
                    test=Test(what="distinct queries of the AOL tally (millions), against the errata's 0.12",
                              measure=_m_size("AOL", "n_distinct", 1e6, 0.12), rule=_PRINTED("0.12"),
                              rests_on=(Readings.AOL,),
                              other_readings=(Alternative("the paper's printed 0.2 million, not its errata's 0.12",
                                                          Readings.AOL, _m_size("AOL", "n_distinct", 1e6, 0.2),
                                                          _PRINTED("0.2")),),
                              **_TABLE)),
          )),
)
