"""What a data set's distinct values answer to a question, tallied once and kept for the runs that ask it again.

The count engine (:mod:`ldp.engines.counts`) needs, for each question of a plan, the answer of every
distinct value and which values share an answer; a grid asks the same questions of the same data set run
after run, so the tallies are cached per data set (weakly: they go with it).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from ..core import Dataset, Question, channel_hash
from ..values import value_keys

__all__ = ["AnswerTally", "segment_tally", "channel_tally", "held_answers"]


@dataclass(frozen=True)
class AnswerTally:
    """The answers of a data set's distinct values to one question, tallied.

    Attributes
    ----------
    answers : numpy.ndarray
        Each distinct value's answer (canonical ``question.width``-bit values).
    unique : numpy.ndarray or None
        The distinct answers (``None`` for a dense channel question, whose
        answers index a histogram directly).
    inverse : numpy.ndarray
        Position of each distinct value's answer in ``unique`` (or the answer itself, dense).
    starts : numpy.ndarray or None
        For prefix questions (answers of sorted values come out sorted): the
        first distinct value of each answer; otherwise ``None``.
    """

    answers: np.ndarray
    unique: np.ndarray | None
    inverse: np.ndarray
    starts: np.ndarray | None


def _tally_answers(distinct: np.ndarray, m: int, q: Question, channel: np.ndarray | None = None,
                   bits: np.ndarray | None = None) -> AnswerTally:
    """:class:`AnswerTally` of ``distinct`` (sorted, ``m``-bit values) for question ``q``.

    ``channel`` and ``bits``: the values' channel hashes and segment, when known (:meth:`Question.answer`).
    """
    ans = q.answer(distinct, m, channel=channel, bits=bits)
    if q.is_prefix:
        if ans.ndim == 1:
            new = ans[1:] != ans[:-1]
        else:
            new = np.any(ans[1:] != ans[:-1], axis=1)
        starts = np.flatnonzero(np.r_[True, new])
        inv = np.r_[0, np.cumsum(new)].astype(np.int64)
        return AnswerTally(ans, ans[starts], inv, starts)
    if q.channels and q.domain_size <= 2**22:
        return AnswerTally(ans, None, ans.astype(np.int64), None)  # dense: answers index a histogram
    keys = value_keys(ans)
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    return AnswerTally(ans, ans[first], inv.reshape(-1).astype(np.int64), None)


def _segment_tally(distinct: np.ndarray, m: int, start: int, stop: int) -> AnswerTally:
    return _tally_answers(distinct, m, Question(start, stop, 1.0))  # the answers depend on the bits only


# Own cache, per data set: a WeakKeyDictionary drops a data set's tallies with the data set (a
# functools.lru_cache keyed by the Dataset would keep it alive); within it, functools.lru_cache
# bounds the tallies kept to the last 256 bit ranges: every prefix of a 160-bit value (TreeHist's
# levels, one bit each, on the URL data) fits, so that a grid's repetitions reuse them instead of
# tallying every level again (about 0.5 MB a range for 27,000 distinct values).
_SEGMENT_TALLY_SIZE = 256
_SEGMENT_TALLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def segment_tally(data: Dataset, start: int, stop: int) -> AnswerTally:
    """The tally of ``data``'s answers to bits ``[start, stop)`` (cached per data set: repetitions reuse it)."""
    fn = _SEGMENT_TALLIES.get(data)
    if fn is None:  # the partial holds the distinct values, not the data set (a weak key)
        fn = lru_cache(maxsize=_SEGMENT_TALLY_SIZE)(partial(_segment_tally, data.distinct, data.m))
        _SEGMENT_TALLIES[data] = fn
    return fn(start, stop)


_CHANNEL_TALLIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _channel_hashes(distinct: np.ndarray, m: int, channels: int, seed: int) -> np.ndarray:
    h = channel_hash(distinct, m, channels, seed)
    h.flags.writeable = False  # shared by the tallies of every question with these channels and seed
    return h


def _channel_tally(distinct: np.ndarray, m: int, hashes, segments, q: Question) -> AnswerTally:
    return _tally_answers(distinct, m, q, hashes(q.channels, q.seed), segments(q.start, q.stop).answers)


def channel_tally(data: Dataset, q: Question) -> AnswerTally:
    """The tally of ``data``'s answers to channel question ``q`` (cached per data set for the last 16 questions).

    A channel answer depends on the plan's public seed (part of ``q``): the runs of one plan reuse it.
    The distinct values' channel hashes, which every channel question of a plan shares (MCM's blocks,
    SFP's fragments), are computed once per ``(channels, seed)`` (the last 4 kept), and their bit
    segments come from :func:`segment_tally` (kept across runs).
    """
    fn = _CHANNEL_TALLIES.get(data)
    if fn is None:  # as segment_tally: the partials hold the distinct values, not the data set
        hashes = lru_cache(maxsize=4)(partial(_channel_hashes, data.distinct, data.m))
        segment_tally(data, 0, data.m)  # makes the data set's segment tallies
        fn = lru_cache(maxsize=16)(partial(_channel_tally, data.distinct, data.m, hashes, _SEGMENT_TALLIES[data]))
        _CHANNEL_TALLIES[data] = fn
    return fn(q)



def held_answers(t: AnswerTally, q: Question, idx: np.ndarray, cnt: np.ndarray, *, ordered: bool):
    """The answers to ``q`` (tallied in ``t``) of the distinct values ``idx`` held ``cnt`` times, summed.

    Returns the answers held (``cnt > 0``) in the tally's order and how many
    hold each: what :meth:`ldp.engines.counts.CountSupport.answer_counts` returns from a dense
    row, computed from the row's nonzero entries.  ``ordered``: the answer
    positions of ``idx`` already come sorted (one sorted row of a prefix question).
    """
    pos = t.inverse[idx]
    size = q.domain_size if t.unique is None else t.unique.shape[0]
    if pos.shape[0] == 0:
        held, total = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    elif not ordered and size <= 8 * pos.shape[0]:  # few possible answers: a histogram of them
        total = np.rint(np.bincount(pos, weights=cnt, minlength=size)).astype(np.int64)
        held = np.flatnonzero(total)
        total = total[held]
    else:  # sums over the runs of equal answers, in answer order
        if not ordered:
            o = np.argsort(pos, kind="stable")
            pos, cnt = pos[o], cnt[o]
        heads = np.flatnonzero(np.concatenate(([True], pos[1:] != pos[:-1])))
        held, total = pos[heads], np.add.reduceat(cnt, heads)
    ok = total > 0
    held, total = held[ok], total[ok]
    return (held.astype(np.uint64) if t.unique is None else np.take(t.unique, held, axis=0)), total
