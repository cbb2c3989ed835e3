"""A privacy audit of any agent: the contract's privacy checks, then a lower bound on its epsilon from the other
users' actions.

:func:`audit_agent` audits one agent (a registered name, an entry point or an import path
``"pkg.module:factory"``) end to end, in two stages; the privacy guide (``docs/guide/privacy.md``, "What each stage
changes, and what it cannot see") and the benchmarking guide ("Auditing a privacy claim") describe them for users.

**The contract stage** (:func:`contract_findings`) runs the privacy checks of
:func:`~privbandit.agents.check_agent` (:data:`~privbandit.agents.checks.PRIVACY_CHECKS`) on every user of a
synthetic stream, one at a time (:class:`ContractUsers`). They are deterministic: a failure is a refutation,
reported with the check's own message. They see leaks the empirical stage is blind to (a user's raw reward sign
read behind the release, masked on the empirical pair of streams by the user's own random arm). A failed check
that is not about privacy is reported as :data:`CONTRACT_NOT_PRIVACY`.

**The empirical stage** is built to have power against the agents that exist. A user's data reaches the other
users' actions only through a release after the user's round, so a probe run reads the agent's schedule
(``rounds_until_update``) and :func:`plan_designs` picks the target users around its releases. Each target gets
two neighbouring streams (:func:`neighbouring_streams`), the other users an offset set by pilot runs where the
release's decision turns on the target (:data:`PILOT_LEVEL`); the statistics count the watched users that took
arm 0 (joint DP, `def:JDP-interactive`, bounds exactly their joint law). Selection pilots choose the one test the
final runs make (:func:`select_tests`), so that no confidence is split: :func:`set_lower_bounds` gives
``epsilon_lower``, a 95% lower confidence bound, :attr:`AgentAudit.detectable` is the largest epsilon the draws
could ever refute, and :func:`futile` stops the final runs once they cannot refute the claim, which adds no false
refutation. Each run draws from its own seed, so the report does not depend on the worker (``jobs``) it ran on.
The privacy guide says why the audit uses repeated draws rather than one run with many canaries.

The agent's ledger is read as its own account (the worst user's composed epsilon, or :data:`LEDGER_MISSING`): a
ledger above the claim or missing fails on its own (:attr:`AgentAudit.ledger_ok`), and the verdict never rests on
it. ``epsilon_lower > epsilon`` is evidence (at 95%) that the agent breaks its claim; ``epsilon_lower <= epsilon``
proves nothing (a few pairs of streams, one statistic, a few thousand runs): the proof is the ledger's accounting
plus the paper's analysis.

References
----------
Source paper, `def:JDP-interactive`, `def:JDP`, `def:LDP`. Auditing by hypothesis testing: Jagielski,
Ullman & Oprea (2020); Nasr et al. (2021).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._validation import check_int
from ..privacy.audit import clopper_pearson
from ..privacy.replay import ReleaseTape
from ..privacy.spec import check_delta, check_epsilon
from .checks import (
    AGENT_CHECKS,
    PRIVACY_CHECKS,
    PRIVACY_HORIZON,
    ContractError,
    check_ledger_within_budget,
    play_batch,
    shared_replays,
    synthetic_stream,
)
from .registry import agent_is_private, make_agent
from .workers import agent_ref, check_jobs

__all__ = ["CONTRACT_NOT_PRIVACY", "FULL", "FUTILITY_BETA", "LEDGER_MISSING", "NO_POWER", "QUICK", "AgentAudit",
           "ContractFinding", "ContractUsers", "Design", "audit_agent", "contract_findings", "detectable_epsilon",
           "futile", "neighbouring_streams"]

LEDGER_MISSING = "the agent's own ledger is missing: privacy not verified"
"""What the audit says of an agent that claims privacy but records no release."""

CONTRACT_NOT_PRIVACY = "contract failure, not a privacy finding"
"""How the audit reports a failed check of the agent contract that is not one of its privacy checks."""

CONTRACT_SHAPE = (4, 3)
"""Arms K and dimension d of the contract stage's synthetic stream (those of :func:`~privbandit.agents.check_agent`)."""

CONTRACT_HORIZON = PRIVACY_HORIZON
"""The most rounds of the contract stage's privacy checks, every user of which they change in turn (their cost
grows as its square: :data:`~privbandit.agents.checks.PRIVACY_HORIZON`)."""

NO_POWER = "no release inside the stream, no power"
"""What the audit says when no target user's data can reach another user's action within the stream."""

EPS_GRID = tuple(round(0.05 * k, 2) for k in range(1, 161))
"""The epsilons the audit tests (0.05 .. 8)."""

CONFIDENCE = 0.95
"""Family-wise confidence of the audit (split over its tests by Bonferroni)."""

PILOT_LEVEL = 0.95
"""Frequency of arm 0 among the watched users of the midpoint stream that the offset c is set to (the 5%
tail, where a Gaussian release shifted by ~0.7 of its noise sd shows most at epsilon ~1)."""

PILOT_STEPS = 14
"""Bisection steps on the offset c in [-1, 1] (resolution 2^-13: a non-private agent's step in c, which an
epoch of n users moves by 2/n, is found for epochs of thousands of users)."""

SELECT_FACTOR = 4
"""Runs per stream of the selection pilots, in multiples of ``pilot_draws``."""

N_TESTS = 1
"""Tests the selection pilots keep for the final runs (the Bonferroni correction is over these only)."""

FUTILITY_BETA = 1e-3
"""The final runs' futility stop (:func:`futile`): the chance, over all its looks, that it ends the runs of a
test whose set shows a leak above the claim (its delta at the claimed epsilon above the claimed delta)."""

LOOK_EVERY = 100
"""Runs per stream between two looks of the futility stop at the final runs."""

