"""Every figure's plotted data as a CSV: ``ldp.book.plotting.save_figure(data=...)`` and
``scripts/figure_data.py`` (snapshot and compare of the CSVs of two builds).

- the CSV is plain (header row, no index, no comment), exact (floats read back
  bit for bit), in a canonical row order, and byte-identical for equal tables;
  the SVG and PDF next to it carry no build time;
- a figure without its data, or with data that cannot be written faithfully, is
  an error before any file is written;
- ``compare`` passes on identical CSVs and fails, naming the column and the size
  of the difference, on changed values, rows, columns or files.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from ldp.book.plotting import FULL_WIDTH, figure_data, interval, render, save_figure, write_figure_data

ROOT = Path(__file__).resolve().parents[1]

sys.path.insert(0, str(ROOT / "scripts"))  # the command-line tool under test
import figure_data as tool  # noqa: E402  (scripts/figure_data.py)


def _table(rng=0) -> pd.DataFrame:
    """A small figure table with awkward values: shortest-repr-hostile floats, NaN, text with commas."""
    r = np.random.default_rng(rng)
    return pd.DataFrame({
        "panel": ["b", "a", "a", "b"],
        "series": ["PEM, eps/2", "SPM", "PEM, eps/2", "SPM"],
        "x": [2.0, 1.0, 1.0, 0.1 + 0.2],
        "y": r.random(4) / 3,
        "err": [np.nan, 1e-300, 2.0**-1074, 1e300],
        "runs": np.array([3, 3, 0, 7], dtype=np.int64),
    })


def _fig():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    return fig


# --------------------------------------------------------------------------- #
# save_figure / write_figure_data
# --------------------------------------------------------------------------- #
def test_save_figure_writes_csv_next_to_the_images(tmp_path: Path):
    data = _table()
    out = save_figure(_fig(), "fig-test", data=data, folder=tmp_path)
    assert set(out) == {"csv", "svg", "pdf", "narrow"}  # narrow: the phone layout, fig-test-narrow.svg
    assert all(p.parent == tmp_path and p.stem == ("fig-test-narrow" if k == "narrow" else "fig-test")
               and p.stat().st_size > 0 for k, p in out.items())
    text = out["csv"].read_text(encoding="utf-8")
    assert text.splitlines()[0] == "panel,series,x,y,err,runs"  # plain header: no comment, no index
    assert "\r" not in text and text.endswith("\n")
    back = pd.read_csv(out["csv"])
    want = figure_data(data)
    pd.testing.assert_frame_equal(back, want, check_exact=True)  # floats read back bit for bit
    assert back[["panel", "series"]].values.tolist() == [["a", "PEM, eps/2"], ["a", "SPM"],
                                                         ["b", "PEM, eps/2"], ["b", "SPM"]]
    assert list(tmp_path.glob(".*")) == []  # no temporary files left


def test_images_carry_no_build_time(tmp_path: Path):
    """The saved SVG and PDF hold no timestamp, so equal figures give equal files."""
    out = save_figure(_fig(), "fig-test", data=_table(), folder=tmp_path)
    assert b"CreationDate" not in out["pdf"].read_bytes()
    assert b"<dc:date>" not in out["svg"].read_bytes() and b"<dc:date>" not in out["narrow"].read_bytes()


def test_csv_bytes_are_reproducible_and_independent_of_row_order(tmp_path: Path):
    data = _table()
    a = write_figure_data(data, tmp_path / "a.csv")
    b = write_figure_data(data.iloc[::-1], tmp_path / "b.csv")
    c = write_figure_data(data.sample(frac=1.0, random_state=3).reset_index(drop=True), tmp_path / "c.csv")
    assert a.read_bytes() == b.read_bytes() == c.read_bytes()
    # a different value changes the bytes
    changed = data.copy()
    changed.loc[0, "y"] = np.nextafter(changed.loc[0, "y"], 1.0)
    assert write_figure_data(changed, tmp_path / "d.csv").read_bytes() != a.read_bytes()


def test_figure_data_sorts_rows_by_columns_left_to_right():
    data = pd.DataFrame({"panel": ["b", "a", "a"], "x": [1.0, np.nan, 0.5], "y": [3.0, 2.0, 1.0]})
    out = figure_data(data)
    assert out["panel"].tolist() == ["a", "a", "b"]
    assert out["x"].tolist()[:1] == [0.5] and np.isnan(out["x"].iloc[1])  # missing values last
    assert list(out.index) == [0, 1, 2] and list(out.columns) == ["panel", "x", "y"]


def test_save_figure_requires_data(tmp_path: Path):
    fig = _fig()
    with pytest.raises(TypeError, match="data"):
        save_figure(fig, "fig-test", folder=tmp_path)
    with pytest.raises(TypeError, match="DataFrame"):
        save_figure(fig, "fig-test", data=None, folder=tmp_path)
    with pytest.raises(TypeError, match="DataFrame"):
        save_figure(fig, "fig-test", data={"x": [1]}, folder=tmp_path)
    with pytest.raises(ValueError, match="empty"):
        save_figure(fig, "fig-test", data=pd.DataFrame({"x": []}), folder=tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing written
    plt.close(fig)


@pytest.mark.parametrize("bad, error, match", [
    (pd.DataFrame([[1, 2]], columns=["x", "x"]), ValueError, "duplicate"),
    (pd.DataFrame([[1, 2]], columns=["x", 3]), ValueError, "strings"),
    (pd.DataFrame({"y": [1.0]}, index=pd.Index([0.5], name="x")), ValueError, "reset_index"),
    (pd.DataFrame({"etas": [(5, 10), (6, 9)]}), TypeError, "tuple"),
    (pd.DataFrame({"x": pd.Series(["a", 1.0], dtype=object)}), ValueError, "mix"),
])
def test_figure_data_rejects_what_a_csv_cannot_hold(bad, error, match, tmp_path: Path):
    with pytest.raises(error, match=match):
        save_figure(_fig(), "fig-bad", data=bad, folder=tmp_path)
    assert not (tmp_path / "fig-bad.csv").exists() and not (tmp_path / "fig-bad.svg").exists()
    plt.close("all")


def test_interval_cuts_bars_at_the_bounds_and_keeps_the_rows():
    summary = pd.DataFrame({"method": ["SPM", "PEM", "PEM"], "eps": [2.0, 2.0, 1.0], "f1_mean": [0.1, 0.9, 0.5],
                            "f1_std": [0.2, 0.2, np.nan]})
    d = interval(summary, "f1_mean", "f1_std")
    pd.testing.assert_frame_equal(d[list(summary.columns)], summary)  # the plotted rows, unchanged
    np.testing.assert_allclose(d["lo"], [0.0, 0.7, np.nan])
    np.testing.assert_allclose(d["hi"], [0.3, 1.0, np.nan])  # no bar where the SD is missing
    wide = interval(summary, "f1_mean", "f1_std", (0.05, None), scale=2)
    np.testing.assert_allclose(wide["hi"][:2], [0.5, 1.3]) and np.testing.assert_allclose(wide["lo"][:2], [0.05, 0.5])
    se = interval(summary.assign(runs=[4, 16, 4]), "f1_mean", "f1_std", scale=2, runs="runs")  # ± 2 SD/√runs
    np.testing.assert_allclose(se["lo"][:2], [0.0, 0.8]) and np.testing.assert_allclose(se["hi"][:2], [0.3, 1.0])


def test_render_draws_a_plot_at_the_books_width_with_one_legend_above():
    import seaborn.objects as so

    data = pd.DataFrame({"x": [1, 2, 1, 2], "y": [0.1, 0.2, 0.3, 0.4], "method": ["PEM", "PEM", "SPM", "SPM"]})
    plot = so.Plot(data, x="x", y="y", color="method").add(so.Line())
    fig = render([plot, lambda ax: ax.plot([0, 1], [1, 0])], height=2.0, grid=(1, 2))
    assert fig.get_size_inches().tolist() == [FULL_WIDTH, 2.0] and len(fig.axes) == 2
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["PEM", "SPM"]
    assert len(fig.axes[1].lines) == 1  # a callable draws its panel with matplotlib


def test_importing_the_plotting_package_chooses_no_backend():
    """The runner and the tests choose the backend (MPLBACKEND), not ``import ldp.book.plotting``."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    code = ("import matplotlib; import ldp.book.plotting, ldp.book.chapters; "
            "print(dict.__getitem__(matplotlib.rcParams, 'backend') is matplotlib.rcsetup._auto_backend_sentinel)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


