"""Saving a figure: one way, SVG + PDF + the plotted data (``NAME.csv``), atomically (README.md, "Figures").
"""
from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from ...paths import SHOW_FIGURES_ENV, atomic_path, figures_dir
from .narrow import NARROW_SUFFIX, one_column

# fontTools warns "'created' timestamp seems very low" when matplotlib subsets
# fonts for a PDF without a creation date; it is harmless noise in notebooks.
logging.getLogger("fontTools").setLevel(logging.ERROR)

# metadata that leaves the build time out of a saved file (the key differs by format;
# a PDF saved with {"Date": None} still carried its CreationDate)
_NO_DATE = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}

#: the settings that make a saved file the same for the same figure (fonts as text, fixed SVG ids)
_REPRODUCIBLE: dict[Any, Any] = {"svg.fonttype": "none", "pdf.fonttype": 42, "svg.hashsalt": "ldp"}

__all__ = ["save_figure", "figure_data", "write_figure_data"]

def figure_data(data, name: str = "figure") -> pd.DataFrame:
    """Check a figure's plotted-data table and put its rows in a canonical order.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per plotted point, bar or line vertex; the identifying columns
        first (panel as the caption labels it, series, x), then the plotted
        values (y, error-bar half-widths or bounds, run counts, analytic values).
    name : str
        The figure's name, for error messages.

    Returns
    -------
    pandas.DataFrame
        ``data`` with its rows sorted by all columns from left to right (a stable
        sort, missing values last) and a fresh index; the columns keep their order.

    Raises
    ------
    TypeError
        If ``data`` is not a DataFrame, or a column holds containers (lists,
        tuples, arrays) instead of scalars.
    ValueError
        If ``data`` has no rows or no columns, a column name that is not a
        non-empty string or appears twice, a named index (it would be dropped:
        call ``reset_index()``), or a column whose values cannot be ordered.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"save_figure({name!r}): data must be a pandas DataFrame of the plotted values "
                        f"(one row per point, bar or line vertex), got {type(data).__name__}")
    if data.shape[0] == 0 or data.shape[1] == 0:
        raise ValueError(f"save_figure({name!r}): data is empty ({data.shape[0]} rows, {data.shape[1]} columns); "
                         "pass the values the figure plots")
    cols = list(data.columns)
    bad = [c for c in cols if not isinstance(c, str) or not c]
    if bad or isinstance(data.columns, pd.MultiIndex):
        raise ValueError(f"save_figure({name!r}): data column names must be non-empty strings, got {bad or cols}")
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise ValueError(f"save_figure({name!r}): data has duplicate columns {dup}")
    if any(n is not None for n in data.index.names):
        raise ValueError(f"save_figure({name!r}): data has a named index {list(data.index.names)}, which the "
                         "CSV would drop; call reset_index() first")
    for c in cols:
        if data[c].dtype == object:
            odd = [v for v in data[c] if not pd.api.types.is_scalar(v)]
            if odd:
                raise TypeError(f"save_figure({name!r}): column {c!r} holds {type(odd[0]).__name__} values; "
                                "store scalars (e.g. str(value))")
    try:
        out = data.sort_values(cols, kind="mergesort", na_position="last")
    except TypeError as exc:
        mixed = [c for c in cols if data[c].dtype == object
                 and len({type(v) for v in data[c] if not pd.isna(v)}) > 1]
        raise ValueError(f"save_figure({name!r}): cannot order the rows of data: columns {mixed} mix "
                         f"value types ({exc})") from exc
    return out.reset_index(drop=True)


def write_figure_data(data, target: str | Path, *, name: str | None = None) -> Path:
    """Write a figure's plotted data to ``target`` as CSV, atomically and byte-reproducibly.

    Plain CSV (comma-separated, a header row, no index, no comments, ``\\n`` line
    ends, UTF-8): floats at full precision (the shortest decimal that reads back
    as the same float64), missing values as empty fields, rows in the canonical
    order of :func:`figure_data`.  The same table always gives the same bytes.

    Parameters
    ----------
    data : pandas.DataFrame
        The plotted values (see :func:`figure_data`).
    target : str or path-like
        The CSV file to write (replaced atomically, :func:`ldp.paths.atomic_path`).
    name : str, optional
        The figure's name for error messages (default: the file's stem).

    Returns
    -------
    pathlib.Path
        ``target``.
    """
    target = Path(target)
    frame = figure_data(data, target.stem if name is None else name)
    with atomic_path(target) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n", encoding="utf-8", float_format=lambda v: repr(float(v)))
    return target


def save_figure(fig, name: str, *, data: pd.DataFrame, folder: str | Path | None = None,
                formats: tuple[str, ...] = ("svg", "pdf"), close: bool = True,
                narrow: bool | None = None) -> dict[str, Path]:
    """Save ``fig`` as ``<folder>/<name>.<fmt>`` for each format, its data as ``<name>.csv`` and, for the
    book's pages on a phone, its panels in one column as ``<name>-narrow.svg`` (:func:`.narrow.one_column`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    name : str
        File name without suffix, e.g. ``"fig-eval-var"`` (names are global
        across chapters).
    data : pandas.DataFrame
        Required: the tidy table of exactly what ``fig`` plots, one row per
        plotted point, bar or line vertex (see :func:`figure_data`), taken from
        the variables the plotting code uses.  Checked before anything is
        written; a figure without its data is an error.
    folder : str or path-like, optional
        Default :func:`ldp.paths.figures_dir`.
    formats : tuple of str
        Image formats (matplotlib names).
    close : bool
        Close the figure afterwards (so the notebook shows it only through the
        book's ``{figure}`` directive).  With ``$LDP_SHOW_FIGURES`` set
        (``python -m ldp rerun``) it is also shown in the notebook's output, as a PNG.
    narrow : bool, optional
        Also save the phone layout ``<name>-narrow.svg`` (when ``"svg"`` is one of ``formats``); the
        figure is laid out as before afterwards.  Default: for the book's pages, that is unless
        ``$LDP_SHOW_FIGURES`` is set (a rerun's page is the notebook itself, with the PNG).

    Returns
    -------
    dict
        The written paths by format, ``"csv"`` included, and ``"narrow"``: the phone layout.  Every file is
        written atomically (:func:`ldp.paths.atomic_path`).
    """
    frame = figure_data(data, name)  # check before writing anything
    folder = Path(folder) if folder is not None else figures_dir()
    out = {"csv": write_figure_data(frame, folder / f"{name}.csv", name=name)}
    shown = bool(os.environ.get(SHOW_FIGURES_ENV))
    for fmt in formats:
        target = folder / f"{name}.{fmt}"
        with atomic_path(target) as tmp, plt.rc_context(_REPRODUCIBLE):
            fig.savefig(tmp, format=fmt, bbox_inches="tight", metadata=_NO_DATE.get(fmt))
        out[fmt] = target
    if shown:  # drawn where the last format's layout placed the panels: the layout is most of a save's time
        with _layout_kept(fig, bool(formats)):
            _show_png(fig)
    if (not shown if narrow is None else narrow) and "svg" in formats:
        target = folder / f"{name}{NARROW_SUFFIX}.svg"
        with one_column(fig), atomic_path(target) as tmp, plt.rc_context(_REPRODUCIBLE):
            fig.savefig(tmp, format="svg", bbox_inches="tight", metadata=_NO_DATE["svg"])
        out["narrow"] = target
    if close:
        plt.close(fig)
    return out


@contextlib.contextmanager
def _layout_kept(fig, keep: bool) -> Iterator[None]:
    """While the block runs, ``fig`` is drawn where its last draw placed its panels (its layout engine off)."""
    engine = fig.get_layout_engine()
    if not keep or engine is None:
        yield
        return
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


def _show_png(fig) -> None:
    """Display ``fig`` in the running notebook (IPython) as a PNG."""
    import io

    from IPython.display import Image, display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    display(Image(data=buf.getvalue(), format="png"))
