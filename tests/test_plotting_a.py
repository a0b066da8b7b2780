"""The plotting and summary functions of chapters 01, 02 and 04 (ldp.plotting.oracles, .methods, .engines).

Each figure function returns ``(fig, data)``: ``data`` must be exactly the rows
it was given (what ``save_figure`` writes as the CSV), every text at least
9 pt, the legend outside every panel, the figure at the book's width.
"""
from __future__ import annotations

import math
from fractions import Fraction

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldp
from ldp.analysis import olh_variance
from ldp.plotting import (
    FONT_SIZE,
    FULL_WIDTH,
    Probes,
    all_methods_bars,
    all_methods_protocols,
    all_methods_values,
    compact_table,
    engine_agreement_frame,
    format_number,
    group_support_moments,
    oracle_example_values,
    oracle_examples,
    plot_all_methods,
    plot_engine_agreement,
    plot_variance_dprime,
    share,
    use_style,
    variance_dprime_frame,
)
from ldp.reporting.results import EXTRA_TABLES, ResultStore


@pytest.fixture(autouse=True)
def _style():
    use_style()
    yield
    plt.close("all")


def _check_page_ready(fig, data, given):
    """Data equals the input's rows; fonts >= 9 pt; the figure legend lies outside every axes; full width."""
    pd.testing.assert_frame_equal(data, given)
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    assert sizes and min(sizes) >= FONT_SIZE
    assert fig.get_size_inches()[0] == pytest.approx(FULL_WIDTH)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), "legend overlaps a panel"


# ------------------------------------------------------------------------------------------- chapter 01
def _olh_var_dprime(eps, d_prime, n):
    e = math.exp(eps)
    return n * (d_prime + e - 1) ** 2 / ((d_prime - 1) * (e - 1) ** 2)


def test_variance_dprime_figure():
    frame = variance_dprime_frame(_olh_var_dprime)
    fig, data = plot_variance_dprime(frame)
    _check_page_ready(fig, data, frame)
    a = frame[frame.panel == "a"]
    # the curve's minimum is at d' = e^eps + 1, where the ratio to eq. (3) is 1
    for _eps, grp in a[a.series.str.startswith("OLH")].groupby("epsilon"):
        assert grp.y.min() >= 1 - 1e-12 and grp.y.min() < 1.01
    ceil = a[a.series == "d' = ceil(e^eps + 1)"]
    assert np.allclose(ceil.y, [olh_variance(e) / olh_variance(e, d_prime="real") for e in ceil.epsilon])


def test_oracle_examples_match_exact_arithmetic():
    ex = oracle_examples()
    assert list(ex.columns) == list(EXTRA_TABLES["01_frequency_oracles"]["oracle-examples"][0])
    value = dict(zip(ex.quantity, ex.value))
    assert value["grr_p_eps_ln49_d65536"] == pytest.approx(float(Fraction(49, 65584)), rel=1e-12)
    assert value["grr_var_per_n_eps_ln49_d65536"] == pytest.approx(float(Fraction(65583, 2304)), rel=1e-12)
    assert value["olh_std_per_sqrt_n_e10"] == pytest.approx(math.sqrt(40 / 81), rel=1e-12)
    assert value["olh_min_population_e10_f0.001"] == pytest.approx((3 / 1e-3) ** 2 * 40 / 81, rel=1e-12)
    assert value["olh_min_population_e10_f0.001_std0.7"] == pytest.approx(4_410_000, rel=1e-12)
    assert value["olh_min_population_ratio_half_f"] == pytest.approx(4.0, rel=1e-12)
    quoted = oracle_example_values()
    assert quoted["oracles_ex2_nmin"] == math.ceil(value["olh_min_population_e10_f0.001"])
    assert quoted["oracles_ex2_dprime"] == 11


def test_oracle_examples_table_saved_by_the_quick_build():
    store = ResultStore.for_build("quick")
    if not (store.figures / "fig-oracles-variance-dprime.csv").exists():
        pytest.skip("chapter 01 has not run in quick mode here (make book QUICK=1)")
    saved = store.load("01_frequency_oracles", "oracle-examples")
    pd.testing.assert_frame_equal(saved.reset_index(drop=True), oracle_examples(), rtol=1e-12)