MIN_PILOT_HITS = 5
"""Fewest selection-pilot runs of P in a set for :func:`select_tests` to score it (a set seen fewer times cannot be
told from chance by the pilots)."""

POWER_FLOOR = 0.01
"""The least :func:`refutation_chance` for which :func:`select_tests` keeps the test of highest chance; below it
on every set, the test kept is the one the futility stop decides soonest."""

POWER_SAMPLES = 400
"""Posterior draws per set of :func:`refutation_chance`."""

FULL = {"n_draws": 6000, "pilot_draws": 64}
"""The default sizes of :func:`audit_agent` and ``privbandit audit``."""

QUICK = {"n_draws": 1500, "pilot_draws": 32}
"""The sizes of ``privbandit audit --quick``: fewer final and pilot runs; the report prints what they can
detect (:func:`detectable_epsilon`)."""


def neighbouring_streams(horizon: int, neighbour: int = 0, dim: int = 2, offset: float = 0.0,
                         ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Two streams (features (T, 2, d), rewards (T, 2)) that differ only in user ``neighbour``'s rewards.

    Arm 0 has features +e_1, arm 1 -e_1; the neighbour's rewards are (1, -1) in D and (-1, 1) in D';
    every other user's are (offset, -offset).
    """
    feats = np.zeros((horizon, 2, dim))
    feats[:, 0, 0], feats[:, 1, 0] = 1.0, -1.0
    rewards = np.zeros((horizon, 2))
    rewards[:, 0], rewards[:, 1] = offset, -offset
    rewards[neighbour] = (1.0, -1.0)
    rewards_prime = rewards.copy()
    rewards_prime[neighbour] = (-1.0, 1.0)
    return (feats, rewards), (feats.copy(), rewards_prime)


def play_stream(agent, feats: np.ndarray, rewards: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, float | None]:
    """One run on a fixed stream through the batch interface (:func:`privbandit.agents.checks.play_batch`): the
    actions (T,) and the ledger's worst epsilon (None if it recorded nothing)."""
    actions = play_batch(agent, feats, rewards, rng).actions
    spent = agent.ledger.guarantee(agent.privacy.delta) if agent.ledger.releases else None
    return actions, spent


@dataclass(frozen=True)
class ContractUsers:
    """The users the contract stage's privacy checks changed, one at a time, on their stream.

    Attributes
    ----------
    horizon : int
        Rounds T of the privacy checks' stream.
    users : tuple of int
        The users changed (every user 0 .. T - 1).
    """

    horizon: int
    users: tuple[int, ...]

    @property
    def every_user(self) -> bool:
        """Whether every user of the stream was changed."""
        return self.users == tuple(range(self.horizon))

    @property
    def description(self) -> str:
        """``"every user 0..T-1 of a T-round stream"``, or how many of the stream's users and which."""
        if self.every_user:
            return f"every user 0..{self.horizon - 1} of a {self.horizon}-round stream"
        shown = ", ".join(map(str, self.users[:8])) + (", ..." if len(self.users) > 8 else "")
        return f"{len(self.users)} of the {self.horizon} users of the stream ({shown})"


@dataclass(frozen=True)
class ContractFinding:
    """A failed check of the audit's contract stage (:func:`contract_findings`).

    Attributes
    ----------
    check : str
        The check's name (a function of :mod:`privbandit.agents.checks`).
    message : str
        The check's own message (naming the check).
    privacy : bool
        A privacy check failed (:data:`~privbandit.agents.checks.PRIVACY_CHECKS`): the claim is refuted.
        Otherwise the agent breaks the interface: :data:`CONTRACT_NOT_PRIVACY`.
    """

    check: str
    message: str
    privacy: bool

    @property
    def line(self) -> str:
        """The report's line: "REFUTED by the contract: MESSAGE" or :data:`CONTRACT_NOT_PRIVACY` ": MESSAGE"."""
        return f"{'REFUTED by the contract' if self.privacy else CONTRACT_NOT_PRIVACY}: {self.message}"


def contract_findings(build: Callable[[], Any], users: tuple[int, ...] | None, horizon: int,
                      seed: int = 0) -> tuple[ContractFinding, ...]:
    """Every failed check of :data:`~privbandit.agents.checks.AGENT_CHECKS` but the ledger's (the audit reads
    the ledger on its own line).

    A privacy check's failure is a privacy finding, except when the agent releases nothing through privbandit's
    mechanisms: then the replay cannot check it (privacy not verified, not refuted).

    Parameters
    ----------
    build : callable
        Returns a fresh agent.
    users : tuple of int or None
        The users the privacy checks change, one at a time (None: every user of the stream).
    horizon : int
        Rounds of the privacy checks' synthetic stream (K, d = :data:`CONTRACT_SHAPE`); the other checks run at
        :func:`~privbandit.agents.check_agent`'s default horizon.
    seed : int
        Seed (>= 0) of the streams and of the agent.

    Returns
    -------
    tuple of ContractFinding
        Empty when every check passes.
    """
    k, d = CONTRACT_SHAPE
    with ReleaseTape() as tape:
        play_batch(build(), *synthetic_stream(k, d, horizon, seed), seed)
    found = []
    with shared_replays():
        for check in AGENT_CHECKS:
            if check is check_ledger_within_budget:
                continue
            privacy = check in PRIVACY_CHECKS
            try:
                check(build, n_arms=k, dim=d, rng=seed, **(dict(horizon=horizon, users=users) if privacy else {}))
            except ContractError as err:
                found.append(ContractFinding(err.check, str(err), privacy and len(tape) > 0))
    return tuple(found)


@dataclass(frozen=True)
class Design:
    """One target user of :func:`audit_agent`: its streams and what is watched.

    Attributes
    ----------
    target : int
        The user whose data differs between D and D'.
    release : int
        The first round whose policy can depend on the target's data.
    horizon : int
        Rounds of each run.
    windows : tuple of (int, int)
        The watched users [start, stop) of each statistic.
    offset : float
        The other users' reward c (set by the pilot bisection).
    role : str
        Why the target was chosen ("first user", "last user of epoch 0", "random user", ...).
    """

    target: int
    release: int
    horizon: int
    windows: tuple[tuple[int, int], ...]
    offset: float = 0.0
    role: str = ""

    def statistics(self, actions: np.ndarray) -> np.ndarray:
        """How many watched users got arm 0, per statistic: (n, n_windows) for actions (n, T)."""
        zero = np.asarray(actions) == 0
        return np.stack([zero[:, a:b].sum(axis=1) for a, b in self.windows], axis=1).astype(float)


def plan_designs(starts: tuple[int, ...], max_horizon: int, watch: int, rng: Any = None) -> list[Design]:
    """The designs for a schedule: the targets are the first and last users of the first epoch and of the
    largest epoch whose release leaves ``watch`` rounds before ``max_horizon`` (else of the first epoch
    released inside it), and, given ``rng``, one random user released by then; the windows are the epoch
    after the release and the ``watch`` rounds after it, cut at ``max_horizon``."""
    bounds = list(starts) + [max_horizon]
    released = [j for j in range(len(starts)) if bounds[j + 1] < max_horizon]
    if not released:
        return []
    last = max([j for j in released if bounds[j + 1] + watch <= max_horizon], default=released[0])
    roles: dict[int, str] = {}      # user -> why it is a target
    for j in sorted({released[0], last}):
        roles.setdefault(bounds[j], "first user" if j == 0 else f"first user of epoch {j}")
        roles.setdefault(bounds[j + 1] - 1, f"last user of epoch {j}")
    pool = [u for u in range(bounds[last + 1]) if u not in roles]
    if rng is not None and pool:
        roles[int(np.random.default_rng(rng).choice(pool))] = "random user"
    designs = []
    for u, role in sorted(roles.items()):
        r = min(s for s in starts if s > u)
        horizon = min(max_horizon, r + watch)
        nxt = min([s for s in starts if s > r] + [horizon])
        windows = tuple(dict.fromkeys([(r, nxt), (r, horizon)]))
        designs.append(Design(u, r, horizon, windows, role=role))
    return designs


def half_lines(width: int) -> tuple[tuple[int, bool], ...]:
    """The sets a statistic with values 0..``width`` may be tested on: {t >= k} for k in
    {1, ceil(width / 2), width} and their complements (``(k, True)`` is {t >= k})."""
    ks = sorted({1, (width + 1) // 2, width})
    return tuple((k, above) for k in ks for above in (True, False))


@dataclass(frozen=True)
class ChosenTest:
    """One test of :func:`audit_agent`, chosen by the selection pilots before its runs.

    Attributes
    ----------
    design : Design
        The target user, its streams and windows.
    window : int
        The statistic (index into ``design.windows``).
    threshold : int
        The half-line's k.
    above : bool
        The set is {t >= k} (True) or {t < k} (False).
    swap : bool
        False: P = law on D, Q = law on D'; True: the other way round.
    pilot_delta : float
        The pilots' estimate of the delta lower bound this test reaches at the claimed epsilon with the
        audit's draws (the selection score).
    pilot_p, pilot_q : float
        The pilots' frequencies of the set under P and under Q.
    pilot_chance : float
        The pilots' chance that the final runs refute the claim (:func:`refutation_chance`).
    """

    design: Design
    window: int
    threshold: int
    above: bool
    swap: bool
    pilot_delta: float
    pilot_p: float = 0.0
    pilot_q: float = 0.0
    pilot_chance: float = 0.0

    def counts(self, stats_d: np.ndarray, stats_prime: np.ndarray) -> tuple[int, int]:
        """Runs in the set under P and under Q, for statistics (n, n_windows) on D and on D'."""
        hit = [int(np.count_nonzero((t[:, self.window] >= self.threshold) == self.above))
               for t in (stats_d, stats_prime)]
        return (hit[1], hit[0]) if self.swap else (hit[0], hit[1])


def set_lower_bounds(p_count: int, q_count: int, n: int, epsilons: np.ndarray, alpha: float) -> np.ndarray:
    """Lower confidence bounds (level 1 - alpha) on delta(epsilon) at each of ``epsilons`` from one set:
    CP_lower(P(S)) - e^epsilon CP_upper(Q(S)), each Clopper-Pearson bound at alpha / 2."""
    lo, _ = clopper_pearson(np.array(p_count), n, alpha / 2)
    _, up = clopper_pearson(np.array(q_count), n, alpha / 2)
    return float(lo) - np.exp(epsilons) * float(up)


def futile(p_count: Any, q_count: Any, m: int, n: int, epsilon: float, delta: float, alpha: float,
           beta: float) -> Any:
    """Whether the final runs of a test may stop after ``m`` of their ``n`` runs per stream, ``p_count`` of P's
    and ``q_count`` of Q's runs in the set so far, with the verdict "not refuted".

    The test at ``n`` runs refutes when CP_lower(P) - e^epsilon CP_upper(Q) > ``delta`` (:func:`set_lower_bounds`,
    level ``alpha``). Two rules, each on one-sided Clopper-Pearson bounds at ``beta / 2`` from the ``m`` runs:

    - CP_upper(P) - e^epsilon CP_lower(Q) <= delta: the set's own delta is below the claim;
    - CP_upper(P) <= delta + e^epsilon CP_upper_n(Q), the final test's threshold with Q's count so far (a count
      only grows, so the final threshold is at least this): P is too rare for the ``n`` runs to refute.

    Stopping can only turn a refutation into "not refuted", so it adds no false refutation. A refutation whose
    final Clopper-Pearson bounds are right implies P(S) - e^epsilon Q(S) > delta and P(S) above the final
    threshold; each rule then fires only when one of its bounds is wrong: with ``beta`` split over the looks,
    such refutations are lost with chance at most the sum of the looks' ``beta``.

    Parameters
    ----------
    p_count, q_count : int or array of int
        Runs in the set under P and under Q among the first ``m`` of each (arrays: one answer each).
    m, n : int
        Runs so far and planned, per stream (1 <= m <= n).
    epsilon, delta : float
        The claim.
    alpha : float
        The final test's level (:func:`set_lower_bounds`).
    beta : float
        This look's share of :data:`FUTILITY_BETA`.
    """
    (_, up_p), (lo_q, up_q) = (clopper_pearson(np.asarray(c), m, beta / 2) for c in (p_count, q_count))
    _, up_final = clopper_pearson(np.asarray(q_count), n, alpha / 2)
    grow = math.exp(epsilon)
    stop = (up_p - grow * lo_q <= delta) | (up_p <= delta + grow * up_final)
    return bool(stop) if stop.ndim == 0 else stop


def detectable_epsilon(n_draws: int, delta: float, alpha: float) -> float:
    """The largest epsilon one test of :func:`set_lower_bounds` at level ``alpha`` can refute with
    ``n_draws`` runs per stream: every run of D in the set and none of D'. 0 if even that refutes nothing."""
    a = alpha / 2
    lower = a ** (1.0 / n_draws)        # Clopper-Pearson lower bound of n successes in n
    upper = 1.0 - a ** (1.0 / n_draws)  # and upper bound of 0 in n
    return float(math.log((lower - delta) / upper)) if lower > delta else 0.0


def draws_for(epsilon: float, delta: float, alpha: float) -> int:
    """The fewest runs per stream (1000 times a power of 2) whose :func:`detectable_epsilon` exceeds
    ``epsilon``."""
    n = 1000
    while detectable_epsilon(n, delta, alpha) <= epsilon and n < 10**9:
        n *= 2
    return n


def refutation_chance(p_counts: np.ndarray, q_counts: np.ndarray, m: int, n_draws: int, epsilon: float,
                      delta: float, alpha: float, rng: Any = 0, samples: int = POWER_SAMPLES) -> np.ndarray:
    """The pilots' chance that the final test of each set refutes the claim: P(:func:`set_lower_bounds` at
    ``epsilon`` > ``delta`` with ``n_draws`` runs per stream), under the pilots' posterior.

    Each set's probabilities under P and Q are drawn from their Jeffreys posteriors Beta(c + 1/2, m - c + 1/2)
    given the pilot counts c of m runs, the final counts from Binomial(``n_draws``, .) given them (``samples``
    draws from ``rng``, by inversion of the same uniforms for every set, so that sets with equal counts get equal
    chances): the posterior predictive chance of a refutation.

    Parameters
    ----------
    p_counts, q_counts : array of int
        Pilot runs in each set under P and under Q (same shape).
    m : int
        Pilot runs per stream.
    n_draws : int
        The final runs per stream.
    epsilon, delta, alpha : float
        The claim and the final test's level.
    rng : seed or Generator
    samples : int
        Posterior draws per set.

    Returns
    -------
    ndarray
        One chance in [0, 1] per set (the shape of ``p_counts``).
    """
    from scipy import stats

    u = np.random.default_rng(rng).random((4, samples))  # the same draws for every set: equal counts, equal chance

    def final(counts: np.ndarray, u_prob: np.ndarray, u_count: np.ndarray) -> np.ndarray:
        c = np.asarray(counts, dtype=float)[..., None]
        return stats.binom.ppf(u_count, n_draws, stats.beta.ppf(u_prob, c + 0.5, m - c + 0.5))

    lo, _ = clopper_pearson(final(p_counts, u[0], u[1]), n_draws, alpha / 2)
    _, up = clopper_pearson(final(q_counts, u[2], u[3]), n_draws, alpha / 2)
    return np.mean(lo - math.exp(epsilon) * up > delta, axis=-1)


def select_tests(designs, pilots, n_draws: int, epsilon: float, alpha: float, delta: float = 1e-5,
                 rng: Any = 0) -> tuple[ChosenTest, ...]:
    """The :data:`N_TESTS` (design, statistic, half-line, order) the final runs test, chosen from pilot runs.

    Every set that at least :data:`MIN_PILOT_HITS` pilot runs of P fall in is scored by its
    :func:`refutation_chance` with ``n_draws`` runs; the sets of highest chance are kept (ties: the larger
    :func:`set_lower_bounds` at the pilot frequencies, then the first). A set the pilots saw fewer times cannot be
    told from chance by them. When no set has a chance of :data:`POWER_FLOOR`, the pilots see no leak that the
    final runs could show: the test kept is then the set whose pilot frequencies lie farthest below the claim
    (largest e^epsilon q - p), which the futility stop (:func:`futile`) ends at its first look.

    ``pilots`` holds, per design, its statistics (m, n_windows) on D and on D' from runs independent of the
    final ones, so the choice spends none of the final tests' confidence: the Bonferroni correction covers
    only the tests kept."""
    candidates, counts = [], []
    for design, (on_d, on_prime) in zip(designs, pilots):
        for w, (start, stop) in enumerate(design.windows):
            for k, above in half_lines(stop - start):
                for swap in (False, True):
                    test = ChosenTest(design, w, k, above, swap, 0.0)
                    candidates.append(test)
                    counts.append(test.counts(on_d, on_prime))
    m = pilots[0][0].shape[0]
    p_counts, q_counts = np.array(counts, dtype=float).T
    chance = np.where(p_counts >= MIN_PILOT_HITS,
                      refutation_chance(p_counts, q_counts, m, n_draws, epsilon, delta, alpha, rng), 0.0)
    scored = []
    for i, test in enumerate(candidates):
        p, q = p_counts[i] / m, q_counts[i] / m
        score = float(set_lower_bounds(round(p * n_draws), round(q * n_draws), n_draws, np.array([epsilon]),
                                       alpha)[0])
        margin = math.exp(epsilon) * (q_counts[i] + 0.5) / (m + 1) - (p_counts[i] + 0.5) / (m + 1)
        key = (-chance[i], -score, i) if chance.max() >= POWER_FLOOR else (-margin, i)
        scored.append((key, replace(test, pilot_delta=score, pilot_p=p, pilot_q=q, pilot_chance=float(chance[i]))))
    return tuple(test for _, test in sorted(scored, key=lambda x: x[0])[:N_TESTS])


@dataclass(frozen=True)
class AgentAudit:
    """The outcome of :func:`audit_agent`.

    Attributes
    ----------
    agent : str
    model : str
        The privacy model the agent claims ("jdp", "ldp").
    epsilon, delta : float
        The claim.
    epsilon_lower : float
        The largest epsilon of :data:`EPS_GRID` that some test refutes (0 if none).
    delta_lower : float
        The largest lower confidence bound on delta at the claimed epsilon over the tests.
    ledger_epsilon : float or None
        The worst user's composed epsilon over the runs (None: the ledger recorded nothing).
    n_draws, horizon : int
        Runs per stream of each test; the longest stream.
    designs : tuple of Design
        The candidate target users (empty: no release inside the stream).
    tests : tuple of ChosenTest
        The tests the selection pilots kept: the only ones the final runs test.
    detectable : float
        The largest epsilon these draws can refute.
    contract : tuple of ContractFinding
        The failed checks of the contract stage (empty: every check passed).
    contract_users : ContractUsers or None
        The users the contract stage's privacy checks changed (every user of their stream).
    contract_horizon : int
        Rounds of the contract stage's privacy checks' stream.
    runs : int or None
        Final runs per stream made: ``n_draws`` unless the futility stop (:func:`futile`) ended them sooner
        (None: the same as ``n_draws``).
    """

    agent: str
    model: str
    epsilon: float
    delta: float
    epsilon_lower: float
    delta_lower: float
    ledger_epsilon: float | None
    n_draws: int
    horizon: int
    designs: tuple[Design, ...] = ()
    tests: tuple[ChosenTest, ...] = ()
    detectable: float = math.inf
    contract: tuple[ContractFinding, ...] = ()
    contract_users: ContractUsers | None = None
    contract_horizon: int = 0
    runs: int | None = None

    @property
    def runs_made(self) -> int:
        """Final runs per stream the bounds rest on."""
        return self.n_draws if self.runs is None else self.runs

    @property
    def n_tests(self) -> int:
        """Tests of the Bonferroni correction."""
        return max(1, len(self.tests))

    @property
    def refuted_by_contract(self) -> bool:
        """Whether a privacy check of the contract stage failed: a deterministic refutation."""
        return any(f.privacy for f in self.contract)

    @property
    def refuted_empirically(self) -> bool:
        """Whether the empirical bound (95%) exceeds the claim."""
        return self.epsilon_lower > self.epsilon or self.delta_lower > self.delta

    @property
    def refuted(self) -> bool:
        """Whether the audit found evidence that the agent breaks its claim: a failed privacy check of the contract
        stage, or the empirical bound (95%) above the claim."""
        return self.refuted_by_contract or self.refuted_empirically

    @property
    def contract_ok(self) -> bool:
        """Whether every check of the contract stage passed (also those that are not about privacy)."""
        return not self.contract

    @property
    def ledger_ok(self) -> bool:
        """Whether the ledger recorded the runs and shows every user within the claim."""
        return self.ledger_epsilon is not None and self.ledger_epsilon <= self.epsilon * (1 + 1e-9)

    @property
    def ledger_status(self) -> str:
        """``"the agent's own ledger says: ... within the claim ..."``, a breach, or :data:`LEDGER_MISSING`: the
        agent's account of itself, on which the verdict never rests."""
        if self.ledger_epsilon is None:
            return LEDGER_MISSING
        return (f"the agent's own ledger says: worst user's epsilon {self.ledger_epsilon:.4g} at delta={self.delta:g}, "
                + ("within" if self.ledger_ok else "ABOVE") + f" the claim {self.epsilon:g} (its account of itself, "
                "not evidence: the verdict does not rest on it)")

    @property
    def verdict(self) -> str:
        """The verdict line: what refuted the claim, or "not refuted" (and a contract failure that is not about
        privacy, if any)."""
        reasons = [f"the contract's {f.check}" for f in self.contract if f.privacy]
        if self.refuted_empirically:
            reasons.append(f"the empirical lower bound {self.epsilon_lower:g}" if self.epsilon_lower > self.epsilon
                           else f"the empirical delta lower bound {self.delta_lower:.3g}")
        if reasons:
            return f"verdict: REFUTED: the agent leaks more than it claims ({'; '.join(reasons)})"
        text = ("verdict: not refuted (the audit had no power: a lower bound, never a proof of privacy)"
                if not self.designs else "verdict: not refuted (a lower bound, never a proof of privacy)")
        failed = [f.check for f in self.contract]
        return text + (f"; but {CONTRACT_NOT_PRIVACY}: {', '.join(failed)}" if failed else "")

    def contract_lines(self) -> list[str]:
        """The contract stage's lines: the users changed, then each failure with the check's own message."""
        users = self.contract_users.description if self.contract_users else "none"
        k, d = CONTRACT_SHAPE
        head = (f"contract (the privacy checks of check_agent, release replay on neighbouring streams, K={k}, d={d}, "
                f"T={self.contract_horizon}; users changed one at a time: {users}): ")
        if not self.contract:
            return [head + "passed"]
        return [head + f"{len(self.contract)} check{'s' * (len(self.contract) > 1)} failed",
                *(f.line for f in self.contract)]

    def empirical_lines(self) -> list[str]:
        """The empirical stage's lines: the bound (a delta bound below 0 shown as 0: no evidence of any delta),
        the targets, the chosen test and the largest epsilon these runs can refute, in words."""
        if not self.designs:
            return [(f"empirical lower bound on epsilon: none ({NO_POWER}: the first release after every target user "
                     f"falls outside T={self.horizon}; raise --horizon)")]
        targets = ", ".join(f"{d.target} ({d.role + '; ' if d.role else ''}release at {d.release}, c={d.offset:+.4f})"
                            for d in self.designs)
        runs = (f"{self.n_draws} runs per stream" if self.runs_made == self.n_draws else
                f"{self.runs_made} of {self.n_draws} runs per stream: stopped once the counts showed, with confidence "
                f"{1 - FUTILITY_BETA:g}, that the planned runs cannot refute the claim")
        delta_text = (f"{self.delta_lower:.4g}" if self.delta_lower > 0 else
                      f"0 (no evidence of any delta at epsilon={self.epsilon:g})")
        lines = [(f"empirical lower bound on epsilon: {self.epsilon_lower:g} ({CONFIDENCE:.0%}, {self.n_tests} "
                  f"test{'s' * (self.n_tests > 1)} Bonferroni-corrected, {runs}, T <= {self.horizon}); "
                  f"delta lower bound at the claimed epsilon: {delta_text}"),
                 f"candidate target users: {targets}"]
        for t in self.tests:
            (a, b), p_law = t.design.windows[t.window], "D'" if t.swap else "D"
            why = (f"the pilots' chance that it refutes: {t.pilot_chance:.2g}" if t.pilot_chance >= POWER_FLOOR else
                   f"no set had a {POWER_FLOOR:.0%} chance to refute on the pilots: the set farthest below the claim, "
                   "which the futility stop decides soonest")
            lines.append(f"tested (chosen by independent pilot runs): target {t.design.target} ({t.design.role}), "
                         f"arm-0 count over users [{a}, {b}) {'>=' if t.above else '<'} {t.threshold}, P = law on "
                         f"{p_law} (pilot frequencies {t.pilot_p:.3g} under P, {t.pilot_q:.3g} under Q; {why})")
        lines.append(f"detectable: with {self.n_draws} runs per stream no epsilon above {self.detectable:.3g} can "
                     f"be refuted (even an agent that publishes every user's data gets a lower bound of at most "
                     f"{self.detectable:.3g}), so a claim above {self.detectable:.3g} would pass whatever the agent "
                     "does")
        if self.detectable <= self.epsilon:
            alpha = (1 - CONFIDENCE) / self.n_tests
            lines.append(f"warning: the claim {self.epsilon:g} is above what this audit can detect: it cannot be "
                         f"refuted at these sizes; --draws {draws_for(self.epsilon, self.delta, alpha)} could")
        return lines

    @property
    def meaning(self) -> str:
        """What the verdict means for the claim, in one line."""
        if self.refuted:
            return (f"meaning: the claim epsilon={self.epsilon:g} is false (at {CONFIDENCE:.0%} confidence for the "
                    "empirical bound; a failed privacy check of the contract is certain): fix the agent")
        if not self.designs:
            return ("meaning: the empirical stage could not test the claim (no release reaches another user within "
                    "the stream); only the contract's checks passed")
        return (f"meaning: no evidence that the agent leaks more than epsilon={self.epsilon:g}; a leak that these "
                "streams and this statistic do not reach, or one within the error bars, would also pass: privacy "
                "rests on the agent's analysis and its ledger")

    def lines(self) -> list[str]:
        """The audit's report, one statement a line: the claim, the contract stage, the empirical stage, the
        verdict and what it means, and the agent's own ledger."""
        head = f"agent {self.agent}: claims {self.model} (epsilon={self.epsilon:g}, delta={self.delta:g})"
        return [head, *self.contract_lines(), *self.empirical_lines(), self.verdict, self.meaning, self.ledger_status]


def audit_agent(agent: str, epsilon: float, delta: float = 1e-5, *, agent_kwargs: Mapping[str, Any] | None = None,
                max_horizon: int = 512, watch: int = 32, n_draws: int = 6000, pilot_draws: int = 64,
                targets: tuple[int, ...] | None = None, seed: int = 0, progress: bool = False,
                jobs: int = 1) -> AgentAudit:
    """Audit a private agent's claim on neighbouring streams (see the module docstring).

    Parameters
    ----------
    agent : str
        A registered name, an entry point or an import path ``"pkg.module:factory"``.
    epsilon, delta : float
        The claimed budget the agent is built with.
    agent_kwargs : mapping, optional
        More keyword arguments of the agent.
    max_horizon : int
        The longest stream, >= 2: targets whose first release comes later are left out.
    watch : int
        Rounds after a release the second statistic counts, >= 1.
    n_draws : int
        Runs per stream of the chosen test, >= 100 (the report says the largest epsilon they can detect).
        The default 6000 refutes elim-jdp-ucb with a quarter of its noise at epsilon 1.
    pilot_draws : int
        Runs of the midpoint stream per bisection step on the offset, >= 16; the selection pilots run
        :data:`SELECT_FACTOR` times as many on each of D and D' per candidate target.
    targets : tuple of int, optional
        Keep only these of the planned target users (default: all of them).
    seed : int
    progress : bool
        Show a tqdm progress bar of each stage's runs on stderr.
    jobs : int
        Worker processes of the empirical stage's runs (-1: all cores; 1: this process). The results do not
        depend on it (every run draws from its own seed); an agent registered from user code is found by the
        workers as :func:`~privbandit.bench.sweep.sweep` finds it, and a change made to a module at run time (a
        monkeypatch) is not seen by them.

    Returns
    -------
    AgentAudit

    Raises
    ------
    ValueError
        For a non-private agent (nothing to audit) or bad sizes.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    max_horizon = check_int("max_horizon", max_horizon, low=2)
    watch = check_int("watch", watch, low=1)
    n_draws = check_int("n_draws", n_draws, low=100)
    pilot_draws = check_int("pilot_draws", pilot_draws, low=16)
    seed = check_int("seed", seed, low=0)
    if agent_is_private(agent) is False:
        raise ValueError(f"agent {agent!r} is non-private: there is no privacy claim to audit")
    jobs = check_jobs(jobs)
    jobs = jobs if jobs > 0 else os.cpu_count() or 1
    kwargs = dict(agent_kwargs or {})
    build = _Build(agent, epsilon, delta, tuple(kwargs.items()), None if jobs == 1 else agent_ref(agent))

    probe = build()
    model = probe.privacy.model
    if model == "none":
        raise ValueError(f"agent {agent!r} built with epsilon={epsilon:g} is non-private: nothing to audit")
    contract_horizon = min(max(max_horizon, 8), CONTRACT_HORIZON)
    with _progress(progress, 1, "audit: contract stage") as bar:
        stage = (contract_findings(build, None, contract_horizon, seed),
                 ContractUsers(contract_horizon, tuple(range(contract_horizon))), contract_horizon)
        bar.update()
    (feats, rewards), _ = neighbouring_streams(max_horizon)      # the candidate tests: the probe's schedule on them
    designs = plan_designs(play_batch(probe, feats, rewards, seed).starts, max_horizon, watch,
                           np.random.SeedSequence([seed, 4]))
    designs = [d for d in designs if d.target in set(targets)] if targets is not None else designs
    alpha = (1 - CONFIDENCE) / N_TESTS
    detectable = detectable_epsilon(n_draws, delta, alpha)
    if not designs:  # the probe's ledger: the releases of one whole run (at the stream's end, too)
        ledger = probe.ledger.guarantee(delta) if probe.ledger.releases else None
        return AgentAudit(agent, model, epsilon, delta, 0.0, -math.inf, ledger, n_draws, max_horizon, (), (),
                          detectable, *stage)
    designs, tests, lower, delta_lower, ledger, runs = _empirical_stage(build, designs, epsilon, delta, n_draws,
                                                                        pilot_draws, alpha, seed, progress, jobs)
    return AgentAudit(agent, model, epsilon, delta, lower, delta_lower, ledger, n_draws,
                      max(d.horizon for d in designs), tuple(designs), tests, detectable, *stage, runs=runs)


def _progress(progress: bool, total: int, desc: str):
    """A tqdm bar of ``total`` runs on stderr (disabled unless ``progress``), as ``privbandit bench`` shows."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="run", disable=not progress, dynamic_ncols=True, leave=False)


@dataclass(frozen=True)
class _Build:
    """Builds the audited agent: picklable, so that a worker process builds its own (``ref`` tells a worker
    where an agent registered from user code lives, :func:`~privbandit.agents.workers.agent_ref`)."""

    agent: str
    epsilon: float
    delta: float
    kwargs: tuple[tuple[str, Any], ...] = ()
    ref: Any = None

    def __call__(self):
        return make_agent(self.agent, epsilon=self.epsilon, delta=self.delta, **dict(self.kwargs))


def _chunk(build: _Build, f: np.ndarray, r: np.ndarray, seeds: list[np.random.SeedSequence],
           bar=None) -> tuple[np.ndarray, list[float | None]]:
    """One worker's runs: the actions (n, T) of one run per seed on (f, r) and each run's spent epsilon (each
    run ticks ``bar`` when given)."""
    from .workers import prepare

    if build.ref is not None:
        prepare(build.ref)
    agent, actions, spent = build(), [], []
    for s in seeds:
        a, used = play_stream(agent, f, r, np.random.default_rng(s))
        actions.append(a)
        spent.append(used)
        if bar is not None:
            bar.update()
    return np.array(actions), spent


@dataclass(frozen=True)
class _Runs:
    """Where the runs are played: in this process (``parallel`` None) or in chunks on joblib workers (an
    entered ``joblib.Parallel``). Every run draws from its own seed, so the actions do not depend on which."""

    build: _Build
    parallel: Any = None
    jobs: int = 1

    def actions(self, f: np.ndarray, r: np.ndarray, seeds: list[np.random.SeedSequence],
                spent: list[float | None], bar) -> np.ndarray:
        """The actions (n, T) of one run per seed on the stream (f, r); each run's spent epsilon is appended to
        ``spent`` and ticks ``bar``."""
        from joblib import delayed

        if self.parallel is None:
            actions, used = _chunk(self.build, f, r, seeds, bar)
            spent.extend(used)
            return actions
        chunks = [c for c in np.array_split(np.arange(len(seeds)), 2 * self.jobs) if len(c)]
        out = []
        for acts, used in self.parallel(delayed(_chunk)(self.build, f, r, [seeds[i] for i in c]) for c in chunks):
            out.append(acts)
            spent.extend(used)
            bar.update(len(used))
        return np.concatenate(out)


def _stream_runs(runs: _Runs, design: Design, n: int, seeds: np.random.SeedSequence,
                 spent: list[float | None], bar) -> list[np.ndarray]:
    """The statistics (n, n_windows) of ``n`` runs on D and on D'; each run's spent epsilon is appended to
    ``spent``."""
    return [design.statistics(runs.actions(f, r, seeds.spawn(2)[j].spawn(n), spent, bar))
            for j, (f, r) in enumerate(neighbouring_streams(design.horizon, design.target, offset=design.offset))]


def _final_counts(runs: _Runs, test: ChosenTest, n_draws: int, seeds: np.random.SeedSequence,
                  claim: tuple[float, float], alpha: float, spent: list[float | None], bar) -> tuple[int, int, int]:
    """The final runs of ``test``: runs in its set under P and under Q, and the runs per stream made. They run
    in blocks of :data:`LOOK_EVERY` on D and D' and stop early only when :func:`futile` says so (its
    :data:`FUTILITY_BETA` split over the looks)."""
    design = test.design
    streams = neighbouring_streams(design.horizon, design.target, offset=design.offset)
    run_seeds = [s.spawn(n_draws) for s in seeds.spawn(2)]
    beta = FUTILITY_BETA / max(1, math.ceil(n_draws / LOOK_EVERY) - 1)
    stats: list[list[np.ndarray]] = [[], []]
    m = p = q = 0
    while m < n_draws:
        block = slice(m, min(m + LOOK_EVERY, n_draws))
        for j, (f, r) in enumerate(streams):
            stats[j].append(design.statistics(runs.actions(f, r, run_seeds[j][block], spent, bar)))
        m = block.stop
        p, q = test.counts(np.concatenate(stats[0]), np.concatenate(stats[1]))
        if m < n_draws and futile(p, q, m, n_draws, *claim, alpha, beta):
            break
    return p, q, m


def _empirical_stage(build: Callable[[], Any], designs: list[Design], epsilon: float, delta: float, n_draws: int,
                     pilot_draws: int, alpha: float, seed: int, progress: bool = False, jobs: int = 1
                     ) -> tuple[list[Design], tuple[ChosenTest, ...], float, float, float | None, int]:
    """The empirical stage of :func:`audit_agent`: the designs with their pilot offsets, the chosen tests, the
    lower bounds on epsilon and on delta at the claimed epsilon, the worst ledger of the runs (None when
    a run had no ledger) and the final runs per stream made (fewer than ``n_draws`` after a futility stop)."""
    with contextlib.ExitStack() as stack:
        runs = _Runs(build)
        if jobs > 1:
            from joblib import Parallel

            from .workers import backend_context

            stack.enter_context(backend_context("loky", jobs))
            runs = _Runs(build, stack.enter_context(Parallel(n_jobs=jobs)), jobs)
        spent: list[float | None] = []
        # the pilots draw from the seed keys (seed, 1, i) and (seed, 2, i), the final runs from (seed, 0, 0, i):
        # independent streams, so the choice of the test spends none of its confidence
        with _progress(progress, len(designs) * (PILOT_STEPS + 2) * pilot_draws, "audit: offset pilots") as bar:
            designs = [_with_offset(d, runs, pilot_draws, np.random.SeedSequence([seed, 1, i]), bar)
                       for i, d in enumerate(designs)]
        with _progress(progress, len(designs) * 2 * SELECT_FACTOR * pilot_draws, "audit: selection pilots") as bar:
            pilots = [_stream_runs(runs, d, SELECT_FACTOR * pilot_draws, np.random.SeedSequence([seed, 2, i]), spent,
                                   bar) for i, d in enumerate(designs)]
        tests = select_tests(designs, pilots, n_draws, epsilon, alpha, delta, np.random.SeedSequence([seed, 3]))
        grid = np.array(EPS_GRID + (epsilon,))
        lower, delta_lower, made = 0.0, -math.inf, n_draws
        for i, test in enumerate(tests):
            with _progress(progress, 2 * n_draws, "audit: final runs") as bar:
                p, q, m = _final_counts(runs, test, n_draws, np.random.SeedSequence([seed, 0, 0, i]), (epsilon, delta),
                                        alpha, spent, bar)
            bounds = set_lower_bounds(p, q, m, grid, alpha)
            lower = max(lower, float(grid[:-1][bounds[:-1] > delta].max(initial=0.0)))
            delta_lower, made = max(delta_lower, float(bounds[-1])), min(made, m)
        ledger = None if any(s is None for s in spent) else float(max(spent))
        return designs, tests, lower, delta_lower, ledger, made


def _with_offset(design: Design, runs: _Runs, pilot_draws: int, seeds: np.random.SeedSequence, bar) -> Design:
    """``design`` with the offset c in [-1, 1] at which the watched users of the first window take arm 0
    with frequency f(-1) + :data:`PILOT_LEVEL` (f(1) - f(-1)) on the midpoint stream (target rewards 0), by
    bisection on pilot runs; c = 0 when the offset does not move f."""
    start, stop = design.windows[0]
    steps = iter(seeds.spawn(PILOT_STEPS + 2))

    def freq(c: float) -> float:
        (f, r), _ = neighbouring_streams(design.horizon, design.target, offset=c)
        r[design.target] = 0.0
        actions = runs.actions(f, r, next(steps).spawn(pilot_draws), [], bar)
        return float(np.mean(actions[:, start:stop] == 0))

    f_lo, f_hi = freq(-1.0), freq(1.0)
    if abs(f_hi - f_lo) < 0.1:
        bar.update(PILOT_STEPS * pilot_draws)  # no bisection: the offset does not move the watched users
        return design
    level, sign = f_lo + PILOT_LEVEL * (f_hi - f_lo), (1.0 if f_hi > f_lo else -1.0)
    lo, hi = -1.0, 1.0
    for _ in range(PILOT_STEPS):
        c = (lo + hi) / 2
        lo, hi = (lo, c) if sign * (freq(c) - level) >= 0 else (c, hi)
    return replace(design, offset=(lo + hi) / 2)
