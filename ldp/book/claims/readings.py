"""Results under another reading of what the paper leaves open (reading sensitivity).

A claim's :class:`~ldp.book.claims.Alternative` decides it again under another reading that
``book/interpretation.md`` documents.  Where that reading needs other runs, the chapter saves them
beside its own as the table ``<name>--<tag>`` (``name`` the figure or table they redo, ``tag`` the
reading); :class:`Reading` shows a :class:`~ldp.book.claims.ResultStore` as that reading gives
it, and :func:`under` makes a claim's own measure read such a view.  No number is changed by hand:
a view only swaps in the saved rows of the other reading and keeps the levels they were run at.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

#: the columns naming a series: a saved row of the other reading replaces the rows of its series
KEYS = ("dataset", "protocol", "series")


#: the columns of a grid's levels: a view keeps only the levels the other reading's rows were run at
LEVELS = ("epsilon", "k")


class Reading:
    """``store`` as another reading gives it.

    Parameters
    ----------
    store : ResultStore
        The results of a build or a rerun.
    chapter : str
        The chapter that saved the other reading's rows.
    tag : str
        The reading: a figure or table ``name`` reads with the rows of ``<chapter>/<name>--<tag>`` in place
        of the series (:data:`KEYS`) they redo, at their levels (:data:`LEVELS`) only; when they were not
        saved (a rerun that left the reading's levels out), reading ``name`` raises ``MissingResult``, so
        the claim is "not testable" under this reading rather than decided on the store's own rows.
    levels : mapping of str to sequence, optional
        A column and the values to keep (e.g. the budgets the text quotes).
    """

    def __init__(self, store, chapter: str, tag: str = "", levels: Mapping[str, Sequence] | None = None):
        self._store, self.chapter, self.tag, self.levels = store, chapter, tag, dict(levels or {})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def figure(self, name: str) -> pd.DataFrame:
        """Figure ``name``'s data under this reading."""
        return self._view(self._store.figure(name), name)

    def load(self, chapter: str, name: str) -> pd.DataFrame:
        """Table ``<chapter>/<name>`` under this reading."""
        return self._view(self._store.load(chapter, name), name)

    def _view(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        if self.tag:  # the other reading's rows, or MissingResult: never the store's own rows in their place
            alt = self._store.load(self.chapter, f"{name}--{self.tag}")
            keys = [c for c in KEYS if c in frame.columns and c in alt.columns]
            redone = pd.MultiIndex.from_frame(alt[keys]).unique()
            frame = frame[~pd.MultiIndex.from_frame(frame[keys]).isin(redone)]
            for col in (c for c in LEVELS if c in frame.columns and c in alt.columns):
                frame = frame[frame[col].isin(alt[col])]
            frame = pd.concat([frame, alt[[c for c in frame.columns if c in alt.columns]]], ignore_index=True)
        for col, values in self.levels.items():
            frame = frame[frame[col].isin(list(values))]
        return frame.reset_index(drop=True)


def under(measure: Callable, chapter: str, tag: str = "", **levels: Sequence) -> Callable:
    """``measure`` (a claim's: store -> measurement) reading the store as :class:`Reading` shows it.

    Examples
    --------
    >>> import pandas as pd
    >>> class Store:  # a stand-in for a ResultStore with one figure and its rows under another reading
    ...     def figure(self, name):
    ...         return pd.DataFrame({"protocol": ["PEM", "SPM"] * 2, "k": [1, 1, 2, 2], "mean": [.9, .5, .8, .4]})
    ...     def has(self, chapter, name):
    ...         return name == "fig--other"
    ...     def load(self, chapter, name):
    ...         return pd.DataFrame({"protocol": ["SPM"], "k": [2], "mean": [.7]})
    >>> under(lambda store: store.figure("fig")["mean"].tolist(), "06_evaluation", "other")(Store())
    [0.8, 0.7]
    >>> under(lambda store: store.figure("fig")["mean"].tolist(), "06_evaluation", k=[1])(Store())
    [0.9, 0.5]
    """
    return lambda store: measure(Reading(store, chapter, tag, levels))

