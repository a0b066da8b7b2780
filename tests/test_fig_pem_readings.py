"""Chapter 03's figure of one round under each reading of eq. (5) against the model's Monte-Carlo
(ldp.book.chapters.c03_pem.pem_readings)."""
import numpy as np
import pytest
from matplotlib.collections import LineCollection

from ldp import analysis
from ldp.analysis import montecarlo
from ldp.book.chapters.c03_pem import pem_readings as F

from figtools import page_ready, titles


@pytest.fixture(scope="module")
def mc():
    f = analysis.zipf_frequencies(1000, 1.0)[:8]
    p, q = analysis.olh_pq(1.0)
    return montecarlo.readings_monte_carlo(f, 100_000, p, q, [(1, 4, 80), (3, 2, 80)], rng=np.random.SeedSequence(3))


def test_frame_is_the_monte_carlo_with_two_standard_errors(mc):
    data = F.frame(mc)
    assert len(data) == len(mc) and list(data.panel.unique()) == ["a", "b"] and "se" not in data.columns
    assert np.array_equal(data.monte_carlo.to_numpy(), mc.monte_carlo.to_numpy())
    assert np.array_equal(data.monte_carlo_errorbar.to_numpy(), 2 * mc.se.to_numpy())


def test_draw(mc):
    fig = F.draw(F.frame(mc))
    page_ready(fig)
    assert titles(fig) == ["(a) η = 1\n|D_i| = 16, n/4", "(b) η = 3\n|D_i| = 64, n/2"]
    ranges = [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection)]
    ys = np.concatenate([seg[:, 1] for c in ranges for seg in c.get_segments()])
    assert ranges and ys.min() >= 0 and ys.max() <= 1, "error bars leave [0, 1]"
    assert "Monte-Carlo of the model (± 2 SE)" in [t.get_text() for t in fig.legends[0].get_texts()]
