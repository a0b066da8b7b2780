"""Chapter 03's figure of PEM's optimizer and the claims of section 4.3 (ldp.book.chapters.c03_pem.pem_optimizer)."""
import json

import pytest

from ldp import analysis
from ldp.book.chapters.c03_pem import pem_optimizer as F
from ldp.book.claims import verdicts as V

from figtools import decide, page_ready, store_with, titles

N = 100_000


@pytest.fixture(scope="module")
def inputs():
    m, ks, eps = 16, (4, 8), (1.0, 2.0)
    rule = {k: analysis.pem_default_config(k, m, query_limit=2**10) for k in ks}
    opt = {(k, e): analysis.optimize_pem(e, k, m, n=N, query_limit=2**10) for k in ks for e in eps}
    return opt, rule, m


def test_frame(inputs):
    opt, rule, m = inputs
    frame = F.frame(opt, rule, m=m, n=N, eta_max=8)
    assert list(frame.columns) == ["panel", "k", "metric", "epsilon", "layout", "eta", "etas", "predicted",
                                   "predicted_paper", "over_query_limit"]
    stars = frame[frame.layout == F.CHOICE]
    assert len(stars) == 2 * len(opt) and not stars.over_query_limit.any()  # the optimizer respects the limit
    for (k, e), c in opt.items():
        assert stars[(stars.k == k) & (stars.epsilon == e) & (stars.metric == "f1")].predicted.iloc[0] == c.predicted_f1
    assert (frame.over_query_limit == (frame.eta > frame.k.map({k: c.etas[0] for k, c in rule.items()}))).all()
    assert frame.predicted.between(0, 1).all()


def test_draw(inputs):
    opt, rule, m = inputs
    fig = F.draw(F.frame(opt, rule, m=m, n=N, eta_max=8), m=m)
    page_ready(fig)
    assert titles(fig) == ["(a) F1, k = 4 (γ = 2)", "(b) F1, k = 8 (γ = 3)", "(c) NCR, k = 4 (γ = 2)",
                           "(d) NCR, k = 8 (γ = 3)"]


def test_claims_compare_the_optimizer_with_the_rule(inputs, tmp_path):
    opt, rule, m = inputs
    store = store_with(tmp_path, figures={F.NAME: F.frame(opt, rule, m=m, n=N, eta_max=8)},
                       parameters={"03_pem": {"m_bits": m}})
    rounds = decide("s4-opt-rounds", store)
    assert rounds["numbers"]["points"] == len(opt) and rounds["verdict"] in ("reproduced", "partly reproduced",
                                                                               "not reproduced")
    gamma = decide("s4-opt-gamma", store)  # the setting m_bits = 64 is not this store's 16: not covered
    assert gamma["verdict"] == "not testable here" and not gamma["covered"]
    # Observation 1 is decided on the paper's N[i] (eq. (5) as printed): this small setting's one-bit rounds
    # (|D_i| = 2k) rate too high there; the optimizer's lower N_j, the other reading, orders them as the paper says
    obs = decide("s4-observation-1", store)
    assert obs["verdict"] == "not reproduced"
    assert [s["verdict"] for s in json.loads(obs["sensitivity"])] == ["reproduced"]
    # its cause: the exact model's steps down (infinitely many standard errors) and the curves rising under N_j
    n = obs["numbers"]
    assert obs["cause_class"] == "genuine" and json.loads(obs["cause_numbers"]) == {"gap": float("inf")}
    assert "∞ standard errors" in obs["cause"] and f"{n['series'] - n['monotone']} of {n['series']}" in obs["cause"]
    assert f"N_j, {n['series']} rise" in obs["cause"]


