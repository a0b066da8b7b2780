"""An attacked population, run with either engine at any fraction of fake users.

A :class:`Scenario` fixes everything but the number of fake users: the
protocol's published plan, the targets, and the order in which accounts turn
fake (so ``f`` fake users are the first ``f`` of one order, :func:`ldp.attacks.fake_users`).
Their crafted reports (:func:`ldp.attacks.fake_reports`) are made once, in
chunks, as the runs need them, and serve both engines:

* ``engine="protocol"``: the honest users privatize their values
  (:meth:`~ldp.protocols.HeavyHitterProtocol.privatize`), the fake users'
  reports are merged in (:meth:`~ldp.protocols.ProtocolReports.concat`) and
  the server aggregates everything;
* ``engine="counts"``: the count engine with crafted users
  (:class:`ldp.engines.CraftedUsers`): the honest users' supports from their
  exact laws, the crafted reports' supports of the targets' answers **counted**
  on the crafted reports themselves, their supports of everything else drawn
  with probability ``rho`` (:func:`ldp.attacks.crafting.report_rho`).  Exact
  for random perturbed values under OLH and for maximal-gain reports with one
  target; with several targets the searched seeds make ``rho`` an
  approximation (:mod:`ldp.engines.crafted`).  Input manipulators run the
  honest client, so (without FLH questions) their supports of the targets'
  answers are drawn from the honest law instead, no report made: ``p`` for
  her own target's answer, ``q`` for another's (exact; as for honest users,
  one report's supports of different answers are drawn independently).  FLH
  questions add the crafted reports' own tally to the honest one: exact for
  every kind.

The fake users replace honest users: the data set's users at their plan
indices do not report (with a fraction ``beta`` of fake users, ``(1 - beta) n``
honest users remain).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..core import Dataset, HeavyHitterResult, Plan, ProtocolReports, Question
from ..engines import CountSupport, CraftedUsers, GroupCounts, ReportSupport, SupportSource, prepare
from ..metrics import f1
from ..protocols import HeavyHitterProtocol
from ..validation import check_fraction, check_int, check_rng
from ..values import as_values, match_sorted, sort_unique, value_keys
from .crafting import check_kind, report_rho, support_matrix
from .fake import PLACEMENTS, fake_reports, fresh_targets, group_weights, placement_order

__all__ = ["Attack", "Scenario", "Outcome", "planted"]

#: fake users crafted together (the unit of lazy crafting)
CHUNK = 8192


@dataclass(frozen=True)
class Attack:
    """What the attacker does.

    Parameters
    ----------
    kind : {"input", "RPA", "MGA"}
        :mod:`ldp.attacks.crafting`.
    targets : int or array_like
        How many fresh targets (1 to 2**20; values nobody holds, :func:`ldp.attacks.fresh_targets`)
        or the target values.
    placement : {"plan", "chosen", "spread"}
        :func:`ldp.attacks.fake_users`.
    trials : int
        Hash seeds each maximal-gain report tries (several targets, OLH and
        HR; FLH: pool members); 1: the seed or pool member an honest device
        draws (:func:`ldp.attacks.craft`).
    popular : array_like, optional
        With ``"chosen"``: values the attacker knows to be frequent
        (:func:`ldp.attacks.group_weights`).
    cap : int, optional
        ``"MGA"``: each report is built for at most this many targets
        (:func:`ldp.attacks.craft`); default all.
    """

    kind: str = "MGA"
    targets: object = 1
    placement: str = "plan"
    trials: int = 64
    popular: object = None
    cap: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", check_kind(self.kind))
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, got {self.placement!r}")
        check_int(self.trials, "trials", 1, 2**16)
        if self.cap is not None:
            check_int(self.cap, "cap", 1, 2**20)
        if isinstance(self.targets, (int, np.integer)) and not isinstance(self.targets, (bool, np.bool_)):
            check_int(self.targets, "targets", 1, 2**20)


def planted(result: HeavyHitterResult, targets) -> int:
    """How many of ``targets`` the release contains."""
    t = as_values(targets, result.m, name="targets")
    if len(result) == 0:
        return 0
    return int(np.count_nonzero(match_sorted(sort_unique(result.heavy_hitters), t) >= 0))


@dataclass(frozen=True, eq=False)
class Outcome:
    """One attacked run: the release and what the attack did to it.

    ``alarm`` and ``checks``: what the server's checks saw (:class:`ldp.attacks.Server`; no checks: no alarm).
    """

    result: HeavyHitterResult
    targets: np.ndarray
    fake: int
    n: int
    f1: float
    planted: int
    ranks: np.ndarray = field(repr=False)  # release rank (1 = first) of each target, 0 when not released
    alarm: bool = False
    checks: dict = field(default_factory=dict, repr=False)

    @property
    def fraction(self) -> float:
        """Share of the users that are fake."""
        return self.fake / self.n


class Scenario:
    """One attacked population: a protocol, a data set, a plan, the targets and the fake users' order.

    Parameters
    ----------
    protocol : HeavyHitterProtocol
    data : Dataset or array_like
        The honest users' values (``m`` bits); fake users replace some of them.
    attack : Attack
    rng : None, int, SeedSequence, BitGenerator or Generator
        The plan's public seed, the targets, the order of fake accounts and
        the crafted reports (a simulation).
    max_fraction : float, default 0.5
        Most fake users any run may have, as a share of ``n``.

    Examples
    --------
    >>> import ldp
    >>> data = ldp.datasets.exponential(n=100_000, m=64, rng=0)
    >>> sc = ldp.attacks.Scenario(ldp.PEM(2.0, 16, 64), data, ldp.attacks.Attack("MGA", targets=1), rng=1)
    >>> out = sc.run(0.05, rng=2)
    >>> out.planted
    1
    """

    def __init__(self, protocol: HeavyHitterProtocol, data, attack: Attack, *, rng=None, max_fraction: float = 0.5):
        if not isinstance(protocol, HeavyHitterProtocol):
            raise TypeError(f"protocol must be an ldp heavy-hitter protocol, got {type(protocol).__name__}")
        if not isinstance(attack, Attack):
            raise TypeError(f"attack must be an ldp.attacks.Attack, got {type(attack).__name__}")
        self.protocol = protocol
        self.data: Dataset = prepare(data, protocol.m)
        self.attack = attack
        self.max_fraction = check_fraction(max_fraction, "max_fraction", open_high=False)
        s_plan, s_targets, s_order, self._s_craft = check_rng(rng).spawn(4)
        self.plan: Plan = protocol.plan(self.data.n, rng=s_plan)
        if isinstance(attack.targets, (int, np.integer)) and not isinstance(attack.targets, bool):
            self.targets = fresh_targets(protocol.m, int(attack.targets), data=self.data, rng=s_targets)
        else:
            self.targets = sort_unique(as_values(attack.targets, protocol.m, name="targets"))
        weights = None
        if attack.placement == "chosen":
            weights = group_weights(protocol, self.plan, self.targets, popular=attack.popular)
        self.weights = weights
        self.order = placement_order(self.plan, attack.placement, weights=weights,
                                     rng=s_order)[:int(self.max_fraction * self.data.n)]
        self.max_fake = int(self.order.shape[0])
        self._position = np.full(self.data.n, -1, dtype=np.int64)
        self._position[self.order] = np.arange(self.max_fake)
        self._seeds: list[int] = []  # per chunk of CHUNK fake users: the entropy of its crafted reports
        self._chunks: list[ProtocolReports | None] = []  # per chunk: its crafted reports, once made
        #: input manipulation (no FLH question): supports drawn from law 1 (_law_supports), reports made on demand
        self._by_law = attack.kind == "input" and not any(q.pool_size for qs_ in self.plan.questions for q in qs_)
        self._ind: list[dict] = []  # per chunk: {(g, j): (order positions, support matrix on the marked answers)}
        self._rho: list[dict] = []  # per chunk: {(g, j): (sum of per-report rho, reports)}
        self._whole: list[dict] = []  # per chunk: its aggregates over all its users (_aggregates)
        self._group_counts: GroupCounts | None = None  # CountSupport.group_counts under the plan
        qs = {q for qs_ in self.plan.questions for q in qs_}
        #: each question's marked answers: the targets' distinct answers
        self.marked: dict[Question, np.ndarray] = {q: sort_unique(q.answer(self.targets, protocol.m)) for q in qs}

    # -- fake users -------------------------------------------------------
    def count(self, fake) -> int:
        """Fake users for ``fake`` (a count, or a share of ``n`` as a float)."""
        if isinstance(fake, (float, np.floating)):
            fake = int(round(float(fake) * self.data.n))
        return check_int(fake, "fake", 0, self.max_fake)

    def users(self, fake) -> np.ndarray:
        """Plan indices of the first ``fake`` fake users, increasing."""
        f = self.count(fake)
        if 32 * f < self.data.n:
            return np.sort(self.order[:f])
        mine = np.zeros(self.data.n, dtype=bool)  # many of them: a mask over all users, read in order
        mine[self.order[:f]] = True
        return np.flatnonzero(mine)

    def _craft(self, upto: int) -> None:
        while len(self._seeds) * CHUNK < upto:
            c = len(self._seeds)
            self._seeds.append(int(self._s_craft.integers(0, 2**63)))
            self._chunks.append(None)
            ind, rho = self._law_supports(c) if self._by_law else self._counted_supports(c)
            self._ind.append(ind)
            self._rho.append(rho)
            self._whole.append(self._aggregates(c, None))

    def _chunk_reports(self, c: int) -> ProtocolReports:
        """The crafted reports of the fake users at order positions ``c * CHUNK ..`` (made once, when needed)."""
        rep = self._chunks[c]
        if rep is None:
            users = np.sort(self.order[c * CHUNK:(c + 1) * CHUNK])
            rep = self._chunks[c] = fake_reports(self.protocol, self.plan, targets=self.targets, users=users,
                                                 kind=self.attack.kind, trials=self.attack.trials,
                                                 cap=self.attack.cap,
                                                 rng=np.random.SeedSequence(self._seeds[c], spawn_key=(c,)))
        return rep

    def _counted_supports(self, c: int) -> tuple[dict, dict]:
        """Chunk ``c``'s supports of the marked answers, counted on its crafted reports."""
        rep = self._chunk_reports(c)
        ind, rho = {}, {}
        for g, qs in enumerate(self.plan.questions):
            gu = rep.users[rep.labels == g]
            for j, q in enumerate(qs):
                r = rep.group_reports(g)[j]
                o = q.oracle()
                S = support_matrix(o, r, self.marked[q]) if r.n else np.zeros((0, len(self.marked[q])), bool)
                ind[g, j] = (self._position[gu], S)
                rho[g, j] = (report_rho(o, self.attack.kind, r) * r.n if r.n else 0.0, r.n)
        return ind, rho

    def _law_supports(self, c: int) -> tuple[dict, dict]:
        """Input manipulation: chunk ``c``'s supports of the marked answers drawn from law 1, not from reports.

        Each fake user holds one target (the targets in turn, as :func:`ldp.attacks.fake_reports` assigns
        them) and runs the honest client: her report supports her target's answer with probability ``p``
        and each other marked answer with ``q``, independently across questions; as for honest users
        (:mod:`ldp.engines`), one report's supports of different answers are drawn independently.
        """
        users = np.sort(self.order[c * CHUNK:(c + 1) * CHUNK])
        draw = np.random.default_rng(np.random.SeedSequence(self._seeds[c], spawn_key=(c, 1)))
        labels = self.plan.labels()[users]
        held = self.targets[draw.permutation(np.resize(np.arange(self.targets.shape[0]), users.shape[0]))]
        ind, rho = {}, {}
        for g, qs in enumerate(self.plan.questions):
            in_g = labels == g
            gu, ng = users[in_g], int(np.count_nonzero(in_g))
            for j, q in enumerate(qs):
                o, mk = q.oracle(), self.marked[q]
                S = draw.random((ng, mk.shape[0])) < o.q
                S[np.arange(ng), match_sorted(mk, q.answer(held[in_g], self.protocol.m))] = draw.random(ng) < o.p
                ind[g, j] = (self._position[gu], S)
                rho[g, j] = (float(o.q) * ng, ng)
        return ind, rho

    def _aggregates(self, c: int, f: int | None, dropped: np.ndarray | None = None) -> dict:
        """Chunk ``c``'s crafted supports of the marked answers, pairs and FLH tallies, of its users before ``f``.

        ``f`` None: all of them (kept per chunk, so a run adds whole chunks' sums and masks only its last chunk).
        ``dropped``: a mask over order positions of fake users left out (a detector's cleaning).
        """
        out: dict = {}
        for g, qs in enumerate(self.plan.questions):
            rows = []
            for j, q in enumerate(qs):
                pos, S = self._ind[c][g, j]
                keep = slice(None) if f is None else pos < f
                if dropped is not None:
                    keep = (pos < (self.max_fake if f is None else f)) & ~dropped[pos]
                if q.pool_size:  # FLH: the crafted reports' own tally (exact, ldp.engines.crafted)
                    out["tally", g, j] = q.oracle().tally(self._chunk_reports(c).group_reports(g)[j][keep])
                rows.append(S[keep])
                out["marked", g, j] = rows[-1].sum(axis=0).astype(np.int64)
            for (ja, Sa), (jb, Sb) in combinations(enumerate(rows), 2):
                # counts below 2**53: the float product (BLAS) is exact
                out["joint", g, ja, jb] = np.rint(Sa.T.astype(np.float64) @ Sb.astype(np.float64)).astype(np.int64)
        return out

    def fake_reports(self, fake) -> ProtocolReports | None:
        """The crafted reports of the first ``fake`` fake users (``None`` for none)."""
        f = self.count(fake)
        if f == 0:
            return None
        self._craft(f)
        parts = []
        for c in range(-(-f // CHUNK)):
            rep = self._chunk_reports(c)
            parts.append(rep if (c + 1) * CHUNK <= f else _subset(rep, self._position[rep.users] < f))
        return ProtocolReports.concat(parts)

    def _dropped(self, drop, f: int) -> np.ndarray | None:
        """A mask over order positions of the fake users at plan indices ``drop`` (None: none dropped)."""
        if drop is None:
            return None
        d = np.asarray(drop).reshape(-1)
        if d.size and (d.dtype.kind not in "iu" or d.min() < 0 or d.max() >= self.data.n
                       or not ((self._position[d] >= 0) & (self._position[d] < f)).all()):
            raise ValueError(f"drop must be plan indices of the run's {f} fake users (Scenario.users)")
        out = np.zeros(self.max_fake, dtype=bool)
        out[self._position[d.astype(np.int64)]] = True
        return out if out.any() else None

    def crafted(self, fake, *, drop=None) -> CraftedUsers | None:
        """The count engine's view of the first ``fake`` fake users (:class:`ldp.engines.CraftedUsers`).

        ``drop``: plan indices of fake users whose reports the server dropped (a detector's cleaning):
        they are left out altogether.  Their share of the crafted reports' ``rho`` is kept (the mean over
        the chunks used): exact when every crafted report has the same ``rho``.
        """
        f = self.count(fake)
        dropped = self._dropped(drop, f)
        if f == 0 or (dropped is not None and dropped[:f].all()):
            return None
        self._craft(f)
        G = self.plan.n_groups
        marked: dict = {}
        rho: dict = {}
        joint: dict = {}
        tallies: dict = {}
        whole, last = divmod(f, CHUNK)  # chunks all of whose users are among the first f, and the rest
        if dropped is None:
            parts = self._whole[:whole] + ([self._aggregates(whole, f)] if last else [])
        else:
            parts = [self._aggregates(c, f, dropped) for c in range(-(-f // CHUNK))]
        used = range(-(-f // CHUNK))
        total = {key: sum(p[key] for p in parts) for key in parts[0]}
        for g, qs in enumerate(self.plan.questions):
            for j, q in enumerate(qs):
                if q.pool_size:
                    tallies[g, q] = total["tally", g, j]
                if q not in marked:
                    marked[q] = (self.marked[q], np.zeros((G, len(self.marked[q])), dtype=np.int64))
                marked[q][1][g] = total["marked", g, j]
                tot, cnt = rho.get(q, (0.0, 0))
                add = [self._rho[c][g, j] for c in used]
                rho[q] = (tot + sum(a for a, _ in add), cnt + sum(b for _, b in add))
            for ja, jb in combinations(range(len(qs)), 2):
                joint[g, qs[ja], qs[jb]] = total["joint", g, ja, jb]
        rho_q = {q: (t / c if c else 0.0) for q, (t, c) in rho.items()}
        users = self.users(f) if dropped is None else np.sort(self.order[:f][~dropped[:f]])
        return CraftedUsers(users=users, rho=rho_q, marked=marked, joint=joint, tallies=tallies)

    # -- runs ---------------------------------------------------------------
    def source(self, fake, *, engine: str = "counts", rng=None, drop=None) -> SupportSource:
        """The support source of a run with ``fake`` fake users (a count or a share of ``n``).

        ``drop`` (count engine): plan indices of fake users left out, as if the server had dropped their
        reports (:meth:`crafted`); the groups shrink by them.
        """
        f = self.count(fake)
        s_a, s_b = check_rng(rng).spawn(2)
        if engine == "counts":
            if self._group_counts is None:  # the plan's true counts per group, shared by every run
                self._group_counts = CountSupport.group_counts(self.data, self.plan.labels(), self.plan.n_groups)
            gc = self._group_counts
            crafted = self.crafted(f, drop=drop)  # checks drop
            if drop is not None and len(drop):  # the dropped users no longer count among their groups
                d = np.asarray(drop, dtype=np.int64)
                gc = gc.without(self.plan.labels()[d], self.data.user_index[d], keep_zeros=False)
            return CountSupport(self.data, self.plan.labels(), self.plan, rng_draw=s_a, rng_keys=s_b,
                                crafted=crafted, group_counts=gc)
        if engine != "protocol":
            raise ValueError(f"engine must be 'counts' or 'protocol', got {engine!r}")
        if drop is not None:
            raise ValueError("drop is for the count engine; with reports, clean them (SupportCountDetector.clean)")
        honest = np.setdiff1d(np.arange(self.data.n), self.users(f), assume_unique=True)
        s_priv, s_agg = s_a, s_b
        parts = [self.protocol.privatize(self.data.values[honest], plan=self.plan, users=honest, rng=s_priv)]
        fake_part = self.fake_reports(f)
        if fake_part is not None:
            parts.append(fake_part)
        return ReportSupport(ProtocolReports.concat(parts), rng=s_agg)

    def run(self, fake, *, engine: str = "counts", rng=None) -> Outcome:
        """Aggregate a run with ``fake`` fake users: the release and what the attack did to it."""
        f = self.count(fake)
        return self.outcome(self.protocol.identify(self.source(f, engine=engine, rng=rng)), f)

    def outcome(self, result: HeavyHitterResult, fake, **extra) -> Outcome:
        """What a release ``result`` of a run with ``fake`` fake users holds of the targets (``extra``: Outcome's)."""
        f = self.count(fake)
        hh = result.heavy_hitters
        ranks = np.zeros(self.targets.shape[0], dtype=np.int64)
        if len(result):
            keys = value_keys(hh)
            order = np.argsort(keys, kind="stable")
            pos = match_sorted(hh[order], self.targets)
            ranks = np.where(pos >= 0, order[np.maximum(pos, 0)] + 1, 0)
        top = self.data.top(min(self.protocol.k, self.data.n_distinct))
        return Outcome(result, self.targets, f, self.data.n, f1(top, hh), int(np.count_nonzero(ranks)), ranks,
                       **extra)


def _subset(rep: ProtocolReports, keep: np.ndarray) -> ProtocolReports:
    """The reports of the users ``keep`` (a mask over ``rep.users``) select."""
    rows = []
    for g in range(rep.plan.n_groups):
        m = keep[rep.labels == g]
        rows.append([r[m] for r in rep.group_reports(g)])
    return ProtocolReports(rep.protocol, rep.params, rep.plan, rep.labels[keep], rows, users=rep.users[keep])
