"""Chapter 03's figures, tables and the analysis helpers they draw on.

- each figure function returns ``(fig, data)`` whose data are exactly the rows of
  its input it plots, with every text at least 9 pt, error bars inside [0, 1]
  and legends outside the panels (ldp.plotting.pem);
- the Monte-Carlo helpers are reproducible from a SeedSequence and their
  summaries are what their docstrings say (ldp.analysis.montecarlo);
- Proposition 1's sufficient condition implies P1 >= P2 wherever A <= 0, and
  Lemma 1's stronger form holds (ldp.analysis.appendix);
- after the quick book build, chapter 03 has saved the ``03_pem/joint-estimator``
  table the claims read (columns as ldp.reporting.results lists them).
"""
from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from scipy.stats import norm

from ldp import analysis
from ldp.analysis import appendix, montecarlo
from ldp.plotting import FONT_SIZE, FULL_WIDTH, pem, use_style
from ldp.reporting.results import EXTRA_TABLES, ResultStore

N = 100_000


@pytest.fixture(autouse=True)
def _style():
    use_style()
    yield
    matplotlib.pyplot.close("all")


def _fonts_at_least(fig, size=FONT_SIZE):
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    assert texts
    small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < size]
    assert not small, small


def _outside(fig, legend, axes):
    fig.canvas.draw()
    box = legend.get_window_extent()
    for ax in axes:
        assert not box.overlaps(ax.get_window_extent()), "legend overlaps a panel"


@pytest.fixture(scope="module")
def readings():
    f = analysis.zipf_frequencies(1000, 1.0)[:8]
    p, q = analysis.olh_pq(1.0)
    return montecarlo.readings_monte_carlo(f, N, p, q, [(1, 4, 80), (3, 2, 80)], rng=np.random.SeedSequence(3))


def test_readings_monte_carlo_reproducible_and_consistent(readings):
    f = analysis.zipf_frequencies(1000, 1.0)[:8]
    p, q = analysis.olh_pq(1.0)
    again = montecarlo.readings_monte_carlo(f, N, p, q, [(1, 4, 80), (3, 2, 80)], rng=np.random.SeedSequence(3))
    pd.testing.assert_frame_equal(readings, again)
    assert list(readings.domain_size.unique()) == [16, 64] and len(readings) == 16
    one = readings[readings.eta == 3]
    direct = analysis.model_monte_carlo(f, N / 2, 64, 8, p, q, reps=80,
                                        rng=np.random.SeedSequence(3).spawn(2)[1])
    assert np.array_equal(one.monte_carlo.to_numpy(), direct)
    assert np.allclose(one["analysis text / lower (optimizer)"],
                       analysis.round_identification_probability(f, N / 2, 64, 8, p, q, competitors="lower"))
    table = montecarlo.readings_f1(readings)
    row = table.set_index("eta").loc[1]
    P = readings[readings.eta == 1].monte_carlo.to_numpy()
    assert row.f1_mc == pytest.approx(np.mean(P ** 4))
    with pytest.raises(TypeError, match="SeedSequence"):
        montecarlo.readings_monte_carlo(f, N, p, q, [(1, 4, 5)], rng=np.random.default_rng(1))


def test_readings_figure(readings):
    fig, data = pem.readings_figure(readings)
    assert len(data) == len(readings) and list(data.panel.unique()) == ["a", "b"]
    assert np.array_equal(data.monte_carlo.to_numpy(), readings.monte_carlo.to_numpy())
    assert np.array_equal(data.monte_carlo_errorbar.to_numpy(), 2 * readings.se.to_numpy())
    assert "se" not in data.columns
    _fonts_at_least(fig)
    bars = [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection)]
    assert bars
    for c in bars:
        ys = np.concatenate([seg[:, 1] for seg in c.get_segments()])
        assert ys.min() >= 0 and ys.max() <= 1, "error bars leave [0, 1]"
    assert fig.legends
    _outside(fig, fig.legends[0], fig.axes)
    assert fig.get_size_inches()[0] == pytest.approx(FULL_WIDTH)


@pytest.fixture(scope="module")
def optimizer_inputs():
    m, ks, eps = 16, (4, 8), (1.0, 2.0)
    rule = {k: analysis.pem_default_config(k, m, query_limit=2**10) for k in ks}
    opt = {(k, e): analysis.optimize_pem(e, k, m, n=N, query_limit=2**10) for k in ks for e in eps}
    return opt, rule, m


def test_optimizer_frame_and_figure(optimizer_inputs):
    opt, rule, m = optimizer_inputs
    frame = pem.optimizer_frame(opt, rule, m=m, n=N, eta_max=8)
    assert list(frame.columns) == ["panel", "k", "metric", "epsilon", "layout", "eta", "etas", "predicted",
                                   "over_query_limit"]
    stars = frame[frame.layout == "optimize_pem's choice"]
    assert len(stars) == 2 * len(opt)                       # one per (k, epsilon, metric)
    assert not stars.over_query_limit.any()                 # the optimizer respects the limit
    for (k, e), c in opt.items():
        s = stars[(stars.k == k) & (stars.epsilon == e) & (stars.metric == "f1")]
        assert s.predicted.iloc[0] == c.predicted_f1
    assert (frame.over_query_limit == (frame.eta > frame.k.map({k: c.etas[0] for k, c in rule.items()}))).all()
    assert frame.predicted.between(0, 1).all()
    fig, data = pem.optimizer_figure(frame, m=m)
    assert data is frame
    _fonts_at_least(fig)
    _outside(fig, fig.legends[0], fig.axes)