def _curves(inputs, **shift):
    """The figure's frame with made-up values: ``predicted_paper`` of every balanced layout replaced by a curve
    rising with eta (``shift["drop"]``: minus that at eta = 1 of each curve's start), and the optimizer's star
    ``shift["gap"]`` above the rule's configuration."""
    opt, rule, m = inputs
    f = F.frame(opt, rule, m=m, n=N, eta_max=8)
    bal = f["layout"] == "balanced"
    f.loc[bal, "predicted_paper"] = 0.1 + 0.05 * f.loc[bal, "eta"] - shift.get("drop", 0.0) * (f.loc[bal, "eta"] == 1)
    for _, grp in f.groupby(["k", "epsilon", "metric"]):
        rule_f1 = grp[(grp.layout == "leftover") & ~grp.over_query_limit].sort_values("eta")["predicted"].iloc[-1]
        f.loc[grp.index[grp.layout == F.CHOICE], "predicted"] = rule_f1 + shift.get("gap", 0.0)
    return f


@pytest.mark.parametrize(("drop", "verdict"), [(0.0, "reproduced"), (-0.2, "not reproduced")])
def test_observation_1_on_made_up_curves(inputs, tmp_path, drop, verdict):
    """Reproduced when the paper's model rises with eta on every curve; not when one-bit rounds score highest."""
    store = store_with(tmp_path, figures={F.NAME: _curves(inputs, drop=drop)}, parameters={"03_pem": {"m_bits": 16}})
    assert decide("s4-observation-1", store)["verdict"] == verdict


@pytest.mark.parametrize(("gap", "verdict"), [(0.0, "reproduced"), (0.009, "reproduced"), (0.02, "partly reproduced"),
                                              (0.05, "not reproduced")])
def test_max_eta_within_the_margin_of_practical_equivalence(inputs, tmp_path, gap, verdict):
    """'eta maximal' holds when the rule's configuration predicts an F1 within EQUIVALENT_F1 of the optimum's."""
    store = store_with(tmp_path, figures={F.NAME: _curves(inputs, gap=gap)}, parameters={"03_pem": {"m_bits": 16}})
    row = decide("s4-opt-max-eta", store)
    assert row["verdict"] == verdict and row["numbers"]["tol"] == V.EQUIVALENT_F1
    assert row["numbers"]["max_abs_diff"] == pytest.approx(gap, abs=1e-12)
    exact = json.loads(row["sensitivity"])[0]  # the other reading: the optimizer's eta exactly the rule's
    assert exact["reading"].startswith("exact") and exact["verdict"] in ("reproduced", "partly reproduced",
                                                                         "not reproduced")


def test_a_very_small_eta_costs_a_quarter_of_the_utility(inputs, tmp_path):
    """Made-up curves: a fall of 40 % at eta = 1 deteriorates 'a lot' (A_LOT = 1/4); a fall of 10 % does not."""
    for drop, verdict in ((0.0, "not reproduced"), (0.4, "reproduced")):
        f = _curves(inputs)
        within = (f["layout"] == "balanced") & ~f["over_query_limit"]
        top = f[within].groupby(["k", "metric", "epsilon"])["predicted_paper"].transform("max")
        first = within & (f["eta"] == 1)
        f.loc[first, "predicted_paper"] = (1 - max(drop, 0.1)) * top[first]
        store = store_with(tmp_path / verdict, figures={F.NAME: f}, parameters={"03_pem": {"m_bits": 16}})
        row = decide("s43-small-eta", store)
        assert row["verdict"] == verdict and row["numbers"]["points"] == len(inputs[0]) * 2
        if verdict != "reproduced":  # its cause counts the curves that keep more than three quarters at eta = 1
            assert row["cause_class"] == "genuine" and json.loads(row["cause_numbers"])["gap"] == row["numbers"][
                "losses"] and f"more than 75% of the best at {row['numbers']['losses']} of" in row["cause"]
    # the real curves: with the optimizer's lower N_j (the other reading) one-bit rounds lose much more
    store = store_with(tmp_path / "real", figures={F.NAME: F.frame(*inputs[:2], m=inputs[2], n=N, eta_max=8)},
                       parameters={"03_pem": {"m_bits": 16}})
    lower = json.loads(decide("s43-small-eta", store)["sensitivity"])[0]
    assert lower["reading"].startswith("eq. (5) with the optimizer's competitors")
