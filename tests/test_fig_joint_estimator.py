"""Chapter 03's table of the appendix's joint estimator and its claim (ldp.book.chapters.c03_pem.joint_estimator)."""
import pandas as pd

from ldp.analysis import montecarlo
from ldp.book.chapters import REGISTRY
from ldp.book.chapters.c03_pem import joint_estimator as F
from ldp.book.claims.store import ResultStore

from builds import require
from figtools import decide, store_with


def test_frame_and_claim(tmp_path):
    table = F.frame(montecarlo.joint_estimator_simulation(2000, 60, rng=5).table)
    assert tuple(table.columns) == REGISTRY.tables[F.CHAPTER][F.NAME][0]
    row = decide("s4-joint-unbiased", store_with(tmp_path, tables={(F.CHAPTER, F.NAME): table}))
    assert row["verdict"] == "reproduced" and row["numbers"]["points"] == 7
    biased = table.assign(mean_estimate=table.mean_estimate + 20 * table.se)  # 20 SE off everywhere
    row = decide("s4-joint-unbiased", store_with(tmp_path / "b", tables={(F.CHAPTER, F.NAME): biased}))
    assert row["verdict"] == "not reproduced" and row["numbers"]["holm_rejected"] == 7


def test_saved_by_the_quick_build():
    store = ResultStore.for_build("quick")
    table = pd.read_csv(require(store.table_path(F.CHAPTER, F.NAME)))
    assert tuple(table.columns) == REGISTRY.tables[F.CHAPTER][F.NAME][0] and len(table) == 7 and (table.se > 0).all()
