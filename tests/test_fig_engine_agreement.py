"""Chapter 04's engine-agreement figure, the two engines' supports and F1
(ldp.book.chapters.c04_count_engine.engine_agreement).

The records come from ``ldp.book.chapters.c04_count_engine.compute`` (its own tests are in
test_experiments_chapters.py);
here they are a few real runs of both engines, so the figure draws what the chapter draws.
"""
import numpy as np
import pytest

import ldp
from ldp.book.chapters.c04_count_engine import engine_agreement as F
from ldp.book.chapters.c04_count_engine.compute import Probes, engine_records, support_table

from figtools import page_ready, titles


@pytest.fixture(scope="module")
def runs():
    data = ldp.datasets.zipf(3_000, m=16, rng=1)
    protocols = {"PEM": ldp.PEM(2.0, 4, 16, query_limit=1024), "SPM": ldp.SPM(6.0, 4, 16, query_limit=1024),
                 "MCM": ldp.MCM(3.0, 4, 16, query_limit=1024)}
    probes = Probes.choose(protocols, data, data.top(4))
    records, _ = engine_records(protocols, probes, n_runs=4, seed_seq=np.random.SeedSequence(0))
    return records, probes.theory(protocols)


def test_frame_holds_densities_and_distribution_functions(runs):
    data = F.frame(*runs)
    assert list(data.columns) == ["panel", "protocol", "series", "x", "x_right", "y", "runs"]
    ecdf = data[data.panel == "d"]
    assert np.allclose(ecdf.groupby(["protocol", "series"]).y.max(), 1.0)
    hist = data[(data.panel != "d") & data.x_right.notna()]
    mass = (hist.y * (hist.x_right - hist.x)).groupby([hist.panel, hist.series]).sum()
    assert np.allclose(mass, 1.0)
    normal = data[data.series.str.startswith("normal")]
    assert set(normal.panel) == {"a", "b"}  # MCM's law is not known in closed form: no normal curve


def test_draw(runs):
    fig = F.draw(F.frame(*runs))
    page_ready(fig)
    assert [t.split(",")[0] for t in titles(fig)] == ["(a) PEM", "(b) SPM", "(c) MCM", "(d) F1 over 4 runs per engine"]


def test_support_display(runs):
    records, theory = runs
    tests: list = []
    shown = F.support_display(support_table(records, theory, tests))
    assert list(shown.columns[:2]) == ["protocol", "support"] and "theory: mean ± sd" in shown.columns
    assert (shown.loc[shown.protocol == "MCM", "theory: mean ± sd"] == "–").all()
