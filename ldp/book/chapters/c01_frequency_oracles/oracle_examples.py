"""The worked examples of section 2.2 (chapter 01): GRR at ε = ln 49, OLH at e^ε = 10, computed by the library.

A table, not a figure: :func:`frame` is the result table
``01_frequency_oracles/oracle-examples`` the chapter saves
(:meth:`ldp.book.claims.store.ResultStore.save`) and the claims read.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....oracles.formulas import grr_pq, grr_variance, min_population, olh_variance
from ...claims import rules as R
from ...claims import verdicts as V
from ...claims.claim import Alternative, Claim, ClaimFields, Measurement, MissingInput, Test
from ...claims.measures import one
from .compute import LARGEST_RATIO, SMALLEST_RATIO

__all__ = ["CHAPTER", "NAME", "SIMULATION", "ENGINES", "PAPER", "frame", "paper_table", "CLAIMS"]

CHAPTER, NAME = "01_frequency_oracles", "oracle-examples"
#: the table of the oracles' simulation (:func:`ldp.book.chapters.c01_frequency_oracles.compute.oracle_simulation`)
SIMULATION = "oracle-simulation"
ENGINES = {f"{CHAPTER}/{NAME}": "closed form (ldp.analysis)",
           f"{CHAPTER}/{SIMULATION}": "GRR and OLH run many times (ldp.oracles, the users' side and the server's), "
                                      "and their exact output distributions"}
#: each quantity of :func:`frame`: the example, the quantity and the paper's printed value
PAPER = {
    "grr_p_eps_ln49_d65536": ("GRR, eps = ln 49, d = 2^16", "p", "49/65584 ≈ 0.00075"),
    "grr_var_per_n_eps_ln49_d65536": ("GRR, eps = ln 49, d = 2^16", "Var / n, eq. (1)", "65583/2304 ≈ 28.5"),
    "olh_std_per_sqrt_n_e10": ("OLH, e^eps = 10", "std / sqrt(n), eq. (3)", "≈ 0.7"),
    "olh_std_per_sqrt_n_e10_integer": ("OLH, e^eps = 10", "same with the oracle's integer d' = 11", "≈ 0.7"),
    "olh_min_population_e10_f0.001": ("OLH, e^eps = 10", "n with 0.001 n ≥ 3 std", "4,410,000"),
    "olh_min_population_e10_f0.001_std0.7": ("OLH, e^eps = 10", "same with std rounded to 0.7", "4,410,000"),
    "olh_min_population_ratio_half_f": ("OLH, e^eps = 10", "n for f = 0.0005 / n for f = 0.001", "quadrupling"),
}


def frame() -> pd.DataFrame:
    """The worked examples of section 2.2, computed by :mod:`ldp.oracles` (columns ``quantity, value``).

    GRR at ``eps = ln 49``, ``d = 2**16`` (section 2.2.1): ``p`` and eq. (1) / n.
    OLH at ``e^eps = 10`` (section 2.2.2): the standard deviation per sqrt(n)
    (eq. (3); and with the oracle's integer d'), the smallest n with ``0.001 n >= 3`` standard deviations
    (unrounded, and with the standard deviation rounded to 0.7 as the paper
    prints it) and the ratio of that n for ``f = 0.0005`` to ``f = 0.001``.
    """
    eps49, eps10 = math.log(49), math.log(10)
    v10, v10_int = (float(olh_variance(eps10, d_prime=d)) for d in ("real", None))  # eq. (3): 40/81; d' = 11
    n_min = float(min_population(1e-3, eps10, d_prime="real"))  # (3 / 0.001)^2 * 40/81
    values = [float(grr_pq(eps49, 2**16)[0]), float(grr_variance(eps49, 2**16)), math.sqrt(v10), math.sqrt(v10_int),
              n_min, (3 * round(math.sqrt(v10), 1) / 1e-3) ** 2,  # the paper's 0.7
              float(min_population(5e-4, eps10, d_prime="real")) / n_min]
    return pd.DataFrame({"quantity": list(PAPER), "value": values})


def paper_table(data: pd.DataFrame) -> pd.DataFrame:
    """:func:`frame` beside the paper's printed values, for display (6 significant digits)."""
    rows = [(*PAPER[q][:2], PAPER[q][2], f"{v:,.6g}" if v < 1e5 else f"{v:,.0f}")
            for q, v in zip(data["quantity"], data["value"])]
    return pd.DataFrame(rows, columns=["example", "quantity", "paper", "ldp.oracles"])


# --------------------------------------------------------------------------- claims: section 2.2
def _quantity(store, name: str) -> float:
    t = store.load(CHAPTER, NAME).set_index("quantity")["value"]
    if name not in t.index:
        raise MissingInput(f"{CHAPTER}/{NAME} has no quantity {name!r}")
    return float(t.loc[name])


