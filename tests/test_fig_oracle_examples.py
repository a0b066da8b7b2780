"""Chapter 01's worked examples of section 2.2 (ldp.book.chapters.c01_frequency_oracles.oracle_examples): the table
and its claims."""
import math
from fractions import Fraction

import pandas as pd
import pytest

from ldp.book.chapters import REGISTRY
from ldp.book.chapters.c01_frequency_oracles import oracle_examples as F
from ldp.book.claims.store import ResultStore

from builds import require
from figtools import decide, store_with


def test_frame_matches_exact_arithmetic():
    ex = F.frame()
    assert list(ex.columns) == list(REGISTRY.tables[F.CHAPTER][F.NAME][0])
    value = dict(zip(ex.quantity, ex.value))
    assert value["grr_p_eps_ln49_d65536"] == pytest.approx(float(Fraction(49, 65584)), rel=1e-12)
    assert value["grr_var_per_n_eps_ln49_d65536"] == pytest.approx(float(Fraction(65583, 2304)), rel=1e-12)
    assert value["olh_std_per_sqrt_n_e10"] == pytest.approx(math.sqrt(40 / 81), rel=1e-12)
    assert value["olh_min_population_e10_f0.001"] == pytest.approx((3 / 1e-3) ** 2 * 40 / 81, rel=1e-12)
    assert value["olh_min_population_e10_f0.001_std0.7"] == pytest.approx(4_410_000, rel=1e-12)
    assert value["olh_min_population_ratio_half_f"] == pytest.approx(4.0, rel=1e-12)
    shown = F.paper_table(ex)
    assert list(shown.columns) == ["example", "quantity", "paper", "ldp.oracles"] and len(shown) == len(ex)


def test_claims_on_the_table(tmp_path):
    store = store_with(tmp_path, tables={(F.CHAPTER, F.NAME): F.frame()})
    ids = [c.id for c in F.CLAIMS]
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    nmin = decide("s2-olh-min-population", store)
    assert "unrounded" in nmin["measured"] and nmin["numbers"]["target"] == 4_410_000


def test_a_missing_table_is_not_testable(tmp_path):
    row = decide("s2-grr-example-p", ResultStore(tmp_path))
    assert row["verdict"] == "not testable here" and "input missing" in row["explanation"]


def test_saved_by_the_quick_build():
    store = ResultStore.for_build("quick")
    require(store.table_path(F.CHAPTER, F.NAME))
    pd.testing.assert_frame_equal(store.load(F.CHAPTER, F.NAME), F.frame(), rtol=1e-12)
