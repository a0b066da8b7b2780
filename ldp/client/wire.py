"""The wire format: one user's report as bytes, and the checks a server makes on such bytes.

A report is what one device sends for one plan: a fixed 27-byte header, then
the fields of her oracle reports, one per question of her group, in the
plan's order.  All integers are little-endian.

======  =====  ==============================================================
offset  bytes  field
======  =====  ==============================================================
0       1      format version, :data:`VERSION` (= 1)
1       16     plan id: the first 16 bytes of the SHA-256 of the published
               plan's canonical JSON (:func:`plan_id`)
17      8      the user's plan index ``i`` (``uint64``)
25      2      her group ``g`` (``uint16``), which the plan fixes for ``i``
27      ...    for each question ``j`` of group ``g``, for each field of the
               oracle's reports (:meth:`ldp.oracles.Reports.layout`, in order):
               the field's bytes
======  =====  ==============================================================

The fields per oracle (sizes for the PEM default, OLH at ``eps = 2``):

* OLH (and BLH): ``seed`` (8 bytes, the public hash seed), ``y`` (the
  smallest unsigned integer holding ``d' - 1``: 1 byte for ``d' = 9``);
* HR: ``seed`` (8), ``y`` (smallest unsigned integer holding ``B b - 1``);
* CMS: ``seed`` (8), ``bits`` (``ceil(w / 8)`` bytes, :func:`numpy.packbits`
  order, padding bits 0);
* GRR: ``y`` (smallest unsigned integer holding ``d - 1``);
* OUE: ``bits`` (``ceil(d / 8)`` bytes, as CMS).

So a report of a group has a fixed length, known from the plan: 36 bytes for
a PEM report with OLH at ``eps = 2``.  Nothing in a report depends on the
user's value except the randomized fields (``y``, ``bits``); the hash seed is
drawn independently of the value and of the private coins.

A bare frequency oracle (no protocol) has its own "plan": its parameters.
Its plan id is the SHA-256 of their canonical JSON, its reports have one
group (0) and one question, and the user index is any integer in
``[0, 2**63)``.

:func:`parse_reports` checks a batch of such bytes, each report on its own,
vectorised (about a microsecond per report): length of the header, version,
plan id, user index in ``[0, n)``, group equal to the plan's group of that
user, total length equal to that group's, and every field in its range (a
symbol below its bound, no padding bit set).  It never raises for a bad
report: it lists each with what is wrong, so the aggregator can refuse it
and name it (:meth:`ldp.protocols.HeavyHitterProtocol.aggregator`).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import MAX_PLAN_BYTES, Plan, ProtocolReports
from ..core.bytecache import ByteCache
from ..oracles.base import Field, FrequencyOracle, Reports

__all__ = ["VERSION", "HEADER_BYTES", "WIRE_TYPES", "plan_id", "Target", "target", "encode_reports",
           "encode_protocol_reports", "ParsedReports", "parse_reports", "check_report", "report_bytes"]

#: the wire format's version (first byte of every report)
VERSION = 1
#: bytes of the header: version, plan id, user index, group
HEADER_BYTES = 27
_PID = slice(1, 17)
_USER = slice(17, 25)
_GROUP = slice(25, 27)


def plan_id(plan) -> bytes:
    """The 16-byte id of a plan (or of a bare oracle's parameters): SHA-256 of its canonical JSON.

    Parameters
    ----------
    plan : Plan or ldp.oracles.FrequencyOracle

    Returns
    -------
    bytes
        ``sha256(b"ldp-plan\\0" + plan.to_json())[:16]`` for a plan,
        ``sha256(b"ldp-oracle\\0" + json.dumps(oracle.params, sort_keys=True))[:16]``
        for an oracle.
    """
    if isinstance(plan, Plan):
        return hashlib.sha256(b"ldp-plan\0" + plan.to_json().encode()).digest()[:16]
    if isinstance(plan, FrequencyOracle):
        text = json.dumps(plan.params, sort_keys=True)
        return hashlib.sha256(b"ldp-oracle\0" + text.encode()).digest()[:16]
    raise TypeError(f"plan must be an ldp.core.Plan or a frequency oracle, got {type(plan).__name__}")


@dataclass(frozen=True, eq=False)
class Target:
    """What the wire format needs of a published plan: its id, users, groups and each question's oracle.

    Made by :func:`target` from a :class:`~ldp.core.Plan` (a protocol run) or
    a frequency oracle (one group, one question).

    Attributes
    ----------
    source : Plan or FrequencyOracle
    pid : bytes
        :func:`plan_id`.
    n : int
        Users of the plan (a bare oracle: ``2**63``, any index of an ``int64``).
    oracles : tuple of tuple of FrequencyOracle
        Each group's oracles, one per question.
    layouts : tuple of tuple of tuple of Field
        ``layouts[g][j]``: the fields of group ``g``'s ``j``-th report.
    lengths : numpy.ndarray
        Bytes of a report of each group, header included.
    """

    source: Any
    pid: bytes
    n: int
    oracles: tuple
    layouts: tuple
    lengths: np.ndarray = field(repr=False)

    @property
    def n_groups(self) -> int:
        return len(self.oracles)

    def group_of(self, users: np.ndarray) -> np.ndarray:
        """The groups the plan gives to ``users`` (checked plan indices)."""
        if isinstance(self.source, Plan):
            return self.source.group_of(users)
        return np.zeros(np.asarray(users).shape, dtype=np.int64)

    def describe_group(self, g: int) -> str:
        return f"group {g} of this plan" if isinstance(self.source, Plan) else "this oracle"


def target(plan) -> Target:
    """The :class:`Target` of a plan (a :class:`~ldp.core.Plan`, its JSON) or of a frequency oracle."""
    if isinstance(plan, str):
        plan = plan_from_json(plan)
    if isinstance(plan, Plan):
        if plan.n is None or plan.seed is None:
            raise ValueError("the plan has no users (n and seed unset); a deployment's plan is made with "
                             "protocol.plan(n, rng=...)")
        return _plan_target(plan)
    if isinstance(plan, FrequencyOracle):
        layout = tuple(plan.reports_class.layout(plan.params))
        return Target(plan, plan_id(plan), 2**63, ((plan,),), ((layout,),),
                      np.array([HEADER_BYTES + sum(f.nbytes for f in layout)], dtype=np.int64))
    raise TypeError(f"plan must be an ldp.core.Plan, its JSON text or a frequency oracle, got {type(plan).__name__}")


def _plan_target(plan: Plan) -> Target:
    cached = plan.__dict__.get("_wire_target")  # one per (frozen) plan object, like its labels
    if cached is not None:
        return cached
    oracles = tuple(tuple(q.oracle() for q in qs) for qs in plan.questions)
    layouts = tuple(tuple(tuple(o.reports_class.layout(o.params)) for o in row) for row in oracles)
    lengths = np.array([HEADER_BYTES + sum(f.nbytes for lay in row for f in lay) for row in layouts], dtype=np.int64)
    t = Target(plan, plan_id(plan), plan.n_users, oracles, layouts, lengths)
    object.__setattr__(plan, "_wire_target", t)
    return t


#: bytes of parsed plans :func:`plan_from_json` keeps: a plan weighs the group labels it may come to hold
#: (``n`` bytes or ``2 n``) and a kilobyte per question; 256 MiB
PLAN_CACHE_BYTES = 2**28
_PLANS: ByteCache = ByteCache(PLAN_CACHE_BYTES, lambda p: (p.n or 0) * p.labels_dtype.itemsize
                              + 1024 * sum(len(qs) for qs in p.questions))


def plan_from_json(text: str) -> Plan:
    """:meth:`Plan.from_json`, remembered within :data:`PLAN_CACHE_BYTES` (a device reports with the same plan)."""
    if not isinstance(text, str) or len(text) > MAX_PLAN_BYTES:
        return Plan.from_json(text)  # refused there, uncached
    return _PLANS.get(text, lambda: Plan.from_json(text))


# ---------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------
def _le(a: np.ndarray, f: Field) -> np.ndarray:
    """A field's array as bytes per user, little-endian: ``uint8`` of shape ``(n, f.nbytes)``."""
    dt = np.dtype(f.dtype).newbyteorder("<")
    return np.ascontiguousarray(np.asarray(a).astype(dt, copy=False)).view(np.uint8).reshape(a.shape[0], f.nbytes)


def encode_reports(plan, users, group: int, reports: Sequence[Reports]) -> list[bytes]:
    """The wire bytes of users of one group, from their oracle reports (one :class:`Reports` per question).

    Parameters
    ----------
    plan : Plan, its JSON, or FrequencyOracle
        The published plan.
    users : array_like of int
        The users' plan indices (as many as each ``reports`` holds).
    group : int
        Their group (not checked here: a server checks it, :func:`parse_reports`).
    reports : sequence of ldp.oracles.Reports
        Their reports to each question of the group, in the plan's order,
        each made by the question's oracle (its parameters are checked).

    Returns
    -------
    list of bytes
        One report per user.
    """
    t = target(plan)
    g = int(group)
    if not 0 <= g < t.n_groups:
        raise ValueError(f"group must be in [0, {t.n_groups}), got {group}")
    reports = list(reports)
    if len(reports) != len(t.oracles[g]):
        raise ValueError(f"group {g} answers {len(t.oracles[g])} question(s), got {len(reports)} report sets")
    u = np.asarray(users, dtype=np.uint64).reshape(-1)
    k = u.shape[0]
    for j, (r, o) in enumerate(zip(reports, t.oracles[g])):
        if not isinstance(r, Reports) or r.params != o.params or len(r) != k:
            raise ValueError(f"reports[{j}] must be {k} reports of {o!r} (the plan's question {j} of group {g})")
    out = np.empty((k, int(t.lengths[g])), dtype=np.uint8)
    out[:, 0] = VERSION
    out[:, _PID] = np.frombuffer(t.pid, dtype=np.uint8)
    out[:, _USER] = u.astype("<u8").view(np.uint8).reshape(k, 8)
    out[:, _GROUP] = np.full(k, g, dtype="<u2").view(np.uint8).reshape(k, 2)
    pos = HEADER_BYTES
    for r, lay in zip(reports, t.layouts[g]):
        arrays = r.arrays
        for f in lay:
            out[:, pos:pos + f.nbytes] = _le(arrays[f.name], f)
            pos += f.nbytes
    width = out.shape[1]
    blob = out.tobytes()
    return [blob[i * width:(i + 1) * width] for i in range(k)]


def encode_protocol_reports(reports: ProtocolReports) -> list[bytes]:
    """The wire bytes of every user of a :class:`~ldp.core.ProtocolReports` (e.g. a seeded simulation), by user.

    Returns
    -------
    list of bytes
        One report per user, in the order of ``reports.users``.
    """
    plan = reports.plan
    out: list[bytes] = [b""] * reports.n
    for g in range(plan.n_groups):
        where = np.flatnonzero(reports.labels == g)
        if where.size:
            for i, b in zip(where, encode_reports(plan, reports.users[where], g, reports.group_reports(g))):
                out[i] = b
    return out


def report_bytes(plan, group: int) -> int:
    """Bytes of one report of ``group`` under ``plan`` (header included)."""
    t = target(plan)
    return int(t.lengths[int(group)])


# ---------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------
@dataclass
class ParsedReports:
    """A batch of wire reports after the checks of :func:`parse_reports`.

    Attributes
    ----------
    n_given : int
        Reports given.
    groups : dict
        ``groups[g] = (positions, users, reports)``: the valid reports of
        group ``g``, in input order: their positions in the batch, the users'
        plan indices (``int64``) and one :class:`ldp.oracles.Reports` per
        question of the group.
    problems : list of (int, str)
        Each refused report's position in the batch and what is wrong with
        it, by position (with ``every_problem=False``: at least the first
        refused report, and a few others).
    n_refused : int
        Reports refused.
    """

    n_given: int
    groups: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    n_refused: int = 0

    @property
    def n_valid(self) -> int:
        """Reports that passed every check."""
        return int(sum(len(pos) for pos, _, _ in self.groups.values()))

    def positions(self) -> np.ndarray:
        """Input positions of the valid reports (every group's, in the order of :attr:`groups`)."""
        parts = [pos for pos, _, _ in self.groups.values()]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def users(self) -> np.ndarray:
        """Plan indices of the valid reports (in the order of :meth:`positions`)."""
        parts = [u for _, u, _ in self.groups.values()]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


#: what a wire report may be: the bytes a device sent (a numpy array, a str, ... is refused, whatever its length)
WIRE_TYPES = (bytes, bytearray, memoryview)


def check_report(report, name: str = "report") -> None:
    """Raise ``TypeError`` unless ``report`` is bytes (:data:`WIRE_TYPES`): the one type check of every entry point."""
    if not isinstance(report, WIRE_TYPES):
        raise TypeError(f"{name} must be bytes (a wire report from ldp.client.report), got {type(report).__name__}")


def _lengths(reports: Sequence) -> np.ndarray:
    if not all(type(r) is bytes for r in reports):  # the common case in one pass; else name the first other one
        for i, r in enumerate(reports):
            check_report(r, f"reports[{i}]")
    return np.fromiter(map(len, reports), dtype=np.int64, count=len(reports))


class _Problems:
    """What is wrong with refused reports: each one's (``every``), or the first of each kind, and a count."""

    def __init__(self, every: bool):
        self.every = every
        self.found: dict[int, str] = {}
        self.count = 0

    def note(self, positions, why) -> None:
        """Refuse the reports at ``positions`` (increasing); ``why(i)`` describes the ``i``-th of them."""
        self.count += len(positions)
        for i in range(len(positions) if self.every else min(1, len(positions))):
            self.found[int(positions[i])] = why(i)


def parse_reports(plan, reports: Sequence[bytes], *, every_problem: bool = True) -> ParsedReports:
    """Check wire reports one by one, vectorised, and decode the valid ones.

    Parameters
    ----------
    plan : Plan, its JSON, or FrequencyOracle
        The published plan the reports must be for.
    reports : sequence of bytes
        Wire reports (:mod:`ldp.client.wire`).
    every_problem : bool, keyword-only
        Describe every refused report (default), or only the first one of
        each kind (what a caller refusing the whole batch at its first bad
        report needs: a batch of bad reports then costs no message per report).

    Returns
    -------
    ParsedReports
        The valid reports by group, and what is wrong with each other one.
        Duplicate users are *not* refused here (the aggregator remembers
        who reported).

    Raises
    ------
    TypeError
        An entry is not bytes (:func:`check_report`; a numpy array is refused
        even though it has a length and a buffer).
    """
    t = target(plan)
    if isinstance(reports, WIRE_TYPES):
        raise TypeError("reports must be a sequence of wire reports (bytes objects), not one bytes object; "
                        "use [report] for one")
    reports = reports if isinstance(reports, (list, tuple)) else list(reports)
    k = len(reports)
    lens = _lengths(reports)
    out = ParsedReports(k)
    problems = _Problems(every_problem)
    short = np.flatnonzero(lens < HEADER_BYTES)
    problems.note(short, lambda i: f"is {int(lens[short[i]])} bytes, shorter than the {HEADER_BYTES}-byte header: "
                                   f"truncated or not a report")
    buckets = np.unique(lens[lens >= HEADER_BYTES])
    found: dict[int, list] = {}
    for length in buckets:
        idx = np.flatnonzero(lens == length)
        blob = b"".join(reports) if idx.size == k else b"".join([reports[i] for i in idx])
        rows = np.frombuffer(blob, dtype=np.uint8).reshape(idx.size, int(length))
        _parse_bucket(t, rows, idx, int(length), problems, found)
    for g in sorted(found):
        parts = found[g]
        pos = np.concatenate([p[0] for p in parts])
        order = np.argsort(pos, kind="stable")
        users = np.concatenate([p[1] for p in parts])[order]
        reps = [type(parts[0][2][j]).concat([p[2][j] for p in parts])[order] for j in range(len(parts[0][2]))]
        out.groups[g] = (pos[order], users, reps)
    out.problems = sorted(problems.found.items())
    out.n_refused = problems.count
    return out


def _parse_bucket(t: Target, rows: np.ndarray, idx: np.ndarray, length: int, problems: _Problems,
                  found: dict) -> None:
    """Check the reports of one length (``rows``, at input positions ``idx``) and decode the valid ones."""
    version = rows[:, 0]
    pid_ok = np.all(rows[:, _PID] == np.frombuffer(t.pid, dtype=np.uint8), axis=1)
    users = np.ascontiguousarray(rows[:, _USER]).view("<u8").reshape(-1).astype(np.uint64)
    groups = np.ascontiguousarray(rows[:, _GROUP]).view("<u2").reshape(-1).astype(np.int64)
    bad = np.zeros(idx.size, dtype=bool)

    def refuse(mask: np.ndarray, why) -> None:
        new = mask & ~bad
        rs = np.flatnonzero(new)
        problems.note(idx[rs], lambda i: why(rs[i]))
        bad[new] = True

    refuse(version != VERSION, lambda r: f"has wire format version {int(version[r])}; this server reads "
                                         f"version {VERSION}")
    refuse(~pid_ok, lambda r: f"is for another plan (plan id {rows[r, _PID].tobytes().hex()}, this plan's is "
                              f"{t.pid.hex()})")
    refuse(users >= np.uint64(t.n), lambda r: f"names user {int(users[r])}, outside this plan's users "
                                              f"[0, n = {t.n})")
    refuse(groups >= t.n_groups, lambda r: f"names group {int(groups[r])}; this plan has {t.n_groups} group(s)")
    ok = ~bad
    if np.any(ok):
        expected = np.full(idx.size, -1, dtype=np.int64)
        expected[ok] = t.group_of(users[ok].astype(np.int64))
        refuse(groups != expected, lambda r: f"names group {int(groups[r])} but the plan puts user {int(users[r])} "
                                             f"in group {int(expected[r])}")
    refuse(t.lengths[np.minimum(groups, t.n_groups - 1)] != length,
           lambda r: f"is {length} bytes, but a report of {t.describe_group(int(groups[r]))} is "
                     f"{int(t.lengths[groups[r]])} bytes (truncated, or padded)")
    for group in np.unique(groups[~bad]):
        g = int(group)
        sel = np.flatnonzero(~bad & (groups == g))
        body = rows[sel]
        pos = HEADER_BYTES
        arrays: list[dict[str, np.ndarray]] = []
        wrong = np.zeros(sel.size, dtype=bool)
        for j, lay in enumerate(t.layouts[g]):
            fields = {}
            for f in lay:
                cols = np.ascontiguousarray(body[:, pos:pos + f.nbytes])
                pos += f.nbytes
                if f.packed:
                    a = cols
                else:
                    a = cols.view(np.dtype(f.dtype).newbyteorder("<")).reshape(-1).astype(f.dtype)
                inv = f.invalid(a)
                rs = np.flatnonzero(inv & ~wrong)

                def why(i, rs=rs, a=a, f=f, j=j) -> str:
                    what = (f"has bits set beyond {f.what}" if f.packed else
                            f"= {int(a[rs[i]])} is outside [0, {f.what})")
                    return f"has question {j}'s field {f.name!r} out of range: {f.name} {what}"

                problems.note(idx[sel[rs]], why)
                wrong |= inv
                fields[f.name] = a
            arrays.append(fields)
        keep = np.flatnonzero(~wrong)
        if keep.size:
            reps = [o.reports_class(o.params, **{name: a[keep] for name, a in fields.items()})
                    for o, fields in zip(t.oracles[g], arrays)]
            found.setdefault(g, []).append((idx[sel[keep]].astype(np.int64), users[sel[keep]].astype(np.int64),
                                            reps))