def _example(point: str, quantity: str, target: float):
    def measure(store):
        return one(point, _quantity(store, quantity), target)
    return measure


def _m_olh_nmin(store):
    exact = f"unrounded (standard deviation 0.703): {_quantity(store, 'olh_min_population_e10_f0.001'):,.0f}"
    return Measurement(one("smallest n with 0.001 n ≥ 3 × 0.7 √n",
                           _quantity(store, "olh_min_population_e10_f0.001_std0.7"), 4_410_000), exact)


def _m_ldp(store) -> pd.DataFrame:
    """Definition 1 on each oracle's exact output distributions (the ratio rows of the simulation's table,
    :func:`~ldp.book.chapters.c01_frequency_oracles.compute.ldp_check_rows`): ln of the largest ratio
    Pr[report | v1] / Pr[report | v2] against ε, and -ε against ln of the smallest (within exp(±ε))."""
    t = store.load(CHAPTER, SIMULATION)
    high = t[t["check"].str.startswith(LARGEST_RATIO)]
    low = t[t["check"].str.startswith(SMALLEST_RATIO)]
    if high.empty or low.empty:
        raise MissingInput(f"{CHAPTER}/{SIMULATION} has no ratio of the exact output distributions (an older build)")
    rows = [{"point": f"{o}{c.removeprefix(LARGEST_RATIO)}: {r:.7g} against exp(ε) = {e:.7g}", "a": np.log(e),
             "b": np.log(r)} for o, c, r, e in zip(high["oracle"], high["check"], high["empirical"], high["theory"])]
    rows += [{"point": f"{o}{c.removeprefix(SMALLEST_RATIO)}: {r:.7g} against exp(−ε) = {e:.7g}",
              "a": np.log(r), "b": np.log(e)} for o, c, r, e in zip(low["oracle"], low["check"], low["empirical"],
                                                                      low["theory"])]
    return pd.DataFrame(rows).assign(se_a=0.0, se_b=0.0)[["point", "a", "se_a", "b", "se_b"]]


def _m_unbiased(store) -> pd.DataFrame:
    """Each oracle's mean estimate of the held value over the simulation's runs against its true count, with the
    standard error of that mean (the estimates' variance over the runs, ``n_reps`` of the chapter's parameters)."""
    t = store.load(CHAPTER, SIMULATION)
    runs = (store.parameters(CHAPTER) or {}).get("n_reps")
    if not runs:
        raise MissingInput(f"the chapter's parameters give no n_reps, the runs behind {CHAPTER}/{SIMULATION}")
    rows = []
    for oracle, grp in t.groupby("oracle", sort=False):
        mean = grp[grp["check"].str.startswith("mean")]
        var = grp[grp["check"].str.startswith("variance, value 0")]
        if mean.empty or var.empty:
            raise MissingInput(f"{CHAPTER}/{SIMULATION} has no mean or no variance of {oracle}'s held value")
        rows.append({"point": f"{oracle}: mean estimate of a value held by {mean['theory'].iloc[0]:,.0f} users "
                              f"over {int(runs)} runs", "observed": float(mean["empirical"].iloc[0]),
                     "expected": float(mean["theory"].iloc[0]),
                     "se": math.sqrt(float(var["empirical"].iloc[0]) / int(runs))})
    return pd.DataFrame(rows, columns=["point", "observed", "expected", "se"])


_EXAMPLE: ClaimFields = dict(chapter=CHAPTER, reads=(f"{CHAPTER}/{NAME}",))
_READ = "5-section-22-oracle-parameters"
_PRINTED = R.WithinTolerance.printed  # within half a unit of the last printed digit
#: the result tables this module's claims read (beside figure CSVs): name -> (columns, what it holds)
TABLES = {"oracle-examples": (("quantity", "value"),
                              "the worked examples of section 2.2 (GRR at eps = ln 49, OLH at e^eps = 10)"),
          SIMULATION: (("oracle", "check", "empirical", "theory", "statistic"),
                       "GRR and OLH run many times: the mean estimate of a held value against its true count (z), "
                       "the variances against the formulas (ratio); and the largest and smallest ratio of a "
                       "report's probability under two inputs, from their exact output distributions, against "
                       "exp(±ε) (ratio)")}
