"""Chapter 06's engine check, the count engine's runs against one protocol-engine run
(ldp.book.chapters.c06_evaluation.eval_engines)."""
import numpy as np
import pandas as pd

from ldp.book.chapters.c06_evaluation import eval_engines as F

from figtools import page_ready

RUNS = pd.DataFrame([{"protocol": p, "f1": f, "ncr": f} for p in ("PEM", "MCM") for f in (0.5, 0.6, 0.7)])
CHECK = pd.DataFrame({"f1 protocol": [0.6, 0.1], "ncr protocol": [0.6, 0.1]}, index=["PEM", "MCM"])


def test_frame_is_the_runs_jittered_by_the_given_rng():
    a = F.frame(RUNS, CHECK, ["PEM", "MCM"], rng=np.random.default_rng(1))
    b = F.frame(RUNS, CHECK, ["PEM", "MCM"], rng=np.random.default_rng(1))
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 2 * (len(RUNS) + 2) and list(a.columns) == ["panel", "metric", "protocol", "engine", "run", "x",
                                                                 "y"]
    counts = a[a["engine"] == "counts"]
    assert (np.abs(counts["x"] - counts["protocol"].map({"PEM": 0, "MCM": 1})) <= 0.18).all()
    assert a.loc[a["engine"] == "protocol", "y"].tolist() == [0.6, 0.1, 0.6, 0.1]


def test_draw():
    fig = F.draw(F.frame(RUNS, CHECK, ["PEM", "MCM"], rng=np.random.default_rng(1)), ["PEM", "MCM"], title="t")
    page_ready(fig)
    fig.canvas.draw()
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["PEM", "MCM"]  # one row per protocol
    assert not any(t.get_text() for t in fig.axes[1].get_yticklabels())
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["counts engine (runs)", "protocol engine (one run)"]