def test_prop1_figure():
    grid = analysis.prop1_grid(np.linspace(0.5, 8, 6), (2, 4, 8), np.geomspace(1e-3, 0.5, 5), 1e6)
    line = np.linspace(0.1, 8, 20)
    fig, data = pem.prop1_figure(grid, lemma_epsilons=line)
    cells = data[data.panel != "d"]
    assert len(cells) == len(grid)
    both = cells.astype({"g": int}).merge(grid, on=["g", "epsilon", "f"], validate="one_to_one")
    assert len(both) == len(grid) and (both.value == both.P1 - both.P2).all()
    assert len(data[data.panel == "d"]) == 3 * len(line) + 3 + 1
    assert str(data.g.dtype) == "Int64"
    _fonts_at_least(fig)
    lemma_ax = next(ax for ax in fig.axes if ax.get_legend() is not None)
    _outside(fig, lemma_ax.get_legend(), [lemma_ax])


def test_tables(optimizer_inputs):
    opt, rule, m = optimizer_inputs
    table = pem.config_table(rule, opt, N)
    assert len(table) == len(rule) * (1 + 2) and (table["g · max |D_i|"] <= 2**10).all()
    facts = pem.config_facts(rule[4])
    assert facts["queries"] == rule[4].g * max(rule[4].domain_sizes) and facts["bits"] == m - rule[4].gamma
    readings = pem.readings_table(rule, (1.0,), N)
    assert (readings["formula / paper"] <= readings["cap 1 - 1/k"] + 1e-12).all()
    assert (readings["text / paper"] >= readings["formula / paper"]).all()
    assert pem.compact(table).to_html().count("<tr") == len(table) + 1


def test_prop1_condition_is_sufficient():
    """Wherever A <= 0 and the condition holds, P1 >= P2 (Proposition 1 as the chapter proves it)."""
    rng = np.random.default_rng(11)
    eps, g, f = rng.uniform(0.05, 10, 4000), rng.integers(2, 17, 4000), 10 ** rng.uniform(-4, 0, 4000)
    A = -rng.uniform(0, 5, 4000)
    holds = appendix.prop1_condition(eps, g, f) >= 0
    assert 0.1 < holds.mean() < 1.0                         # both cases occur: the test can fail
    P1, P2 = appendix.prop1_P1(eps, g, f, 1e6, A), appendix.prop1_P2(eps, g, f, 1e6, A)
    assert np.all(P1[holds] >= P2[holds] - 1e-9 * np.abs(P2[holds]))
    # B ~ 0: the condition is Lemma 1, E(eps/g) <= E(eps)/g, which always holds
    assert np.all(appendix.prop1_condition(eps, g, np.full(4000, 1e-12)) >= 0)
    # Lemma 1's stronger form g^2 E(eps/g) <= E(eps)
    assert np.all(g**2 * appendix.lemma1_E(eps / g) <= appendix.lemma1_E(eps) * (1 + 1e-12))


def test_prop1_summary_and_identity():
    grid = analysis.prop1_grid(np.linspace(0.1, 8, 12), (2, 4, 8), np.geomspace(1e-3, 0.5, 10), 1e6)
    s = appendix.prop1_summary(grid)
    assert s["prop1_cells"] == len(grid) and s["condition_violations"] == 0
    assert s["prop1_share"] + s["prop1_fail_share"] == pytest.approx(1)
    assert s["lemma_max_strong"] <= 1 and s["lemma_share"] == 1
    fails = grid[~grid.P1_gt_P2]
    assert len(fails) and s["prop1_fail_min_eps"] == fails.epsilon.min()
    assert norm.logsf(s["prop1_fail_min_arg"]) / np.log(10) <= -s["prop1_fail_tail_digits"]  # 1 - Phi < 10^-d
    assert appendix.prop1_identity_error(grid) < 1e-9


def test_joint_estimator_simulation_small():
    sim = montecarlo.joint_estimator_simulation(2000, 60, rng=5)
    t = sim.table
    assert list(t.answers) == ["a", "b", "c", "ab", "ac", "bc", "abc"]
    assert (t.true_count == [800, 560, 520, 480, 440, 400, 320]).all()
    # 7 z-scores of unbiased estimates: |z| <= 5 has a false-alarm rate below 5e-6
    assert (t.z.abs() <= 5).all() and t.within_5se.all()
    assert sim.pair_gap < 1e-6
    again = montecarlo.joint_estimator_simulation(2000, 60, rng=np.random.SeedSequence(5))
    pd.testing.assert_frame_equal(t, again.table)


def test_joint_estimator_table_saved_by_quick_build():
    store = ResultStore.for_build("quick")
    if not store.has_figure("fig-pem-prop1"):
        pytest.skip("the quick book has not been built (make book QUICK=1)")
    assert store.has("03_pem", "joint-estimator"), "chapter 03 ran but did not save its joint-estimator table"
    table = store.load("03_pem", "joint-estimator")
    assert tuple(table.columns) == EXTRA_TABLES["03_pem"]["joint-estimator"][0]
    assert len(table) == 7 and (table.se > 0).all()
