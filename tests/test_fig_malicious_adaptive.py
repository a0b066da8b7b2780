"""Chapter 09's figures of attackers who know the checks (ldp.book.chapters.c09_malicious_users.malicious_adaptive):
frames from made-up benchmark tables, drawing, and the claims on made-up data where they hold and where not."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c09_malicious_users import compute as C
from ldp.book.chapters.c09_malicious_users import malicious_adaptive as F
from ldp.book.plotting.narrow import NARROW_WIDTH, one_column

from figtools import decide, page_ready, store_with, titles

#: protocol -> (oracle, the attackers that apply)
PROTOCOLS = {"PEM-OLH": ("OLH", ("MGA", "spread", "one-each")),
             "PEM-CMS": ("CMS", ("MGA", "spread", "one-each", "capped")),
             "SFP-FLH": ("FLH", ("MGA", "spread", "one-each", "index-honest"))}
BASE = {"MGA": 0.02, "spread": 0.018, "one-each": 0.1, "capped": 0.04, "index-honest": 0.05}


def tables(*, reps=1, n=200_000, checks=1.0, defence=1.1, stopped=("PEM-CMS", "MGA"), price=0.05, base=None):
    """A benchmark table: every share ``BASE`` (times 1 + 0.1 rep), times ``checks`` with the checks on (``stopped``:
    an attacker the checks stop, none within 50 %) and ``defence`` with the defence on."""
    rows, prices = [], []
    for protocol, (oracle, attackers) in PROTOCOLS.items():
        for attacker in attackers:
            for rep in range(reps):
                for checks_on, defended in C.SERVERS:
                    f = (base or BASE)[attacker] * (1 + 0.1 * rep)
                    f *= (checks if checks_on == "on" else 1.0) * (defence if defended == "on" else 1.0)
                    if checks_on == "on" and (protocol, attacker) == stopped:
                        f = np.nan
                    rows.append({"protocol": protocol, "oracle": oracle, "epsilon": 2.0, "n": n, "k": 16,
                                 "attacker": attacker, "targets": 16, "need": 8, "rep": rep, "checks": checks_on,
                                 "defence": defended, "guard": 0.005 if defended == "on" else 0.0,
                                 "engine": "counts", "fraction": f, "commit": "abc1234", "load_before": 3.0,
                                 "load_after": 4.5, "seconds": 1200.0})
        for guard in (0.0, 0.005, 0.01, 0.02):
            for rep in range(5):
                loss = {0.0: 0.0, 0.005: price, 0.01: 0.3, 0.02: 0.8}[guard]
                prices.append({"protocol": protocol, "guard": guard, "rep": rep, "f1": 0.9, "f1_defended": 0.9 - loss})
    return {"grid": pd.DataFrame(rows), "price": pd.DataFrame(prices)}


def live_of(table, scale=1.0):
    g = table["grid"]
    first = g[(g["protocol"] == "PEM-OLH") & (g["attacker"] == "MGA") & (g["rep"] == 0)]
    return first.assign(fraction=first["fraction"] * scale)


def test_frame():
    t = tables(reps=3)
    data = F.frame(t, live_of(t))
    assert list(data.columns[:4]) == ["panel", "quantity", "source", "protocol"]
    shares = data[data["quantity"] == "fake users"]
    assert set(shares["panel"]) == set("abcd") and set(data["panel"]) == set("abcde")
    assert len(shares[shares["source"] == "this build"]) == 4 and (shares["reps"][shares["source"] == "benchmark"]
                                                                 == 3).all()
    row = shares[(shares["protocol"] == "PEM-OLH") & (shares["attacker"] == "MGA") & (shares["server"] == "no checks")
                 & (shares["source"] == "benchmark")].iloc[0]
    assert row["value"] == pytest.approx(0.02 * 1.1) and row["first"] == pytest.approx(0.02) and row["reached"] == 3
    stopped = shares[(shares["protocol"] == "PEM-CMS") & (shares["attacker"] == "MGA") & (shares["checks"] == "on")]
    assert (stopped["reached"] == 0).all() and (stopped["x"] == C.BENCH_MAX_FRACTION).all()
    price = data[data["panel"] == "e"].set_index("protocol")
    assert list(price.index) == list(PROTOCOLS) and price["value"].tolist() == pytest.approx([0.05] * 3)
    assert (price["guard"] == 0.005).all()
    # rows top down in the benchmark's order, the servers side by side in a row
    ys = shares[shares["source"] == "benchmark"].groupby("protocol")["y"].mean()
    assert ys["PEM-OLH"] > ys["PEM-CMS"] > ys["SFP-FLH"]


def test_draw():
    t = tables(reps=3)
    fig = F.draw(F.frame(t, live_of(t)))
    page_ready(fig)
    assert titles(fig) == ["(a) max. gain", "(b) spread", "(c) one each", "(d) index, cap", "(e) price"]
    legend = [x.get_text() for x in fig.legends[0].get_texts()]
    assert legend == [*C.SERVERS.values(), "none within 50 %", "this build"]
    assert [x.get_text() for x in fig.axes[0].get_yticklabels()] == list(PROTOCOLS)
    page_ready(F.draw(F.frame(tables())))  # without this build's search: no cross in the legend


def test_phone_layout_labels_every_panel():
    fig = F.draw(F.frame(tables()))
    shown = [[x.get_text() for x in ax.get_yticklabels() if x.get_visible()] for ax in fig.axes]
    fig.canvas.draw()
    assert all(ax.yaxis.get_tick_params()["labelleft"] is False for ax in fig.axes[1:])  # the page: one y axis
    with one_column(fig):
        fig.canvas.draw()
        page_ready(fig, width=NARROW_WIDTH)
        for ax in fig.axes:
            labels = [x.get_text() for x in ax.get_yticklabels() if x.get_visible()]
            assert labels == list(PROTOCOLS) and ax.yaxis.get_tick_params()["labelleft"], ax.get_title()
    assert shown[0] == list(PROTOCOLS)


def test_cheapest_and_the_table():
    t = tables()
    data = F.frame(t)
    c = C.cheapest(data).set_index("protocol")
    assert list(c.columns) == list(C.SERVERS.values())
    assert c.loc["PEM-OLH", "no checks"] == 0.018 and c.loc["PEM-CMS", "checks"] == 0.018  # spread is the cheapest
    assert c.loc["SFP-FLH", "checks and defence"] == pytest.approx(0.018 * 1.1)
    only_mga = F.frame({"grid": t["grid"][t["grid"]["attacker"] == "MGA"], "price": t["price"]})
    assert np.isinf(C.cheapest(only_mga).set_index("protocol").loc["PEM-CMS", "checks"])
    table = C.adaptive_table({"sixteen-targets": data, "one-target": F.frame(tables(n=10**6))})
    assert list(table.columns) == ["targets", "protocol", *C.SERVERS.values(), "guard", "honest F1 lost"]
    assert list(table["targets"]) == ["8 of 16"] * 3 + ["1 of 1"] * 3
    assert table["honest F1 lost"].tolist() == pytest.approx([0.05] * 6)


def test_findings():
    many, one = tables(), tables(reps=3, n=10**6, base={**BASE, "MGA": 0.009, "spread": 0.0095})
    frames = {"sixteen-targets": F.frame(many), "one-target": F.frame(one, live_of(one))}
    out = C.adaptive_findings(frames, {"sixteen-targets": many, "one-target": one})
    assert (out["adapt_need"], out["adapt_targets"], out["adapt_n_many"], out["adapt_n_one"]) == (8, 16, 200_000,
                                                                                                  10**6)
    assert (out["adapt_reps_one"], out["adapt_commit"], out["adapt_load_max"], out["adapt_minutes"]) == (3, "abc1234",
                                                                                                        4.5, 40.0)
    assert out["adapt_free_count"] == 3 and out["adapt_protocols"] == 3 and out["adapt_stopped_text"] == "none"
    assert out["adapt_free_text"] == "PEM-OLH, PEM-CMS and SFP-FLH" and out["adapt_raised_text"] == "none"
    assert out["adapt_defence_max"] == pytest.approx(1.1) and out["adapt_price_max"] == pytest.approx(0.05)
    assert out["adapt_one_min"] == pytest.approx(0.009 * 1.1 * 1.1) and out["adapt_one_min_at"] == "PEM-OLH"
    # the guard above 0.99 % is 1 % (honest F1 lost 0.3); above PEM-CMS's 1.045 % (MGA stopped) it is 2 % (0.8)
    assert out["adapt_one_stop_guard"] == 0.01 and out["adapt_one_stop_loss_min"] == pytest.approx(0.3)
    assert out["adapt_one_stop_loss_max"] == pytest.approx(0.8)
    assert out["adapt_rerun_text"] == out["adapt_rerun_bench_text"] == ("no checks 0.900%, checks 0.900%, "
                                                                        "defence 0.990%, checks and defence 0.990%")
    raised = C.adaptive_findings({**frames, "sixteen-targets": F.frame(tables(checks=3.0))},
                                 {"sixteen-targets": tables(checks=3.0), "one-target": one})
    assert raised["adapt_free_count"] == 0 and raised["adapt_raised_text"].startswith("PEM-OLH (3.0)")


def test_claims_hold_on_data_that_says_so(tmp_path):
    one = tables(reps=3, n=10**6, base={k: 0.01 for k in BASE})
    store = store_with(tmp_path, figures={F.NAMES["sixteen-targets"]: F.frame(tables()),
                                          F.NAMES["one-target"]: F.frame(one, live_of(one))})
    for claim in ("malicious-adaptive-one-each", "malicious-adaptive-defence", "malicious-adaptive-one-target",
                  "malicious-adaptive-rerun"):
        assert decide(claim, store)["verdict"] == "reproduced", claim


def test_claims_fail_on_data_that_says_otherwise(tmp_path):
    one = tables(reps=3, n=10**6, base={k: 0.03 for k in BASE}, defence=2.0)  # 3 %, and a defence that doubles it
    store = store_with(tmp_path, figures={F.NAMES["sixteen-targets"]: F.frame(tables(checks=2.0)),
                                          F.NAMES["one-target"]: F.frame(one, live_of(one, scale=1.3))})
    for claim in ("malicious-adaptive-one-each", "malicious-adaptive-defence", "malicious-adaptive-one-target",
                  "malicious-adaptive-rerun"):
        assert decide(claim, store)["verdict"] == "not reproduced", claim