CLAIMS: tuple[Claim, ...] = (
    Claim(id="s21-definition-1", section="2.1", ref="Definition 1",
          quote=r"satisfies $\epsilon$-local differential privacy ($\epsilon$-LDP), where $\epsilon \geq 0$, if and "
                r"only if for any input $v_1,v_2 \in \Domain$, we have",
          says="each oracle is ε-LDP",
          note="Each oracle of the paper: GRR and OLH (PEM, SPM and MCM all report through OLH). For OLH a report is "
               "the pair (H, y) and Pr[H] does not depend on the value, so the ratio is that of y given H(v1) and "
               "H(v2), taken over the chapter's hash seeds. The oracles of the successors (OUE, HR, CMS, FLH; "
               "chapter 08) are checked the same way, exactly, by the library's tests, not in this row.",
          test=Test(what="the largest and smallest ratio Pr[report | v1] / Pr[report | v2] of GRR and OLH from "
                         "their exact output distributions, against exp(ε) and exp(−ε) (logs), at the chapter's ε",
                    measure=_m_ldp,
                    rule=R.OrderingHolds(floor=None, ceiling=None,
                                         what="the ratio within exp(±ε), to floating-point noise"),
                    chapter=CHAPTER, reads=(f"{CHAPTER}/{SIMULATION}",))),
    Claim(id="s2-eq2-unbiased", section="2.2.1", ref="eq. (2)",
          quote=r"it is shown that this is an unbiased estimation of the true count",
          says="(I_v − nq)/(p − q) is unbiased",
          note="The paper states it of GRR's estimate and relies on it for OLH's, eq. (2): the same transformation "
               "with q = 1/d' (the appendix: 'Given that ... are unbiased').",
          test=Test(what="the mean estimate of a value held by a tenth of the users, over the simulation's runs, "
                         "against its true count: GRR and OLH (eq. (2), the integer d')",
                    measure=_m_unbiased, rule=R.WithinSE(), chapter=CHAPTER,
                    reads=(f"{CHAPTER}/{SIMULATION}",))),
    Claim(id="s2-grr-example-p", section="2.2.1", ref="GRR example",
          quote=r"we have $p=\frac{49}{65584} \approx 0.00075$", says="p ≈ 0.00075 at ε = ln 49, d = 65,536",
          test=Test(what="GRR's p from the library against the printed value",
                    measure=_example("GRR p at ε = ln 49, d = 65,536", "grr_p_eps_ln49_d65536", 0.00075),
                    rule=_PRINTED("0.00075"), **_EXAMPLE),
          parts=(
              Claim(id="s2-grr-example-var", section="2.2.1", ref="eq. (1), example",
                    quote=r"variance $\frac{65583}{2304}\approx 28.5n$", says="Var ≈ 28.5 n",
                    test=Test(what="eq. (1) from the library, divided by n",
                              measure=_example("GRR variance / n at ε = ln 49, d = 65,536",
                                               "grr_var_per_n_eps_ln49_d65536", 28.5),
                              rule=_PRINTED("28.5"), **_EXAMPLE)),
          )),
    Claim(id="s2-olh-std-example", section="2.2.2", ref="eq. (3), example",
          quote=r"using OLH the standard deviation is $\sqrt{\frac{40}{81} n} \approx 0.7 \sqrt{n}$",
          says="std ≈ 0.7 √n at exp(ε) = 10",
          test=Test(what="√(eq. (3) / n) from the library",
                    measure=_example("OLH standard deviation / √n at exp(ε) = 10", "olh_std_per_sqrt_n_e10", 0.7),
                    rule=_PRINTED("0.7"), rests_on=(_READ,),
                    other_readings=(Alternative(
                        "the oracle's integer d' = ⌈e^ε + 1⌉ and its exact variance (d_prime=None), not eq. (3)", _READ,
                        _example("the same with d' = 11", "olh_std_per_sqrt_n_e10_integer", 0.7)),),
                    **_EXAMPLE)),
    Claim(id="s2-olh-min-population", section="2.2.2", ref="eq. (3), example", quote=r"or $n \geq 4,410,000$",
          says="n ≥ 4,410,000 for a 0.1 % value at 3 std",
          note="The paper rounds √(40/81) = 0.703 to 0.7 before squaring (tested as printed); the unrounded "
               "bound is shown.",
          test=Test(what="the smallest such n with the printed standard deviation 0.7", measure=_m_olh_nmin,
                    rule=_PRINTED("4,410,000"), rests_on=(_READ,),
                    other_readings=(Alternative(
                        "the standard deviation unrounded (0.703, not the printed 0.7)", _READ,
                        _example("smallest n, unrounded", "olh_min_population_e10_f0.001", 4_410_000)),),
                    **_EXAMPLE)),
    Claim(id="s2-olh-quadruple", section="2.2.2", ref="eq. (3), example",
          quote=r"Quadrupling the population size would enables us to reduce this $0.1 \%$ sensitivity threshold by "
                r"half.",
          says="4 × n halves the threshold",
          test=Test(what="n needed at f = 0.0005 divided by n needed at f = 0.001",
                    measure=_example("n needed for frequency 0.0005 / n needed for 0.001",
                                     "olh_min_population_ratio_half_f",
                                     4.0),
                    rule=R.WithinTolerance(V.COUNT_TOL, "an identity"), **_EXAMPLE)),
)
