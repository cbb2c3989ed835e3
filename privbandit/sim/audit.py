"""An empirical privacy audit of any agent: a lower bound on its epsilon from the other users' actions.

:func:`audit_agent` audits one agent (a registered name, an entry point or an import path
``"pkg.module:factory"``) end to end. Its designs are built to have power against the agents that exist:

- **when releases happen.** One probe run reads the agent's schedule (the rounds at which its policy may
  change, ``rounds_until_update``). A user's data can reach the other users' actions only through a
  release after the user's round: a target user whose first release falls outside the stream gives the
  audit no power, and the report says "no release inside the stream, no power" when no target has one.
- **several target users.** The first and the last user of each of the first epochs (a batch oracle may
  read rewards in one part of its epoch only: IW-Regression-DP's first half learns W from features);
  every target whose first release is at most ``max_horizon`` rounds into the stream.
- **neighbouring streams** (:func:`neighbouring_streams`): two arms with features +e_1 and -e_1; the target
  user's reward vector is (+1, -1) in D and (-1, +1) in D', the largest change one user's reward can make;
  every other user's rewards are (c, -c), so each adds c e_1 to the epoch's sum whatever arm it gets. The
  offset c puts the decision the release drives (an arm eliminated, the UCB winner) where the target's
  change matters: it is chosen per target by bisection on pilot runs of the midpoint stream (target
  rewards 0), independent of the runs that are tested, so that the watched users take arm 0 with
  frequency :data:`PILOT_LEVEL`. For a non-private agent that decision is a step in c and the bisection
  finds it; for a Gaussian one the level puts the test in the tail, where a leak shows most.
- **several statistics.** How many watched users got arm 0: in the epoch right after the release, and
  over the ``watch`` rounds after it (joint DP, `def:JDP-interactive`, bounds exactly their joint law;
  local DP implies it).
- :func:`privbandit.privacy.audit_delta` for each (target, statistic) at each epsilon of a grid
  (hockey-stick over half-lines, Clopper-Pearson bounds), at confidence 1 - 0.05 / m for m tests
  (Bonferroni): ``epsilon_lower``, the largest epsilon some test refutes, is a 95% lower confidence bound
  on the privacy loss these statistics reveal. :attr:`AgentAudit.detectable` is the largest epsilon the
  draw count could ever refute (every run of D in the set, none of D'): a claim above it cannot be refuted
  by this audit, and the report says how many runs would reach it.

It also checks the agent's ledger: the worst user's composed epsilon against the claim, or, for an agent
that claims privacy and records nothing, "ledger missing: privacy not verified". Either is a failure of
its own (:attr:`AgentAudit.ledger_ok`), whatever the empirical bound says.

What an audit can and cannot show: ``epsilon_lower > epsilon`` is evidence (at 95%) that the agent
breaks its claim. ``epsilon_lower <= epsilon`` proves nothing: the audit looks at a few pairs of streams,
two statistics and a few thousand runs, so a bug that these pairs or statistics do not reach (or a leak
smaller than the Clopper-Pearson error bars) passes. It is a lower bound, never a proof; the proof is
the ledger's accounting plus the paper's analysis.

References
----------
Source paper, `def:JDP-interactive`, `def:JDP`, `def:LDP`. Auditing by hypothesis testing: Jagielski,
Ullman & Oprea (2020); Nasr et al. (2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from .._validation import check_delta, check_epsilon, check_int

__all__ = ["LEDGER_MISSING", "NO_POWER", "AgentAudit", "Design", "audit_agent", "detectable_epsilon",
           "neighbouring_streams"]

LEDGER_MISSING = "ledger missing: privacy not verified"
"""What the audit says of an agent that claims privacy but records no release."""

NO_POWER = "no release inside the stream, no power"
"""What the audit says when no target user's data can reach another user's action within the stream."""

EPS_GRID = tuple(round(0.05 * k, 2) for k in range(1, 161))
"""The epsilons the audit tests (0.05 .. 8)."""

CONFIDENCE = 0.95
"""Family-wise confidence of the audit (split over its tests by Bonferroni)."""

PILOT_LEVEL = 0.9
"""Frequency of arm 0 among the watched users of the midpoint stream that the offset c is set to."""

PILOT_STEPS = 8
"""Bisection steps on the offset c in [-1, 1] (resolution 2^-7)."""

N_SETS = 6
"""Sets each statistic is tested on (:func:`half_lines`)."""


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
    from ..agents.checks import play_batch

    actions = play_batch(agent, feats, rewards, rng).actions
    spent = agent.ledger.guarantee(agent.privacy.delta) if agent.ledger.releases else None
    return actions, spent


def policy_starts(agent, feats: np.ndarray, rewards: np.ndarray, rng: Any = 0) -> tuple[int, ...]:
    """The rounds at which the agent's policy may change in one run on a stream (0 first): where
    ``rounds_until_update`` ends a fixed policy, the releases it made reach the next users."""
    from ..agents.base import BanditSpec

    horizon, k, d = feats.shape
    agent.reset(BanditSpec(n_arms=k, dim=d, horizon=horizon), rng=rng)
    starts, t = [], 0
    while t < horizon:
        starts.append(t)
        m = int(agent.rounds_until_update())
        a = np.asarray(agent.act_batch(feats[t:t + m]))
        rows = np.arange(m)
        agent.update(feats[t:t + m][rows, a], rewards[t:t + m][rows, a])
        t += m
    return tuple(starts)


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
    """

    target: int
    release: int
    horizon: int
    windows: tuple[tuple[int, int], ...]
    offset: float = 0.0

    def statistics(self, actions: np.ndarray) -> np.ndarray:
        """How many watched users got arm 0, per statistic: (n, n_windows) for actions (n, T)."""
        zero = np.asarray(actions) == 0
        return np.stack([zero[:, a:b].sum(axis=1) for a, b in self.windows], axis=1).astype(float)


