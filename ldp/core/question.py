"""Questions and plans: what users are asked, and how they are split into groups.

* :class:`Question` -- one frequency-oracle report a user sends: a bit range
  of her value (a prefix for PEM, a segment for SPM / the strawman, a block
  paired with a channel for MCM, or the whole value), privatized by the
  oracle it names (OLH unless said otherwise) at a given budget.
* :class:`Plan` -- the user groups of a protocol run and the questions each
  group answers (one report per question).
* :func:`group_sizes` and :func:`assign_groups` -- the seeded random split of
  the users into groups of (almost) equal size, the *one* function used by
  all protocols and by both engines, so that the same seed puts every user in
  the same group whichever engine runs.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2.2, 3 and 4.1.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from ..numeric import largest_remainder
from ..oracles import hashing
from ..values import prefix
from .oracle_specs import check_oracle, check_pool_size, oracle_for

__all__ = ["Question", "Plan", "ASSIGNMENT", "make_question", "group_sizes", "assign_groups", "segment", "channel_hash"]


# ---------------------------------------------------------------------------
# bits of a value
# ---------------------------------------------------------------------------
def segment(values: np.ndarray, m: int, start: int, stop: int) -> np.ndarray:
    """Bits ``[start, stop)`` (0 = most significant) of ``m``-bit values.

    The paper's ``v[start:stop]`` (section 3.1, Python slice notation), as
    canonical ``(stop - start)``-bit values.
    """
    if not 0 <= start < stop <= m:
        raise ValueError(f"bit range [{start}, {stop}) must satisfy 0 <= start < stop <= m = {m}")
    p = prefix(values, m, stop) if stop < m else values
    width = stop - start
    if start == 0:
        return p
    if width > 64:
        raise ValueError(f"segments not starting at bit 0 must be at most 64 bits, got {width}")
    low = p if p.ndim == 1 else p[:, -1]
    if width == 64:
        return low.copy()
    return low & np.uint64((1 << width) - 1)


def channel_hash(values: np.ndarray, m: int, channels: int, seed: int) -> np.ndarray:
    """MCM's public channel hash ``H : {0,1}^m -> [channels]`` (section 3.3).

    One member of OLH's strongly universal family (:mod:`ldp.oracles.hashing`)
    selected by the public ``seed``, reduced to ``[channels]``; two distinct
    values share a channel with probability ``1/channels`` (up to ``2**-32``).
    """
    n = values.shape[0]
    if channels == 1:
        return np.zeros(n, dtype=np.uint64)
    seeds = np.full(n, np.uint64(seed), dtype=np.uint64)
    return hashing.hash_values(seeds, values, m, channels)


# ---------------------------------------------------------------------------
# questions and plans
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    """One frequency-oracle report: bits ``[start, stop)`` of the value, at budget ``epsilon``.

    With ``channels > 0`` (MCM, SFP) the answer is the pair ``(H(v), v[start:stop])``
    encoded as ``H(v) * 2**(stop - start) + v[start:stop]``, where ``H`` is
    :func:`channel_hash` with the public ``seed``.  ``oracle_name`` names the
    frequency oracle of the report (one of :data:`ldp.core.ORACLES`; the
    paper's protocols: ``"OLH"``); ``pool_size`` and ``pool_seed`` are FLH's
    public pool (0 for the other oracles).
    """

    start: int
    stop: int
    epsilon: float
    channels: int = 0
    seed: int = 0
    oracle_name: str = "OLH"
    pool_size: int = 0
    pool_seed: int = 0

    @property
    def seg_bits(self) -> int:
        """Bits of the value the question is about (``stop - start``)."""
        return self.stop - self.start

    @property
    def width(self) -> int:
        """Bit width of the answer (the oracle instance's ``m``)."""
        if self.channels:
            return self.seg_bits + max(1, (self.channels - 1).bit_length())
        return self.seg_bits

    @property
    def domain_size(self) -> int:
        """Number of possible answers (exact int)."""
        return (self.channels or 1) << self.seg_bits

    @property
    def is_prefix(self) -> bool:
        """Answers of sorted values are sorted (prefixes and whole values)."""
        return self.start == 0 and not self.channels

    def answer(self, values: np.ndarray, m: int) -> np.ndarray:
        """Each user's (un-perturbed) answer, canonical ``width``-bit values."""
        seg = segment(values, m, self.start, self.stop)
        if not self.channels:
            return seg
        c = channel_hash(values, m, self.channels, self.seed)
        return (c << np.uint64(self.seg_bits)) | seg

    def oracle(self):
        """The oracle instance answering this question (:func:`ldp.core.oracle_for`, cached)."""
        return oracle_for(self.oracle_name, self.epsilon, self.width, self.pool_size, self.pool_seed)

    def to_dict(self) -> dict:
        """A JSON-serialisable dict (:meth:`from_dict` reverses it)."""
        d: dict[str, Any] = {"start": self.start, "stop": self.stop, "epsilon": self.epsilon,
             "channels": self.channels, "seed": int(self.seed)}
        if self.oracle_name != "OLH":  # OLH questions keep the plans' original JSON
            d["oracle"] = self.oracle_name
        if self.pool_size:  # FLH's public pool
            d["pool_size"], d["pool_seed"] = int(self.pool_size), int(self.pool_seed)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Question:
        """A question from :meth:`to_dict`'s dict."""
        return cls(int(d["start"]), int(d["stop"]), float(d["epsilon"]), int(d["channels"]), int(d["seed"]),
                   str(d.get("oracle", "OLH")), int(d.get("pool_size", 0)), int(d.get("pool_seed", 0)))


def make_question(start: int, stop: int, epsilon: float, spec: str = "OLH", channels: int = 0,
                  seed: int = 0, *, pool_size: int | None = None, pool_seed: int = 0) -> Question:
    """The :class:`Question` of bits ``[start, stop)`` answered with the oracle ``spec`` (checked).

    ``pool_size`` and ``pool_seed``: FLH's public pool (:func:`ldp.core.check_pool_size`).
    """
    spec = check_oracle(spec)
    h = check_pool_size(spec, pool_size)
    return Question(start, stop, epsilon, channels, seed, spec, h, int(pool_seed) if h else 0)


#: name of the group assignment rule of :meth:`Plan.labels` (recorded in every plan)
ASSIGNMENT = "fisher-yates/pcg64/v1"


@dataclass(frozen=True)
class Plan:
    """What the server publishes before users report: groups, questions and the public seed.

    A plan made by :meth:`ldp.protocols.HeavyHitterProtocol.plan` fixes
    everything that depends on the number of users ``n``: the groups and
    their shares, the questions each group answers (PEM's prefix lengths,
    SPM's segments, MCM's blocks and public channel-hash seed, each
    question's budget), and which user is in which group (:meth:`labels`,
    derived from ``seed`` by the rule ``assignment``).  It holds no user's
    private randomness.  It is serialisable: :meth:`to_json` /
    :meth:`from_json` (or :meth:`to_dict` / :meth:`from_dict`).

    Parameters
    ----------
    m : int
        Bits per value.
    fractions : tuple of float
        Share of the users in each group (sum 1).
    questions : tuple of tuple of Question
        The questions every user of a group answers, one oracle report each.
    n : int, optional
        Number of users the plan is for (``None``: only a layout of groups
        and questions, not bound to a population).
    seed : int, optional
        Public seed of the group assignment (:meth:`labels`).
    protocol : str
        Name of the protocol that made the plan.
    params : dict
        That protocol's parameters, with the configuration resolved for ``n``.
    assignment : str
        The group assignment rule (:data:`ASSIGNMENT`).
    """

    m: int
    fractions: tuple[float, ...]
    questions: tuple[tuple[Question, ...], ...]
    n: int | None = None
    seed: int | None = None
    protocol: str = ""
    params: dict = field(default_factory=dict, hash=False)
    assignment: str = ASSIGNMENT

    @property
    def n_groups(self) -> int:
        """Number of user groups."""
        return len(self.fractions)

    @property
    def n_users(self) -> int:
        """The number of users ``n`` of a plan made for a population (an error for a layout)."""
        if self.n is None or self.seed is None:
            raise ValueError("this plan is a layout without users (n and seed unset); make one with "
                             "protocol.plan(n, rng=...)")
        return self.n

    def sizes(self, n: int | None = None) -> tuple[int, ...]:
        """Users per group for ``n`` users (default: the plan's ``n``)."""
        return group_sizes(self.n_users if n is None else n, self.fractions)

    def slot(self, group: int, question: Question) -> int:
        """Position of ``question`` among the reports of ``group``."""
        try:
            return self.questions[group].index(question)
        except ValueError:
            raise KeyError(f"group {group} does not answer {question}") from None

    def groups_asking(self, question: Question) -> tuple[int, ...]:
        """Groups whose users answer ``question``."""
        return tuple(g for g, qs in enumerate(self.questions) if question in qs)

    def labels(self) -> np.ndarray:
        """The group of every user ``0 .. n-1`` (read-only ``uint8``/``uint16`` array).

        :func:`assign_groups` (every assignment with the sizes
        :meth:`sizes` equally likely) driven by ``numpy.random.default_rng(seed)``:
        anyone holding the plan computes the same groups, so a user (or a batch
        of users) learns her group from the plan and her index alone.  Computed
        once per plan object (``O(n)``, about 10 ms for ``n = 10**6``) and cached.
        """
        # one array memoised on this (frozen) plan object, dropped when pickled (__getstate__)
        cached = self.__dict__.get("_labels")
        if cached is not None:
            return cached
        n = self.n_users
        if self.assignment != ASSIGNMENT:
            raise ValueError(f"unknown group assignment rule {self.assignment!r}; this version of ldp "
                             f"implements {ASSIGNMENT!r}")
        labels = assign_groups(n, self.fractions, rng=np.random.default_rng(self.seed))
        labels.flags.writeable = False
        object.__setattr__(self, "_labels", labels)
        return labels

    def __getstate__(self):  # the cached labels are not part of the state
        state = dict(self.__dict__)
        state.pop("_labels", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def to_dict(self) -> dict:
        """A JSON-serialisable dict (:meth:`from_dict` reverses it)."""
        return {"protocol": self.protocol, "n": self.n, "seed": self.seed, "assignment": self.assignment,
                "params": self.params, "m": self.m, "fractions": list(self.fractions),
                "questions": [[q.to_dict() for q in qs] for qs in self.questions]}

    @classmethod
    def from_dict(cls, d: dict) -> Plan:
        return cls(int(d["m"]), tuple(float(f) for f in d["fractions"]),
                   tuple(tuple(Question.from_dict(q) for q in qs) for qs in d["questions"]),
                   n=None if d.get("n") is None else int(d["n"]),
                   seed=None if d.get("seed") is None else int(d["seed"]),
                   protocol=str(d.get("protocol", "")), params=dict(d.get("params", {})),
                   assignment=str(d.get("assignment", ASSIGNMENT)))

    def to_json(self) -> str:
        """The plan as a JSON string: what the server publishes."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """A plan from :meth:`to_json`'s string."""
        return cls.from_dict(json.loads(text))

    def __repr__(self) -> str:
        def q_str(q):
            ch = f" x {q.channels} channels" if q.channels else ""
            fo = "" if q.oracle_name == "OLH" else f" {q.oracle_name}"
            fo += f" h={q.pool_size}" if q.pool_size else ""
            return f"v[{q.start}:{q.stop}]{ch}{fo} eps={q.epsilon:.4g}"

        shown: list[str] = []  # at most 4 groups and about 160 characters of them
        for qs in self.questions[:4]:
            text = " + ".join(q_str(q) for q in qs)
            if shown and sum(len(t) + 2 for t in shown) + len(text) > 160:
                break
            shown.append(text)
        more = f", ... ({self.n_groups - len(shown)} more)" if self.n_groups > len(shown) else ""
        who = f"{self.protocol}, " if self.protocol else ""
        return (f"Plan({who}n={self.n}, m={self.m}, {self.n_groups} groups: "
                f"{'; '.join(shown)}{more})")


def group_sizes(n: int, fractions: Sequence[float]) -> tuple[int, ...]:
    """Deterministic group sizes: floors of ``n * fraction``, remainder by largest fractional part.

    Ties go to the earlier group (the rule of :meth:`ldp.analysis.PEMConfig.group_sizes`).
    Equal fractions give sizes differing by at most one.
    """
    return tuple(int(b) for b in largest_remainder(n, fractions))


@njit(cache=True)
def _shuffle(labels, raw):  # pragma: no cover - compiled
    # Fisher-Yates; j = floor(raw * (i+1) / 2**64) computed exactly with 32-bit halves
    # (Lemire's multiply-shift, relative bias <= n / 2**64).
    n = labels.shape[0]
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for i in range(n - 1, 0, -1):
        r = raw[i - 1]
        b = np.uint64(i + 1)
        t = (r >> s32) * b + (((r & m32) * b) >> s32)
        j = np.int64(t >> s32)
        tmp = labels[i]
        labels[i] = labels[j]
        labels[j] = tmp


@njit(cache=True)
def _shuffle_range(labels, raw, lo):  # pragma: no cover - compiled
    # the steps i = lo + len(raw) .. lo + 1 of _shuffle, with raw[k] the draw of index lo + k
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    for k in range(raw.shape[0] - 1, -1, -1):
        i = lo + k + 1
        r = raw[k]
        b = np.uint64(i + 1)
        t = (r >> s32) * b + (((r & m32) * b) >> s32)
        j = np.int64(t >> s32)
        tmp = labels[i]
        labels[i] = labels[j]
        labels[j] = tmp


def assign_groups(n: int, fractions: Sequence[float], *, rng: np.random.Generator) -> np.ndarray:
    """Seeded random split of ``n`` users into groups (sizes from :func:`group_sizes`).

    Every assignment of users to groups with these sizes is equally likely
    (a Fisher-Yates shuffle of the label vector).  Used by every protocol and
    by both engines, so the same ``rng`` state gives the same groups.

    Parameters
    ----------
    n : int
        Number of users.
    fractions : sequence of float
        The groups' shares, as in :class:`Plan`.
    rng : numpy.random.Generator
        Stream of the shuffle (``n - 1`` raw 64-bit draws).

    Returns
    -------
    numpy.ndarray
        Group label of each user (``uint8`` or ``uint16``).
    """
    sizes = group_sizes(n, fractions)
    dt = np.uint8 if len(sizes) <= 256 else np.uint16
    labels = np.repeat(np.arange(len(sizes), dtype=dt), sizes)
    if n > 1:
        bg = rng.bit_generator
        if n - 1 <= _RAW_BLOCK or not hasattr(bg, "advance"):
            _shuffle(labels, bg.random_raw(n - 1))
        else:  # the same draws, a block at a time from the end (memory: a block, not 8 n bytes)
            for lo in range((n - 2) // _RAW_BLOCK * _RAW_BLOCK, -1, -_RAW_BLOCK):
                hi = min(n - 1, lo + _RAW_BLOCK)
                part = type(bg)()
                part.state = bg.state
                part.advance(lo)  # type: ignore[attr-defined]  # PCG64, Philox: checked above
                _shuffle_range(labels, part.random_raw(hi - lo), lo)
            bg.advance(n - 1)  # leave rng where the n - 1 draws leave it
    return labels


#: raw draws held at once by :func:`assign_groups`
_RAW_BLOCK = 2**20
