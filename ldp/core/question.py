"""Questions and plans: what users are asked, and how they are split into groups.

* :class:`Question` -- one frequency-oracle report a user sends: a bit range
  of her value (a prefix for PEM, a segment for SPM / the strawman, a block
  paired with a channel for MCM, or the whole value), privatized by the
  oracle it names (OLH unless said otherwise) at a given budget.
* :class:`Plan` -- the user groups of a protocol run and the questions each
  group answers (one report per question).
* :func:`group_sizes` and :func:`assign_groups` (:mod:`ldp.core.assignment`)
  -- the seeded random split of the users into groups of (almost) equal
  size, the *one* function used by all protocols and by both engines, so
  that the same seed puts every user in the same group whichever engine runs.

References
----------
.. [PEM] T. Wang, N. Li, S. Jha, "Locally Differentially Private Heavy Hitter
   Identification", sections 2.2.2, 3 and 4.1.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, cast

import numpy as np

from ..oracles import hashing
from ..safefiles import loads_json
from ..validation import check_epsilon, check_int
from ..values import MAX_BITS, prefix
from .assignment import MAX_USERS, assign_groups, group_sizes, trace_positions
from .oracle_specs import ORACLES, check_oracle, check_pool_size, oracle_for

__all__ = ["Question", "Plan", "ASSIGNMENT", "MAX_USERS", "MAX_GROUPS", "MAX_PLAN_BYTES", "PlanError",
           "make_question", "group_sizes", "assign_groups", "segment", "channel_hash"]

#: the most groups a plan can have (group labels are ``uint16``; the wire format's group field too)
MAX_GROUPS = 2**16 - 1
#: the largest plan JSON read (:meth:`Plan.from_json`): 16 MiB, room for the largest plans (about 125 bytes per
#: question; a PEM plan of 1023 groups is 125 KiB) while a hostile text costs at most that to refuse
MAX_PLAN_BYTES = 2**24
#: :meth:`Plan.group_of` follows at most this many users through the shuffle, else it builds :meth:`Plan.labels`
FEW_USERS = 16


class PlanError(ValueError):
    """A plan (or its JSON) that cannot be used; the message names the entry and what is wrong."""


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
    return hashing.hash_values_one_seed(seed, values, m, channels)


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

    def answer(self, values: np.ndarray, m: int, *, channel: np.ndarray | None = None,
               bits: np.ndarray | None = None) -> np.ndarray:
        """Each user's (un-perturbed) answer, canonical ``width``-bit values.

        ``channel`` and ``bits``: the values' :func:`channel_hash` with this
        question's ``channels`` and ``seed``, and their :func:`segment`
        ``[start, stop)``, when the caller has them already (the questions of
        one plan share the hashes, a data set's runs the segments); computed
        when omitted.
        """
        seg = segment(values, m, self.start, self.stop) if bits is None else bits
        if not self.channels:
            return seg
        c = channel_hash(values, m, self.channels, self.seed) if channel is None else channel
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
    def from_dict(cls, d: dict, m: int | None = None) -> Question:
        """A question from :meth:`to_dict`'s dict, checked.

        Parameters
        ----------
        d : dict
            ``start``, ``stop``, ``epsilon``, ``channels``, ``seed`` and
            optionally ``oracle`` (default ``"OLH"``).
        m : int, optional
            Bits of the plan's values: ``stop`` must be at most ``m``.

        Raises
        ------
        PlanError
            A missing or unknown entry, a wrong type, a bit range outside
            ``[0, m]``, a budget or width the oracle refuses.
        """
        if not isinstance(d, dict):
            raise PlanError(f"a question must be a JSON object, got {type(d).__name__}")
        missing = [k for k in ("start", "stop", "epsilon", "channels", "seed") if k not in d]
        unknown = sorted(set(d) - {"start", "stop", "epsilon", "channels", "seed", "oracle", "pool_size", "pool_seed"})
        if missing or unknown:
            wrong = "; ".join(([f"missing {', '.join(missing)}"] if missing else [])
                              + ([f"unknown {', '.join(unknown)}"] if unknown else []))
            raise PlanError(f"a question needs start, stop, epsilon, channels, seed (and optionally oracle); {wrong}")
        try:
            start = check_int(d["start"], "start", 0, MAX_BITS - 1)
            stop = check_int(d["stop"], "stop", start + 1, MAX_BITS if m is None else m)
            channels = check_int(d["channels"], "channels", 0, 2**32)
            seed = check_int(d["seed"], "seed", 0, 2**64 - 1)
            if isinstance(d["epsilon"], bool) or not isinstance(d["epsilon"], Real):
                raise TypeError(f"epsilon must be a number, got {d['epsilon']!r}")
            eps = check_epsilon(float(d["epsilon"]))
            spec = d.get("oracle", "OLH")
            if spec not in ORACLES:
                raise ValueError(f"oracle must be one of {ORACLES}, got {spec!r}")
            pool = check_pool_size(spec, d["pool_size"]) if "pool_size" in d else check_pool_size(spec, None)
            if spec == "FLH" and "pool_size" not in d:
                raise ValueError("an FLH question needs pool_size and pool_seed (its public pool)")
            pool_seed = check_int(d.get("pool_seed", 0), "pool_seed", 0, 2**64 - 1) if pool else 0
            q = cls(start, stop, eps, channels, seed, spec, pool, pool_seed)
            if q.channels and q.seg_bits > 64:
                raise ValueError(f"a question with channels must be about at most 64 bits, got {q.seg_bits}")
            q.oracle()  # the oracle accepts the budget and the width
        except (TypeError, ValueError) as err:
            raise PlanError(f"question {d!r}: {err}") from None
        return q


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
    def labels_dtype(self) -> np.dtype:
        """The dtype of the group labels: ``uint8`` up to 256 groups, else ``uint16``."""
        return np.dtype(np.uint8 if self.n_groups <= 256 else np.uint16)

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
        """Groups whose users answer ``question`` (from an index of the plan's questions, built once per plan)."""
        index = self.__dict__.get("_asking")
        if index is None:  # memoised on this (frozen) plan object like the labels, dropped when pickled
            index = {}
            for g, qs in enumerate(self.questions):
                for q in dict.fromkeys(qs):
                    index.setdefault(q, []).append(g)
            index = {q: tuple(gs) for q, gs in index.items()}
            object.__setattr__(self, "_asking", index)
        return index.get(question, ())

    def labels(self) -> np.ndarray:
        """The group of every user ``0 .. n-1`` (read-only ``uint8``/``uint16`` array).

        :func:`assign_groups` (every assignment with the sizes
        :meth:`sizes` equally likely) driven by ``numpy.random.default_rng(seed)``:
        anyone holding the plan computes the same groups, so a user (or a batch
        of users) learns her group from the plan and her index alone.  Computed
        once per plan object (``O(n)`` time, about 10 ms for ``n = 10**6``;
        ``n`` bytes of memory, the random draws made in chunks) and cached.
        One user's group alone: :meth:`group_of`.
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

    def group_of(self, users) -> np.ndarray:
        """The groups of a few users, without building :meth:`labels`: what a device computes.

        Follows each user's position back through the Fisher-Yates shuffle of
        :func:`assign_groups` (only the steps that can move it), so it needs
        ``O(1)`` memory but reads the shuffle's random draws from the user's
        index up: ``O(n - i)`` time for user ``i``, one pass for all the given
        users together (``O(k (n - i))`` for ``k`` of them).  Measured at
        ``i = 0`` (``benchmarks/bench_client.py``, this project's 2-core machine,
        2026-11-26): 1.0 s of CPU time for ``n = 10**8``, 7.1 s for ``n = 10**9``,
        with no memory growth.  The group never changes for a plan: a device computes it
        once.  For more than :data:`FEW_USERS` distinct users (or when the plan
        already holds them) it reads :meth:`labels` instead.

        Parameters
        ----------
        users : int or array_like of int
            Plan indices in ``[0, n)``.

        Returns
        -------
        numpy.ndarray
            ``int64`` group of each (0-d for an int).
        """
        n = self.n_users
        arr = np.asarray(users)
        if arr.dtype.kind not in "iu" or isinstance(users, (bool, np.bool_)):
            raise TypeError(f"users must be plan indices (integers in [0, n = {n})), got {users!r}")
        flat = arr.reshape(-1).astype(np.int64)
        if flat.size and (flat.min() < 0 or flat.max() >= n):
            bad = int(flat.min() if flat.min() < 0 else flat.max())
            raise ValueError(f"users must be plan indices in [0, n = {n}), found {bad}")
        if self.assignment != ASSIGNMENT:
            raise ValueError(f"unknown group assignment rule {self.assignment!r}; this version of ldp "
                             f"implements {ASSIGNMENT!r}")
        distinct, inverse = np.unique(flat, return_inverse=True)
        if "_labels" in self.__dict__ or distinct.size > FEW_USERS:
            return self.labels()[flat].astype(np.int64).reshape(arr.shape)
        start = trace_positions(n, int(cast(int, self.seed)), distinct)
        bounds = np.cumsum(self.sizes())
        groups = np.searchsorted(bounds, start, side="right").astype(np.int64)
        return groups[inverse].reshape(arr.shape)

    def __getstate__(self):  # the cached labels and question index are not part of the state
        state = dict(self.__dict__)
        state.pop("_labels", None)
        state.pop("_asking", None)
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
        """A plan from :meth:`to_dict`'s dict, checked before anything is computed from it.

        Raises
        ------
        PlanError
            (a ``ValueError``) naming the entry and the problem: a missing or
            unknown entry, ``m`` outside ``[1, 4096]``, group shares that are
            not positive or do not sum to 1, more than :data:`MAX_GROUPS`
            groups, a question the oracle refuses (:meth:`Question.from_dict`),
            ``n`` outside ``[number of groups, MAX_USERS = 2**32]``, ``n``
            without ``seed`` or the other way round, an unknown assignment
            rule, or contradictory parameters: ``params['m']`` other than
            ``m``, or a group whose budgets add up to more than
            ``params['epsilon']`` (a user would spend more than her budget).
        """
        if not isinstance(d, dict):
            raise PlanError(f"a plan must be a JSON object, got {type(d).__name__}")
        known = {"m", "fractions", "questions", "n", "seed", "protocol", "params", "assignment"}
        missing = [k for k in ("m", "fractions", "questions") if k not in d]
        if missing:
            raise PlanError(f"the plan has no {', '.join(repr(k) for k in missing)}: a plan needs m (bits per "
                            f"value), fractions (the groups' shares) and questions (each group's reports); "
                            f"it has {sorted(d) or 'no entries'}")
        unknown = sorted(set(d) - known)
        if unknown:
            raise PlanError(f"the plan has unknown entries {unknown}; a plan has {sorted(known)}")
        try:
            m = check_int(d["m"], "m", 1, MAX_BITS)
        except (TypeError, ValueError) as err:
            raise PlanError(f"the plan's {err}") from None
        fr, qs = d["fractions"], d["questions"]
        if not isinstance(fr, list) or not 1 <= len(fr) <= MAX_GROUPS:
            raise PlanError(f"the plan's fractions must be a list of 1 to {MAX_GROUPS} group shares, got {fr!r:.80}")
        if not all(isinstance(f, Real) and not isinstance(f, bool) and math.isfinite(float(f)) and float(f) > 0
                   for f in fr):
            raise PlanError(f"the plan's fractions must be finite numbers > 0, got {fr!r:.200}")
        if abs(math.fsum(fr) - 1.0) > 1e-9:
            raise PlanError(f"the plan's fractions must sum to 1, they sum to {math.fsum(fr)!r}")
        if not isinstance(qs, list) or len(qs) != len(fr):
            raise PlanError(f"the plan's questions must be a list with one entry per group ({len(fr)} groups), "
                            f"got {type(qs).__name__} of length {len(qs) if isinstance(qs, list) else '-'}")
        questions = []
        for g, row in enumerate(qs):
            if not isinstance(row, list) or not row:
                raise PlanError(f"the plan's questions[{g}] must be a non-empty list of questions, got {row!r:.80}")
            try:
                questions.append(tuple(Question.from_dict(q, m) for q in row))
            except PlanError as err:
                raise PlanError(f"the plan's group {g}: {err}") from None
        n, seed = d.get("n"), d.get("seed")
        if (n is None) != (seed is None):
            raise PlanError(f"the plan must give both n and seed (a plan for a population) or neither (a layout); "
                            f"got n = {n!r}, seed = {seed!r}")
        try:
            if n is not None:
                n = check_int(n, "n", len(fr), MAX_USERS)
                seed = check_int(seed, "seed", 0, 2**64 - 1)
        except (TypeError, ValueError) as err:
            why = (f" (the number of users, at least the {len(fr)} groups and at most MAX_USERS = 2**32, what the "
                   f"group assignment represents)" if "n must" in str(err) else " (the assignment's public seed)")
            raise PlanError(f"the plan's {err}{why}") from None
        protocol, params, assignment = d.get("protocol", ""), d.get("params", {}), d.get("assignment", ASSIGNMENT)
        if not isinstance(protocol, str) or not isinstance(params, dict) or not isinstance(assignment, str):
            raise PlanError("the plan's protocol and assignment must be strings and its params a JSON object")
        if assignment != ASSIGNMENT:
            raise PlanError(f"the plan's group assignment rule {assignment!r} is unknown; this version of ldp "
                            f"implements {ASSIGNMENT!r}")
        if "m" in params and params["m"] != m:
            raise PlanError(f"the plan's params say m = {params['m']!r} but its m is {m}: contradictory")
        budget = params.get("epsilon")
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, Real) or not math.isfinite(float(budget)) \
                    or float(budget) <= 0:
                raise PlanError(f"the plan's params['epsilon'] must be a finite number > 0, got {budget!r}")
            for g, row in enumerate(questions):
                spent = math.fsum(q.epsilon for q in row)
                if spent > float(budget) * (1 + 1e-9):
                    raise PlanError(f"the plan's group {g} spends epsilon = {spent!r} in its reports, more than "
                                    f"the budget params['epsilon'] = {budget!r}: contradictory")
        return cls(m, tuple(float(f) for f in fr), tuple(questions), n=n, seed=seed, protocol=protocol,
                   params=dict(params), assignment=assignment)

    def to_json(self) -> str:
        """The plan as a JSON string: what the server publishes (canonical: sorted keys)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """A plan from :meth:`to_json`'s string, checked (:meth:`from_dict`).

        Raises
        ------
        TypeError
            ``text`` is not a ``str`` (or ``bytes``).
        PlanError
            More than :data:`MAX_PLAN_BYTES` bytes or nested deeper than
            :data:`ldp.safefiles.MAX_JSON_DEPTH` (both checked before the
            text is parsed), not JSON, or not a valid plan (the message names
            the entry).
        """
        if isinstance(text, (bytes, bytearray)):
            if len(text) > MAX_PLAN_BYTES:
                raise PlanError(f"the plan is {len(text):,} bytes of JSON, more than MAX_PLAN_BYTES = "
                                f"{MAX_PLAN_BYTES:,}")
            text = bytes(text).decode("utf-8", errors="replace")
        if not isinstance(text, str):
            raise TypeError(f"Plan.from_json takes the plan's JSON text, got {type(text).__name__}")
        try:
            d = loads_json(text, max_bytes=MAX_PLAN_BYTES, limit_name="MAX_PLAN_BYTES")
        except json.JSONDecodeError as err:
            raise PlanError(f"the plan is not valid JSON ({err})") from None
        except ValueError as err:
            raise PlanError(f"the plan {err}") from None
        return cls.from_dict(d)

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