# ------------------------------------------------------------------------------------------- chapter 02
def test_all_methods_figure_from_the_plans():
    protocols = all_methods_protocols(2.0, 16, query_limit=2**20)
    bars = all_methods_bars(protocols, 6_400)
    fig, data = plot_all_methods(bars, protocols, 6_400)
    _check_page_ready(fig, data, bars)
    assert (bars.bit_start >= 0).all() and (bars.bit_stop <= 64).all() and (bars.bit_start < bars.bit_stop).all()
    values = all_methods_values(protocols, 6_400, 2**20)
    assert [values[f"existing_fig_{m}_groups"] for m in ("strawman", "spm", "mcm", "pem")] == [4, 6, 64, 4]
    segs = bars[bars.bar == "segment reported"]
    assert set(segs[segs.method == "Strawman"].bit_stop - segs[segs.method == "Strawman"].bit_start) == {16}
    assert len(segs[segs.method == "SPM"]) == 2 * 6  # each pair group reports two segments
    assert (bars[bars.method == "MCM"].channels.dropna() == protocols["MCM"].channels).all()


@pytest.mark.parametrize(("eps_q", "eps", "text"), [(1, 3, "ε/3"), (2, 2, "ε"), (4, 6, "2/3ε"), (1, 2, "ε/2")])
def test_share(eps_q, eps, text):
    assert share(eps_q, eps) == text


# ------------------------------------------------------------------------------------------- chapter 04
def test_group_support_moments_is_the_total_variance_of_a_hypergeometric_mixture():
    """w in {p, q} with K holders: I = Bin(X, p) + Bin(N - X, q), X ~ Hypergeometric(n, K, N)."""
    n, K, N, p, q = 500, 37, 120, 0.5, 1 / 5
    w = np.r_[np.full(K, p), np.full(n - K, q)]
    mean, var = group_support_moments(w, N)
    X = stats.hypergeom(n, K, N)
    assert mean == pytest.approx(N * (K * p + (n - K) * q) / n, rel=1e-12)
    exact = (X.mean() * p * (1 - p) + (N - X.mean()) * q * (1 - q)) + (p - q) ** 2 * X.var()
    assert var == pytest.approx(exact, rel=1e-12)


def test_engine_agreement_figure_and_probes():
    data = ldp.datasets.zipf(3_000, m=16, rng=1)
    agree = {"PEM": ldp.PEM(2.0, 4, 16, query_limit=1024), "SPM": ldp.SPM(3.0, 4, 16, query_limit=1024),
             "MCM": ldp.MCM(3.0, 4, 16, query_limit=1024)}
    probes = Probes.choose(agree, data, data.top(4))
    theory = probes.theory(agree)
    rng = np.random.default_rng(0)
    records = {}
    for name, P in agree.items():
        for engine in ("protocol", "counts"):
            src = P.source(data, rng=rng, engine=engine)
            sup = np.array([probes.supports(name, P, src) for _ in range(2)], dtype=float)
            records[name, engine] = (sup + rng.normal(size=sup.shape), rng.choice([0.5, 0.75, 1.0], 12))
    frame = engine_agreement_frame(records, theory)
    fig, data_out = plot_engine_agreement(frame)
    _check_page_ready(fig, data_out, frame)
    ecdf = frame[frame.panel == "d"]
    assert np.allclose(ecdf.groupby(["protocol", "series"]).y.max(), 1.0)
    hist = frame[(frame.panel != "d") & frame.x_right.notna()]
    widths = hist.x_right - hist.x
    mass = (hist.y * widths).groupby([hist.panel, hist.series]).sum()
    assert np.allclose(mass, 1.0)  # densities


# ------------------------------------------------------------------------------------------- tables
@pytest.mark.parametrize(("value", "text"), [(4222.6425, "4,223"), (0.000123456, "0.000123"), (3.16e7, "3.16e+07"),
                                             (np.int64(1048576), "1,048,576"), (float("nan"), "–"), (0.0, "0"),
                                             (-0.2220, "-0.222"), (True, "True"), ("ε/3", "ε/3")])
def test_format_number(value, text):
    assert format_number(value) == text


def test_compact_table_flattens_headers_and_hides_the_index():
    frame = pd.DataFrame([[1.23456, 2]], columns=pd.MultiIndex.from_tuples([("F1", "mean"), ("runs", "")]))
    html = compact_table(frame).to_html()
    assert "F1 mean" in html and ">1.23<" in html and "nan" not in html.lower()
