"""Chapter 01's figure, OLH's variance against d' and GRR against OLH
(ldp.book.chapters.c01_frequency_oracles.oracle_variance)."""
import math

import numpy as np
import pytest

from ldp.analysis import olh_variance
from ldp.book.chapters.c01_frequency_oracles import oracle_variance as F

from figtools import decide, page_ready, store_with, titles


def olh_var_dprime(eps, d_prime, n):
    e = math.exp(eps)
    return n * (d_prime + e - 1) ** 2 / ((d_prime - 1) * (e - 1) ** 2)


@pytest.fixture(scope="module")
def frame():
    return F.frame(olh_var_dprime)


def test_frame_has_its_minimum_at_e_eps_plus_one(frame):
    a = frame[frame.panel == "a"]
    for _eps, grp in a[a.series.str.startswith("OLH")].groupby("epsilon"):  # the ratio to eq. (3) is 1 there
        assert grp.y.min() >= 1 - 1e-12 and grp.y.min() < 1.01
    ceil = a[a.series == "d' = ceil(e^eps + 1)"]
    assert np.allclose(ceil.y, [olh_variance(e) / olh_variance(e, d_prime="real") for e in ceil.epsilon])
    assert list(frame.columns) == ["panel", "series", "epsilon", "x", "y"]


def test_draw(frame):
    fig = F.draw(frame)
    page_ready(fig)
    assert titles(fig) == ["(a) OLH variance against $d'$", "(b) GRR against OLH (dashed)"]


def test_claims_read_the_figure(frame, tmp_path):
    store = store_with(tmp_path, figures={F.NAME: frame})
    assert decide("s2-olh-dprime-optimal", store)["verdict"] == "reproduced"
    assert decide("s2-grr-vs-olh", store)["verdict"] == "reproduced"
    dip = frame.copy()
    dip.loc[(dip.panel == "a") & dip.series.str.startswith("OLH"), "y"] *= 0.9  # below the optimum: refuted
    row = decide("s2-olh-dprime-optimal", store_with(tmp_path / "dip", figures={F.NAME: dip}))
    assert row["verdict"] != "reproduced" and row["numbers"]["losses"] > 0
