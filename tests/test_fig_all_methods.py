"""Chapter 02's Figure 1, the four protocols' user groups and bits, and its claims
(ldp.book.chapters.c02_existing_methods.all_methods)."""
import pytest

from ldp.book.chapters.c02_existing_methods import all_methods as F

from figtools import decide, page_ready, store_with, texts


@pytest.fixture(scope="module")
def protocols():
    return F.protocols(2.0, 16, query_limit=2**20)


def test_frame_is_read_from_the_plans(protocols):
    bars = F.frame(protocols, 6_400)
    assert (bars.bit_start >= 0).all() and (bars.bit_stop <= 64).all() and (bars.bit_start < bars.bit_stop).all()
    assert dict(zip(bars["method"], bars["panel"])) == {"Strawman": "a", "SPM": "b", "MCM": "c", "PEM": "d"}
    segs = bars[bars.bar == "segment reported"]
    assert set(segs[segs.method == "Strawman"].bit_stop - segs[segs.method == "Strawman"].bit_start) == {16}
    assert len(segs[segs.method == "SPM"]) == 2 * 6  # each pair group reports two segments
    assert (bars[bars.method == "MCM"].channels.dropna() == protocols["MCM"].channels).all()


def test_draw(protocols):
    fig = F.draw(F.frame(protocols, 6_400), protocols, 6_400)
    page_ready(fig, legend=False)
    assert any(t.startswith("(c) MCM: users partitioned into\n64 groups") for t in texts(fig))


def test_claims_count_the_groups(protocols, tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(protocols, 6_400)})
    rows = {c.id: decide(c.id, store) for c in F.CLAIMS}
    assert {i: r["verdict"] for i, r in rows.items()} == dict.fromkeys(rows, "reproduced")
    assert [r["numbers"]["value"] for r in rows.values()] == [4, 6, 64, 4]
    bars = F.frame(protocols, 6_400)
    five = bars[(bars["method"] != "SPM") | (bars["group"] < 6)]  # an SPM that lost a pair group
    assert decide("fig1-spm-groups", store_with(tmp_path / "5", figures={F.NAME: five}))["verdict"] == "not reproduced"