# --------------------------------------------------------------------------- #
# scripts/figure_data.py
# --------------------------------------------------------------------------- #
def _build(folder: Path, tables: dict[str, pd.DataFrame]) -> Path:
    for name, table in tables.items():
        write_figure_data(table, folder / "quick" / f"{name}.csv")
    return folder


def _run_compare(old: Path, new: Path, *args: str) -> tuple[int, str]:
    buf = io.StringIO()
    status = tool.compare(old, new, set(args), out=buf)
    return status, buf.getvalue()


def test_compare_passes_on_identical_builds(tmp_path: Path):
    tables = {"fig-a": _table(0), "fig-b": _table(1)}
    old, new = _build(tmp_path / "old", tables), _build(tmp_path / "new", tables)
    status, text = _run_compare(old, new)
    assert status == 0, text
    assert "identical: 2" in text and "RESULT: all figure data identical" in text
    assert tool.main(["compare", str(old), str(new)]) == 0


def test_compare_fails_on_a_changed_value_and_reports_its_size(tmp_path: Path):
    base = _table(0)
    changed = base.copy()
    changed.loc[changed["panel"] == "a", "y"] *= 1.001  # two cells, 0.1% each
    changed.loc[0, "series"] = "MCM"
    old = _build(tmp_path / "old", {"fig-a": base, "fig-b": _table(1)})
    new = _build(tmp_path / "new", {"fig-a": changed, "fig-b": _table(1)})
    status, text = _run_compare(old, new)
    assert status == 1, text
    assert "identical: 1" in text and "differing: 1" in text and "quick/fig-a.csv" in text
    sorted_base = figure_data(base)
    a_rows = sorted_base["panel"] == "a"
    want_abs = float((sorted_base.loc[a_rows, "y"] * 0.001).abs().max())
    line = next(s for s in text.splitlines() if "column y:" in s)
    got_abs = float(line.split("max abs diff ")[1].split(",")[0])
    got_rel = float(line.split("max rel diff ")[1].split()[0])
    assert got_abs == pytest.approx(want_abs, rel=1e-5)
    assert got_rel == pytest.approx(0.001 / 1.001, rel=1e-5)
    assert "column series: 1 cell(s) differ" in text
    assert "column x:" not in text  # unchanged columns are not listed
    assert tool.main(["compare", str(old), str(new)]) == 1


