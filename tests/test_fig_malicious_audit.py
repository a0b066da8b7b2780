"""Chapter 09's audit figure (ldp.book.chapters.c09_malicious_users.malicious_audit): frame, drawing and claims.

The audit's frames are made up here (a client that keeps its budget, and one that spends more than it claims),
plus one small real audit of the deployed client to check that the frame takes ldp.attacks.audit_grid's output.
"""
import math

import numpy as np
import pandas as pd
import pytest

from ldp import attacks
from ldp.book.chapters.c09_malicious_users import compute as C
from ldp.book.chapters.c09_malicious_users import malicious_audit as F
from ldp.book.plotting.narrow import NARROW_WIDTH, one_column

from figtools import decide, page_ready, store_with, titles

KINDS = {"PEM-OLH": ["prefix", "value"], "PEM-CMS": ["prefix", "value"], "TreeHist-HR": ["prefix+value"],
         "SFP-FLH": ["fragment+value"], "SFP-Hashtogram": ["fragment+value"],
         "SPM-OLH": ["prefix+segment+value", "segment+segment+value"]}


def audit(epsilons=(0.5, 1.0, 2.0, 4.0), n=20_000, spend=0.0, alpha=1e-6, commit=None):
    """A made-up audit: the event's probability 0.4 under v0 and 0.4 e^-(eps + spend) under v1, counts at their
    expectation; ``spend`` > 0 is a client that spends more than it claims."""
    rows = []
    for label, kinds in KINDS.items():
        for g, kind in enumerate(kinds):
            for e in epsilons:
                k0, k1 = round(0.4 * n), round(0.4 * n * math.exp(-(e + spend)))
                lo, hi = attacks.audit.cp_lower(k0, n, alpha / 2), attacks.audit.cp_upper(k1, n, alpha / 2)
                rows.append({"protocol": label, "oracle": label.split("-")[1], "group": g, "kind": kind,
                             "questions": kind.count("+") + 1, "epsilon": e, "n": n, "k0": k0, "k1": k1,
                             "eps_hat": math.log(k0 / k1), "eps_lower": math.log(lo / hi), "alpha": alpha})
    out = pd.DataFrame(rows)
    return out if commit is None else out.assign(commit=commit, machine="m", command="c")


def test_frame_keeps_both_audits_and_their_ratios():
    data = F.frame(audit(n=5000), audit(epsilons=(0.25, 8.0), n=200_000, commit="abc1234"))
    assert list(data.columns[:4]) == ["panel", "source", "family", "protocol"]
    assert {"eps_hat", "eps_lower", "hat_ratio", "lower_ratio", "x", "commit"} <= set(data.columns)
    assert set(data.loc[data["source"] == "this build", "panel"]) == set("abcd")
    assert set(data.loc[data["source"] == "benchmark", "panel"]) == set("efgh")
    assert set(data.loc[data["source"] == "benchmark", "commit"]) == {"abc1234"}
    np.testing.assert_allclose(data["hat_ratio"], data["eps_hat"] / data["epsilon"])
    assert (data["lower_ratio"] >= 0).all() and (data["lower_ratio"] <= data["hat_ratio"]).all()
    np.testing.assert_allclose(data["x"] / data["epsilon"], 2 ** (0.07 * (data["oracle"].map(
        {o: i for i, o in enumerate(F.ORACLES)}) - 2)))
    assert len(F.frame(audit(), None)) == len(audit())


def test_frame_takes_a_real_audit_of_the_client():
    real = attacks.audit_grid({"PEM-OLH": attacks.audited_protocols()["PEM-OLH"]}, [6.0], n=300)
    data = F.frame(real)
    assert list(data["kind"]) == ["prefix", "value"] and (data["epsilon"] == 6.0).all()  # above the ceiling of 4
    assert (data["eps_lower"] <= 6.0).all() and set(data["commit"]) == {"this build"}


def test_draw():
    fig = F.draw(F.frame(audit(), audit(epsilons=(0.25, 1.0, 8.0), n=200_000, commit="abc1234")))
    page_ready(fig)
    assert titles(fig) == ["(a) PEM", "(b) TreeHist", "(c) SFP", "(d) SPM", "(e) PEM", "(f) TreeHist", "(g) SFP",
                           "(h) SPM"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["OLH", "HR", "Hashtogram", "CMS", "FLH", "nominal ε", *[k for k in F.KIND_MARKERS]]
    page_ready(F.draw(F.frame(audit())))  # this build alone: one row of panels


def test_phone_layout_labels_every_panel():
    fig = F.draw(F.frame(audit(), audit(epsilons=(0.25, 1.0, 8.0), n=200_000, commit="abc1234")))
    with one_column(fig):
        page_ready(fig, width=NARROW_WIDTH)
        labels = [ax.get_ylabel() for ax in fig.axes]
        assert labels == ["this build: ε̂ / ε"] * 4 + ["benchmark: ε̂ / ε"] * 4
    assert [ax.get_ylabel() for ax in fig.axes] == ["this build: ε̂ / ε", "", "", "", "benchmark: ε̂ / ε", "", "", ""]


def test_claims(tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(audit(), audit(n=200_000, commit="abc"))})
    assert decide("malicious-audit-bound", store)["verdict"] == "reproduced"
    assert decide("malicious-audit-tight", store)["verdict"] == "reproduced"
    assert set(F.definition_points(store.figure(F.NAME))["point"]) == {"OLH", "CMS", "HR", "FLH", "Hashtogram"}
    # a client that spends 0.3 more than it claims: its lower bounds pass ε at 200,000 reports, and ε̂ is off
    leaky = store_with(tmp_path / "leaky", figures={F.NAME: F.frame(audit(), audit(n=200_000, spend=0.3,
                                                                                   commit="abc"))})
    assert decide("malicious-audit-bound", leaky)["verdict"] == "not reproduced"
    assert decide("malicious-audit-tight", leaky)["verdict"] == "not reproduced"
    # one that spends less than it claims keeps Definition 1 but is not tight
    shy = store_with(tmp_path / "shy", figures={F.NAME: F.frame(audit(spend=-0.3), audit(n=200_000, spend=-0.3,
                                                                                      commit="abc"))})
    assert decide("malicious-audit-bound", shy)["verdict"] == "reproduced"
    assert decide("malicious-audit-tight", shy)["verdict"] == "not reproduced"


def test_audit_findings():
    data = F.frame(audit(n=5000), audit(epsilons=(0.25, 8.0), n=200_000, commit="abc1234"))
    out = C.audit_findings(data, seconds=12.5)
    assert (out["audit_cells"], out["audit_n"], out["audit_bench_cells"], out["audit_bench_n"]) == (36, 5000, 18,
                                                                                                    200_000)
    assert (out["audit_eps_min"], out["audit_eps_max"], out["audit_bench_eps_max"]) == (0.5, 4.0, 8.0)
    live = data[data["source"] == "this build"]
    assert out["audit_gap_max"] == (live["eps_lower"] - live["epsilon"]).max() < 0
    assert out["audit_fail"] == pytest.approx(2e-6 * 54) and out["audit_alpha"] == 1e-6
    assert out["audit_bench_commit"] == "abc1234" and out["audit_s"] == 12.5
    assert out["audit_gap_at"].startswith(("PEM", "TreeHist", "SFP", "SPM")) and "ε = " in out["audit_gap_at"]


def test_audit_sizes():
    assert C.audit_reports(True) < C.audit_reports(False) <= 20_000
