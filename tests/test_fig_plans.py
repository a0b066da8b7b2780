"""Chapter 02's table of the protocols' plans and its claim on MCM's channels
(ldp.book.chapters.c02_existing_methods.plans)."""
import numpy as np
import pytest

from ldp.book.chapters import REGISTRY
from ldp.book.chapters.c02_existing_methods import compute as C
from ldp.book.chapters.c02_existing_methods import plans as F

from figtools import decide, store_with


@pytest.fixture(scope="module")
def table():
    populations = {64: 1_000_000, 32: 20_000}
    _, protocols = C.configuration_table(2.0, 16, populations, query_limit=2**20, final_fraction=0.1)
    return F.frame(protocols, populations), protocols


def test_the_plans_are_read_from_the_protocols(table):
    t, protocols = table
    assert list(t.columns) == list(REGISTRY.tables[F.CHAPTER][F.NAME][0]) and len(t) == len(protocols)
    pem = t[(t["protocol"] == "PEM") & (t["m"] == 64)].iloc[0]
    assert pem["groups"] == protocols[64, "PEM"].config(1_000_000).g == 5
    assert pem["last_group_users"] == 200_000  # five equal groups
    mcm = t[t["protocol"] == "MCM"]
    assert (mcm["channels"] == 64).all() and t.loc[~t["protocol"].str.startswith("MCM"), "channels"].isna().all()
    part = t[(t["protocol"] == "MCM, partition") & (t["m"] == 64)].iloc[0]
    assert part["last_group_users"] == 100_000 and part["groups"] == pem["groups"] + 2  # 10 % for the final test


def test_the_channels_against_the_square_root_of_n(table, tmp_path):
    t, _ = table
    row = decide("s7-sqrt-n-channels", store_with(tmp_path, tables={(F.CHAPTER, F.NAME): t}))
    assert row["verdict"] == "not reproduced"  # 64 channels against 1,000 and 141
    assert row["numbers"]["max_abs_diff"] == pytest.approx(np.log2(1000 / 64))
    assert row["cause_class"] == "genuine" and "k^1.5" in row["cause"] and "2^3.97 = 16 times" in row["cause"]
    sqrt_n = t.assign(channels=np.where(t["protocol"] == "MCM", np.sqrt(t["n"]) * 1.5, np.nan))  # made up: 1.5 √n
    row = decide("s7-sqrt-n-channels", store_with(tmp_path / "sqrt", tables={(F.CHAPTER, F.NAME): sqrt_n}))
    assert row["verdict"] == "reproduced"
