"""Chapter 02's computations (ldp.book.chapters.c02_existing_methods.compute): Figure 1's numbers, the
configurations in parts with their settings, one run per protocol and its steps."""
import numpy as np
import pytest

from ldp import datasets
from ldp.book.chapters.c02_existing_methods import all_methods
from ldp.book.chapters.c02_existing_methods import compute as C


def test_figure1_findings():
    protocols = all_methods.protocols(2.0, 16, query_limit=2**20)
    out = C.figure1_findings(protocols, 6_400, query_limit=2**20)
    assert out["existing_fig_mcm_channels"] == 64  # ceil(16^1.5)
    assert out["existing_fig_pem_queries"] > out["existing_query_limit"] == 2**20  # 16-bit steps: over the limit
    assert out["existing_fig_strawman_product"] == np.prod(protocols["Strawman"].top_sizes) >= 16


@pytest.fixture(scope="module")
def configurations():
    populations = {32: 20_000, 24: 5_000}
    table, protocols = C.configuration_table(2.0, 4, populations, query_limit=2**12, final_fraction=0.1)
    return populations, table, protocols


def test_configuration_parts_split_by_value_length(configurations):
    populations, table, _ = configurations
    parts = list(C.configuration_parts(table))
    assert [c for c, _ in parts] == ["m = 32 bits, n = 20,000 users", "m = 24 bits, n = 5,000 users"]
    assert all("m" not in p.columns and "n" not in p.columns and len(p) == 6 for _, p in parts)
    assert sum(len(p) for _, p in parts) == len(table)


def test_configuration_values_per_length_and_the_settings(configurations):
    populations, _, protocols = configurations
    out = C.configuration_values(protocols, populations, {32: "a", 24: "b"}, final_fraction=0.1)
    assert (out["existing_n_a"], out["existing_n_b"]) == (20_000, 5_000)
    assert (out["existing_k"], out["existing_epsilon"], out["existing_final_fraction_pct"]) == (4, 2.0, 10.0)
    assert out["existing_mcm_channels"] == 8 and out["existing_mcm_channels_n15"] == pytest.approx(20_000 ** 1.5)
    for m in populations:
        spm = protocols[m, "SPM"]
        assert out[f"existing_spm_groups_m{m}"] == len(spm.pairs) == spm.segments * (spm.segments - 1) // 2
        assert out[f"existing_strawman_cmin_m{m}"] <= out[f"existing_strawman_cmax_m{m}"]


def test_a_demonstration_run_and_its_steps():
    data = datasets.exponential(5_000, m=24, rng=1)
    protocols = C.protocol_variants(2.0, 4, 24, query_limit=2**12, final_fraction=0.1)
    runs, seconds = C.demo_runs(protocols, data, seed_seq=np.random.SeedSequence(2), engine="counts")
    true_top = data.top(4)
    steps = C.steps_table(runs, true_top)
    assert list(steps.columns)[0] == "protocol" and list(dict.fromkeys(steps["protocol"])) == list(protocols)
    for name, r in runs.items():  # the steps lose exactly the top-k values the run does not output
        lost = steps.loc[steps["protocol"] == name, "top-k lost here"].sum()
        assert lost == 4 - np.isin(true_top, r.heavy_hitters).sum()
    values = C.demo_values(C.demo_summary(runs, true_top), runs, seconds, data)
    assert values["existing_demo_n"] == 5_000 and 0 <= values["existing_demo_f1_pem"] <= 1