def plan_designs(starts: tuple[int, ...], max_horizon: int, watch: int) -> list[Design]:
    """The designs for a schedule: the targets are the first and last users of the first epoch and of the
    largest epoch whose release leaves ``watch`` rounds before ``max_horizon`` (else of the first epoch
    released inside it); the windows are the epoch after the release and the ``watch`` rounds after it,
    cut at ``max_horizon``."""
    bounds = list(starts) + [max_horizon]
    released = [j for j in range(len(starts)) if bounds[j + 1] < max_horizon]
    if not released:
        return []
    fits = [j for j in released if bounds[j + 1] + watch <= max_horizon]
    epochs = {released[0], max(fits, default=released[0])}
    designs = []
    for u in sorted({u for j in epochs for u in (bounds[j], bounds[j + 1] - 1)}):
        r = min(s for s in starts if s > u)
        horizon = min(max_horizon, r + watch)
        nxt = min([s for s in starts if s > r] + [horizon])
        windows = tuple(dict.fromkeys([(r, nxt), (r, horizon)]))
        designs.append(Design(u, r, horizon, windows))
    return designs


def half_lines(width: int) -> tuple[tuple[int, bool], ...]:
    """The sets a statistic with values 0..``width`` is tested on, fixed before any run: {t >= k} for
    k in {1, ceil(width / 2), width} and their complements (``(k, True)`` is {t >= k})."""
    ks = sorted({1, (width + 1) // 2, width})
    return tuple((k, above) for k in ks for above in (True, False))


def set_lower_bounds(t_d: np.ndarray, t_prime: np.ndarray, sets, epsilons: np.ndarray,
                     alpha: float) -> np.ndarray:
    """Lower confidence bounds on delta(epsilon) at each of ``epsilons``: the best over ``sets`` (both
    orders) of CP_lower(P(S)) - e^epsilon CP_upper(Q(S)), each bound at level alpha / (4 len(sets))
    (Bonferroni over the sets, the orders and the two probabilities)."""
    from ..privacy.audit import clopper_pearson

    n = t_d.size
    a = alpha / (4 * len(sets))
    best = np.full(epsilons.shape, -np.inf)
    for k, above in sets:
        counts = [int(np.count_nonzero((t >= k) if above else (t < k))) for t in (t_d, t_prime)]
        for p, q in (counts, counts[::-1]):
            lo, _ = clopper_pearson(np.array(p), n, a)
            _, up = clopper_pearson(np.array(q), n, a)
            best = np.maximum(best, float(lo) - np.exp(epsilons) * float(up))
    return best


def detectable_epsilon(n_draws: int, delta: float, alpha: float, n_sets: int = 1) -> float:
    """The largest epsilon :func:`set_lower_bounds` can refute with ``n_draws`` runs per stream at level
    ``alpha`` per statistic over ``n_sets`` sets: every run of D in the set and none of D'. 0 if even
    that refutes nothing."""
    a = alpha / (4 * n_sets)
    lower = a ** (1.0 / n_draws)        # Clopper-Pearson lower bound of n successes in n
    upper = 1.0 - a ** (1.0 / n_draws)  # and upper bound of 0 in n
    return float(math.log((lower - delta) / upper)) if lower > delta else 0.0


def draws_for(epsilon: float, delta: float, alpha: float, n_sets: int = 1) -> int:
    """The fewest runs per stream (1000 times a power of 2) whose :func:`detectable_epsilon` exceeds
    ``epsilon``."""
    n = 1000
    while detectable_epsilon(n, delta, alpha, n_sets) <= epsilon and n < 10**9:
        n *= 2
    return n


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
        The target users tested (empty: no release inside the stream).
    n_tests : int
        Tests of the Bonferroni correction.
    detectable : float
        The largest epsilon these draws can refute.
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
    n_tests: int = 1
    detectable: float = math.inf

    @property
    def refuted(self) -> bool:
        """Whether the audit found evidence (95%) that the agent breaks its claim."""
        return self.epsilon_lower > self.epsilon or self.delta_lower > self.delta

    @property
    def ledger_ok(self) -> bool:
        """Whether the ledger recorded the runs and shows every user within the claim."""
        return self.ledger_epsilon is not None and self.ledger_epsilon <= self.epsilon * (1 + 1e-9)

    @property
    def ledger_status(self) -> str:
        """``"ledger: worst user's epsilon ... <= claim"``, a breach, or :data:`LEDGER_MISSING`."""
        if self.ledger_epsilon is None:
            return LEDGER_MISSING
        return (f"ledger: worst user's epsilon {self.ledger_epsilon:.4g} at delta={self.delta:g} "
                + ("within" if self.ledger_ok else "ABOVE") + f" the claim {self.epsilon:g}")

    def lines(self) -> list[str]:
        """The audit's report, one statement a line."""
        head = f"agent {self.agent}: claims {self.model} (epsilon={self.epsilon:g}, delta={self.delta:g})"
        if not self.designs:
            return [head, f"empirical lower bound on epsilon: none ({NO_POWER}: the first release after every "
                          f"target user falls outside T={self.horizon}; raise --horizon)",
                    "verdict: not refuted (the audit had no power: a lower bound, never a proof of privacy)",
                    self.ledger_status]
        verdict = ("REFUTED: the agent leaks more than it claims" if self.refuted else
                   "not refuted (a lower bound, never a proof of privacy)")
        targets = ", ".join(f"{d.target} (release at {d.release}, c={d.offset:+.3f})" for d in self.designs)
        lines = [head,
                 f"empirical lower bound on epsilon: {self.epsilon_lower:g} ({CONFIDENCE:.0%}, {self.n_tests} tests "
                 f"Bonferroni-corrected, {self.n_draws} runs per stream, T <= {self.horizon}); delta lower bound "
                 f"at the claimed epsilon: {self.delta_lower:.4g}",
                 f"target users: {targets}",
                 f"detectable: with {self.n_draws} runs per stream no epsilon above {self.detectable:.3g} can be "
                 "refuted", f"verdict: {verdict}", self.ledger_status]
        if self.detectable <= self.epsilon:
            alpha = (1 - CONFIDENCE) / self.n_tests
            lines.insert(4, f"warning: the claim {self.epsilon:g} is above what this audit can detect: "
                            f"--draws {draws_for(self.epsilon, self.delta, alpha, N_SETS)} could")
        return lines


def audit_agent(agent: str, epsilon: float, delta: float = 1e-5, *, agent_kwargs: Mapping[str, Any] | None = None,
                max_horizon: int = 512, watch: int = 32, n_draws: int = 1000, pilot_draws: int = 64,
                targets: tuple[int, ...] | None = None, seed: int = 0) -> AgentAudit:
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
        Runs per stream of each test, >= 100 (the report says the largest epsilon they can detect).
    pilot_draws : int
        Runs of the midpoint stream per bisection step on the offset, >= 16.
    targets : tuple of int, optional
        Keep only these of the planned target users (default: all of them).
    seed : int

    Returns
    -------
    AgentAudit

    Raises
    ------
    ValueError
        For a non-private agent (nothing to audit) or bad sizes.
    """
    from ..agents import agent_is_private, make_agent

    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    max_horizon = check_int("max_horizon", max_horizon, low=2)
    watch = check_int("watch", watch, low=1)
    n_draws = check_int("n_draws", n_draws, low=100)
    pilot_draws = check_int("pilot_draws", pilot_draws, low=16)
    if agent_is_private(agent) is False:
        raise ValueError(f"agent {agent!r} is non-private: there is no privacy claim to audit")
    kwargs = dict(agent_kwargs or {})

    def build():
        return make_agent(agent, epsilon=epsilon, delta=delta, **kwargs)

    probe = build()
    model = probe.privacy.model
    if model == "none":
        raise ValueError(f"agent {agent!r} built with epsilon={epsilon:g} is non-private: nothing to audit")
    (feats, rewards), _ = neighbouring_streams(max_horizon)
    designs = plan_designs(policy_starts(probe, feats, rewards, seed), max_horizon, watch)
    if targets is not None:
        designs = [d for d in designs if d.target in set(targets)]
    n_tests = max(1, sum(len(d.windows) for d in designs))
    alpha = (1 - CONFIDENCE) / n_tests
    detectable = detectable_epsilon(n_draws, delta, alpha, N_SETS)
    if not designs:  # the probe's ledger: the releases of one whole run (at the stream's end, too)
        ledger = probe.ledger.guarantee(delta) if probe.ledger.releases else None
        return AgentAudit(agent, model, epsilon, delta, 0.0, -math.inf, ledger, n_draws, max_horizon, (), n_tests,
                          detectable)
    grid = np.array(EPS_GRID + (epsilon,))
    lower, delta_lower, spent = 0.0, -math.inf, []
    for i, design in enumerate(designs):
        design = designs[i] = _with_offset(design, build, pilot_draws, np.random.SeedSequence([seed, 2, i]))
        outs = []
        for j, (f, r) in enumerate(neighbouring_streams(design.horizon, design.target, offset=design.offset)):
            a = build()
            runs = [play_stream(a, f, r, np.random.default_rng(s))
                    for s in np.random.SeedSequence([seed, i, j]).spawn(n_draws)]
            outs.append(design.statistics(np.array([x[0] for x in runs])))
            spent += [x[1] for x in runs]
        for k, (start, stop) in enumerate(design.windows):
            bounds = set_lower_bounds(outs[0][:, k], outs[1][:, k], half_lines(stop - start), grid, alpha)
            refuted = grid[:-1][bounds[:-1] > delta]
            lower = max(lower, float(refuted.max(initial=0.0)))
            delta_lower = max(delta_lower, float(bounds[-1]))
    ledger = None if any(s is None for s in spent) else float(max(spent))
    return AgentAudit(agent, model, epsilon, delta, lower, delta_lower, ledger, n_draws,
                      max(d.horizon for d in designs), tuple(designs), n_tests, detectable)


def _with_offset(design: Design, build, pilot_draws: int, seeds: np.random.SeedSequence) -> Design:
    """``design`` with the offset c in [-1, 1] at which the watched users of the first window take arm 0
    with frequency f(-1) + :data:`PILOT_LEVEL` (f(1) - f(-1)) on the midpoint stream (target rewards 0), by
    bisection on pilot runs; c = 0 when the offset does not move f."""
    from dataclasses import replace

    start, stop = design.windows[0]
    steps = iter(seeds.spawn(PILOT_STEPS + 2))

    def freq(c: float) -> float:
        (f, r), _ = neighbouring_streams(design.horizon, design.target, offset=c)
        r[design.target] = 0.0
        agent = build()
        return float(np.mean([np.mean(play_stream(agent, f, r, np.random.default_rng(s))[0][start:stop] == 0)
                              for s in next(steps).spawn(pilot_draws)]))

    f_lo, f_hi = freq(-1.0), freq(1.0)
    if abs(f_hi - f_lo) < 0.1:
        return design
    level, sign = f_lo + PILOT_LEVEL * (f_hi - f_lo), (1.0 if f_hi > f_lo else -1.0)
    lo, hi = -1.0, 1.0
    for _ in range(PILOT_STEPS):
        c = (lo + hi) / 2
        lo, hi = (lo, c) if sign * (freq(c) - level) >= 0 else (c, hi)
    return replace(design, offset=(lo + hi) / 2)
