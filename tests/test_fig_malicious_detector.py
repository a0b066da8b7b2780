"""Chapter 09's detector figure (ldp.book.chapters.c09_malicious_users.malicious_detector): frame, drawing and the
claims on its tables."""
import numpy as np
import pandas as pd

from ldp.book.chapters import REGISTRY
from ldp.book.chapters.c09_malicious_users import malicious_detector as F
from ldp.book.chapters.c09_malicious_users.compute import CHAPTER

from figtools import decide, page_ready, store_with

BOUND = np.r_[1.0, np.geomspace(0.5, 1e-5, 16), 0.0]


def test_frame_is_the_tails():
    honest = np.random.default_rng(1).binomial(16, 0.1, 1000)
    data = F.frame(honest, {"crafted": honest + 5}, BOUND, 8)
    assert list(data.columns) == ["series", "count", "tail", "reports", "threshold"]
    assert list(dict.fromkeys(data["series"])) == ["honest reports", "crafted", "stated bound"]
    h = data[data["series"] == "honest reports"].set_index("count")["tail"]
    assert h[0] == 1.0 and h[3] == np.mean(honest >= 3) and (np.diff(h.to_numpy()) <= 0).all()
    np.testing.assert_array_equal(data[data["series"] == "stated bound"]["tail"], BOUND[:-1])


def test_draw():
    honest = np.random.default_rng(1).binomial(16, 0.1, 1000)
    page_ready(F.draw(F.frame(honest, {"crafted": honest + 5}, BOUND, 8)))


def runs(fpr=2e-4):
    return pd.DataFrame({"run": ["PEM, no fake users", "PEM, MGA, 16 targets"], "alpha": 1e-3, "fpr": fpr,
                         "honest": 10**6})


def test_claims_read_the_chapters_tables(tmp_path):
    done = pd.DataFrame({"kind": ["MGA", "input"], "fraction": 0.015, "runs": 4, "planted": [4, 1]})
    for name, table in (("detector-runs", runs()), ("done-when", done)):
        assert set(REGISTRY.tables[CHAPTER][name][0]) <= set(table.columns)
    store = store_with(tmp_path, tables={(CHAPTER, "detector-runs"): runs(), (CHAPTER, "done-when"): done})
    assert decide("malicious-detector-fpr", store)["verdict"] == "reproduced"
    assert decide("malicious-done-when", store)["verdict"] == "reproduced"
    store = store_with(tmp_path / "no", tables={(CHAPTER, "detector-runs"): runs(fpr=3e-3),
                                                (CHAPTER, "done-when"): done.assign(planted=[2, 2])})
    assert decide("malicious-detector-fpr", store)["verdict"] == "not reproduced"
    assert decide("malicious-done-when", store)["verdict"] != "reproduced"