def test_compare_fails_on_rows_columns_and_files(tmp_path: Path):
    base = _table(0)
    old = _build(tmp_path / "old", {"fig-a": base, "fig-b": base, "fig-c": base})
    new = _build(tmp_path / "new", {"fig-a": base.iloc[:3], "fig-b": base.drop(columns="runs").assign(extra=1),
                                    "fig-d": base})
    status, text = _run_compare(old, new)
    assert status == 1
    assert "rows 4 -> 3" in text
    assert "columns removed: runs" in text and "columns added: extra" in text
    assert "missing in NEW: 1" in text and "quick/fig-c.csv" in text
    assert "new in NEW: 1" in text and "quick/fig-d.csv" in text


def test_compare_nan_and_ignored_columns(tmp_path: Path):
    base = _table(0)
    seconds = base.assign(seconds=1.0)
    old = _build(tmp_path / "old", {"fig-a": base, "fig-t": seconds})
    new = _build(tmp_path / "new", {"fig-a": base, "fig-t": seconds.assign(seconds=2.5)})
    status, text = _run_compare(old, new)
    assert status == 1 and "column seconds: max abs diff 1.5" in text
    status, text = _run_compare(old, new, "seconds")
    assert status == 0, text
    assert "up to ignored columns" in text
    empty_vs_number = base.copy()
    empty_vs_number["err"] = empty_vs_number["err"].fillna(0.0)
    new2 = _build(tmp_path / "new2", {"fig-a": empty_vs_number, "fig-t": seconds})
    status, text = _run_compare(old, new2)
    assert status == 1 and "column err: max abs diff inf" in text


def test_snapshot_copies_the_csvs_with_a_manifest(tmp_path: Path):
    cache = tmp_path / "cache"
    write_figure_data(_table(0), cache / "quick" / "figures" / "fig-a.csv")
    (cache / "quick" / "figures" / "fig-a.svg").write_text("<svg/>")  # only CSVs are copied
    out = tmp_path / "snap"
    manifest = tool.snapshot(out, ["quick"], cache=cache)
    assert sorted(p.name for p in (out / "quick").iterdir()) == ["fig-a.csv"]
    entry = manifest["modes"]["quick"]["fig-a.csv"]
    assert entry["sha256"] == tool.sha256(cache / "quick" / "figures" / "fig-a.csv")
    assert entry["rows"] == 4 and entry["columns"] == list(_table(0).columns)
    assert json.loads((out / "manifest.json").read_text()) == manifest
    with pytest.raises(SystemExit, match="already holds"):
        tool.snapshot(out, ["quick"], cache=cache)
    with pytest.raises(SystemExit, match="no figure CSVs"):
        tool.snapshot(tmp_path / "snap2", ["full"], cache=cache)
    # a snapshot compares equal to the cache folder it came from
    status, text = _run_compare(out / "quick", cache / "quick" / "figures")
    assert status == 0, text


def test_methods_have_one_style():
    from ldp.book.plotting import METHOD_STYLE, method_scales, method_style, series_colors

    assert method_style("PEM (HR)") == METHOD_STYLE["PEM"] == method_style("PEM-GRR")
    colours = [s["color"] for s in METHOD_STYLE.values()]
    assert len(set(colours)) == len(colours)
    assert not {tuple(c) for c in series_colors(4)} & set(colours)
    with pytest.raises(KeyError, match="known methods"):
        method_style("Nonesuch")
    scales = method_scales(["PEM", "TreeHist (8 bits)"], dashed=["TreeHist (8 bits)"])
    assert set(scales) >= {"color", "marker"}
