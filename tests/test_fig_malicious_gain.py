"""Chapter 09's gain figure (ldp.book.chapters.c09_malicious_users.malicious_gain): the frame from the gain table,
drawing, claim."""
import numpy as np

from ldp.attacks.gains import gain_table
from ldp.book.chapters.c09_malicious_users import malicious_gain as F

from figtools import decide, page_ready, store_with, titles


def gains(rng=1):
    return gain_table([1.0, 2.0], oracles=("OLH", "OUE", "CMS"), rs=(1, 4), kinds=("MGA",), n=300, others=8,
                      trials=4, rng=rng)


def test_frame_is_the_gain_table():
    table = gains()
    data = F.frame(table)
    assert list(data.columns) == ["panel", "targets", "oracle", "epsilon", "source", "gain", "err", "reports"]
    assert len(data) == 2 * len(table) and dict(zip(data["targets"], data["panel"])) == {1: "a", 4: "b"}
    m = data[data["source"] == "measured"].sort_values(["oracle", "epsilon", "targets"])
    t = table.sort_values(["oracle", "epsilon", "r"])
    np.testing.assert_array_equal(m["gain"], t["gain"])
    np.testing.assert_allclose(m["err"], 2 * t["gain_se"])


def test_draw():
    fig = F.draw(F.frame(gains()))
    page_ready(fig)
    assert titles(fig) == ["(a) 1 target", "(b) 4 targets"]


def test_claim(tmp_path):
    data = F.frame(gains())
    assert decide("malicious-gain-closed-form", store_with(tmp_path, figures={F.NAME: data}))["verdict"] == "reproduced"
    off = data.assign(gain=np.where(data["source"] == "measured", 2 * data["gain"], data["gain"]))
    row = decide("malicious-gain-closed-form", store_with(tmp_path / "off", figures={F.NAME: off}))
    assert row["verdict"] == "not reproduced"
