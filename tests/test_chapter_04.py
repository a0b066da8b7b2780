"""Chapter 04's computations (ldp.book.chapters.c04_count_engine.compute): the setting and the shared group
assignment as the text quotes them, the tests' false alarms, the timing table's numbers."""
import numpy as np
import pandas as pd
import pytest

import ldp
from ldp import datasets
from ldp.book.chapters.c04_count_engine import compute as C


@pytest.fixture(scope="module")
def data():
    return datasets.zipf(3_000, m=16, rng=5)


def test_setting_findings(data):
    out = C.setting_findings(data, k=4, n_runs=7, query_limit=256)
    assert out == dict(engine_runs=7, engine_n=3_000, engine_m=16, engine_k=4, engine_query_limit=256)


def test_both_engines_share_the_assignment_and_the_text_counts_it(data):
    P = ldp.SPM(3.0, 4, 16, query_limit=256, final_fraction=0.1)
    table = C.assignment_check(P, data, seed=11)
    assert (table["users (protocol engine)"] == table["users (count engine)"]).all()
    assert table["users (count engine)"].sum() == data.n and (table["distinct values held"] <= data.n_distinct).all()
    out = C.assignment_findings(table, data)
    assert out == dict(engine_assign_groups=P.plan(data.n, rng=0).n_groups, engine_assign_distinct=data.n_distinct)


def test_agreement_values_count_the_false_alarms():
    f1 = pd.DataFrame({"protocol": ["PEM", "SPM"], "Mann-Whitney p": [0.5, 0.04], "chi-square p": [0.7, 0.2],
                       "mean F1 (protocol)": [0.9, 0.6], "mean F1 (counts)": [0.91, 0.58]})
    tests = [("a", 0.5), ("b", 0.0004), ("c", 0.02), ("d", 0.9)]
    out = C.agreement_values(f1, tests, 0.001)
    assert (out["engine_n_tests"], out["engine_n_rejected"], out["engine_min_p_test"]) == (4, 1, "b")
    assert out["engine_familywise"] == pytest.approx(0.004) and out["engine_min_p"] == 0.0004
    assert out["engine_f1_mw_spm"] == 0.04 and out["engine_f1_mean_counts_pem"] == 0.91


def test_speed_values_per_protocol_and_the_setting(data):
    table = pd.DataFrame({"protocol": ["PEM", "MCM"], "count engine (ms)": [2.0, 4.0],
                          "protocol engine (s)": [0.5, 2.0], "speed-up": [250.0, 500.0]})
    out = C.speed_values(table, data, epsilon=4.0, k=16, query_limit=2**16, reps=5)
    assert (out["engine_speed_counts_ms_mcm"], out["engine_speed_protocol_s_pem"]) == (4.0, 0.5)
    assert out["engine_speed_ratio_mcm"] == 500.0 and "engine_speed_ratio_spm" not in out
    assert (out["engine_speed_n"], out["engine_speed_m"], out["engine_speed_eps"]) == (3_000, 16, 4.0)
    assert (out["engine_speed_k"], out["engine_speed_limit"], out["engine_speed_reps"]) == (16, 2**16, 5)
    assert isinstance(out["engine_speed_n"], int) and np.isfinite(out["engine_speed_eps"])
