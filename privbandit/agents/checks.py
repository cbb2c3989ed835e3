"""The agent contract as a public checker: :func:`check_agent` runs small named checks on any agent.

The contract is the interface the runner, the sweeps and the privacy audit rely on. Each check is a public
function (:data:`AGENT_CHECKS`) that plays the agent on a :func:`synthetic_stream` and raises
:class:`ContractError` (``privbandit.agents.ContractError``, the oracle contract's error too), naming itself and what
failed, at the first breach. Passing is
evidence, not proof: the checks see one small stream and one seed; regret is the benchmark's business, not the
contract's.

References
----------
Source paper, `alg:batch-cb-meta` (a policy fixed within an epoch), `alg:plan`, `def:JDP-interactive`,
`def:LDP`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from .._validation import check_int
from ..oracles.checks import (
    ContractError,
    ledger_within_spec,
    neighbour_pair,
    releases_within_sensitivity,
    replayed_neighbours,
    replayed_pair,
)
from .base import Agent, BanditSpec

__all__ = [
    "AGENT_CHECKS", "PRIVACY_CHECKS", "AgentLike", "ContractError", "Played", "check_act_and_update_shapes",
    "check_action_probabilities", "check_actions_depend_only_on_releases", "check_agent", "check_bad_input_errors",
    "check_ledger_within_budget", "check_releases_within_sensitivity", "check_step_loop_equals_batch_path",
    "play_batch", "play_loop", "policy_rounds", "PRIVACY_HORIZON", "shared_replays", "STEP_BATCH_RTOL",
    "synthetic_stream",
]

AgentLike = Agent | Callable[[], Agent]
"""An :class:`~privbandit.agents.Agent` (copied before each run) or a zero-argument factory returning one."""

#: False-alarm rate, per arm, of the frequency test of :func:`check_action_probabilities`.
FREQUENCY_ALPHA = 1e-6

STEP_BATCH_RTOL = 1e-8
"""Relative size of the feature perturbations that may explain a round where the step loop and the batch path
choose different arms (:func:`check_step_loop_equals_batch_path`).

A fit fed one row at a time sums its rows in another order than one fed a block, so the two paths' estimates
differ by rounding: about n u relative (u = 2^-53, n <= a few hundred rows here), amplified by at most the
condition number of the fits' Gram matrices. Below 1e-9 on the check's well-conditioned stream, so 1e-8
covers every rounding difference with a decade to spare, while an agent that draws other uniforms or picks
another arm on purpose differs by far more than a 1e-8 change of the features can explain."""

PRIVACY_HORIZON = 32
"""Rounds of the stream of the privacy checks (:data:`PRIVACY_CHECKS`), on which every user 0 .. T - 1 is changed
in turn, at a cost of O(T^2) rounds (:func:`check_actions_depend_only_on_releases`; :func:`check_agent` plays them
on ``min(horizon, privacy_horizon)`` rounds and says what they cannot see)."""

STEP_BATCH_TRIES = 16
"""Perturbations tried per differing round (a true rounding tie flips under about half of them)."""


class Played(NamedTuple):
    """A run on a fixed stream (:func:`play_batch`).

    Attributes
    ----------
    actions : ndarray of int (T,)
    probabilities : ndarray (T, K) or None
        ``action_probabilities`` of each round, taken just before its arm was drawn (if asked for).
    starts : tuple of int
        The rounds at which each fixed policy (each ``rounds_until_update()`` block) began, 0 first: where the
        releases made so far reach the next users.
    """

    actions: np.ndarray
    probabilities: np.ndarray | None
    starts: tuple[int, ...] = ()


def synthetic_stream(n_arms: int, dim: int, horizon: int, rng: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """A contract stream: features (T, K, d) with norms uniform in [0, 1), rewards (T, K) of every arm in [-1, 1].

    The rewards are clip(<phi, theta> + 0.5 z, -1, 1) with theta = (1, ..., 1) / sqrt(d), z ~ N(0, 1).
    """
    gen = np.random.default_rng(rng)
    x = gen.standard_normal((horizon, n_arms, dim))
    x *= (gen.random((horizon, n_arms)) / np.maximum(np.linalg.norm(x, axis=2), 1e-300))[..., None]
    theta = np.ones(dim) / np.sqrt(dim)
    rewards = np.clip(x @ theta + 0.5 * gen.standard_normal((horizon, n_arms)), -1.0, 1.0)
    return x, rewards


def _reset(agent: Agent, features: np.ndarray, rng: Any, spec: BanditSpec | None = None) -> int:
    horizon, k, d = features.shape
    agent.reset(BanditSpec(n_arms=k, dim=d, horizon=horizon) if spec is None else spec, rng=rng)
    return horizon


def policy_rounds(agent: Agent, t: int, horizon: int) -> int:
    """``agent.rounds_until_update()`` at round ``t``, checked, so a loop that plays the agent's blocks moves on.

    Parameters
    ----------
    agent : Agent
        A reset agent.
    t : int
        The round the next block starts at, < ``horizon``.
    horizon : int
        The rounds of the run.

    Raises
    ------
    ContractError
        Naming :func:`check_act_and_update_shapes`, unless the answer is an int in [1, horizon - t].
    """
    m = agent.rounds_until_update()
    if not (isinstance(m, (int, np.integer)) and 1 <= m <= horizon - t):
        raise ContractError("check_act_and_update_shapes", f"rounds_until_update() at round {t} of {horizon} must "
                                                           f"return an int in [1, {horizon - t}], got {m!r}")
    return int(m)


def play_batch(agent: Agent, features: np.ndarray, rewards: np.ndarray, rng: Any = None, *,
               probabilities: bool = False) -> Played:
    """Reset ``agent`` for a fixed stream and play it through the batch interface.

    While the policy is fixed (``rounds_until_update()`` rounds) ``act_batch`` chooses the rounds' arms at once
    and ``update`` gets the chosen rows and rewards.

    Parameters
    ----------
    agent : Agent
        Reset here with ``BanditSpec(n_arms=K, dim=d, horizon=T)`` and ``rng``.
    features : ndarray (T, K, d)
    rewards : ndarray (T, K)
        Every arm's reward of every round.
    rng : int or Generator, optional
        The agent's randomness.
    probabilities : bool
        Also take ``action_probabilities`` of each policy's rounds just before its ``act_batch``.

    Returns
    -------
    Played

    Raises
    ------
    ContractError
        Naming ``check_act_and_update_shapes``, if ``rounds_until_update()`` leaves [1, T - t] before the horizon.
    """
    _reset(agent, features, rng)
    probs = np.empty(rewards.shape) if probabilities else None
    starts: list[int] = []
    return Played(_play_from(agent, features, rewards, 0, probs=probs, starts=starts), probs, tuple(starts))


def _play_from(agent: Agent, features: np.ndarray, rewards: np.ndarray, t: int, *, step: bool = False,
               probs: np.ndarray | None = None, stop: int | None = None, starts: list[int] | None = None
               ) -> np.ndarray:
    """Play ``agent``, whose run has reached round ``t``, up to round ``stop`` (default: the end of the stream; a
    policy's end); the arms of rounds t .. stop - 1.

    The batch path (one ``act_batch`` and one ``update`` per fixed policy, ``probs[t:t + m]`` filled just before
    each ``act_batch`` and its first round appended to ``starts`` when given) or, with ``step``, the Gymnasium
    step loop (``act`` and ``update`` one round at a time)."""
    horizon = features.shape[0]
    stop = horizon if stop is None else stop
    actions = np.empty(stop - t, dtype=np.int64)
    start = t
    while t < stop:
        if step:
            actions[t - start] = a = agent.act(features[t])
            agent.update(features[t, a], float(rewards[t, a]))
            t += 1
            continue
        m = policy_rounds(agent, t, horizon)
        if starts is not None:
            starts.append(t)
        if probs is not None:
            probs[t:t + m] = agent.action_probabilities(features[t:t + m])
        a = np.asarray(agent.act_batch(features[t:t + m]))
        actions[t - start:t - start + m] = a
        rows = np.arange(m)
        agent.update(features[t:t + m][rows, a], rewards[t:t + m][rows, a])
        t += m
    return actions


def play_loop(agent: Agent, features: np.ndarray, rewards: np.ndarray, rng: Any = None) -> np.ndarray:
    """Reset ``agent`` for a fixed stream and play the Gymnasium step loop: ``act`` one round, ``update`` its row.

    Parameters and randomness as :func:`play_batch`; returns the actions (T,).
    """
    _reset(agent, features, rng)
    return _play_from(agent, features, rewards, 0, step=True)


def _builder(agent: AgentLike) -> Callable[[], Agent]:
    """A zero-argument function returning a fresh agent: a deep copy of an Agent, or the factory's product."""
    if isinstance(agent, Agent):
        return lambda: copy.deepcopy(agent)
    if not callable(agent):
        raise TypeError(f"agent must be a privbandit Agent or a factory returning one, got {type(agent).__name__}")

    def build() -> Agent:
        made = agent()
        if not isinstance(made, Agent):
            raise TypeError(f"the agent factory must return a privbandit Agent, got {type(made).__name__}")
        return made

    return build


def _stream(n_arms: int, dim: int, horizon: int, rng: int) -> tuple[np.ndarray, np.ndarray]:
    return synthetic_stream(n_arms, dim, horizon, np.random.SeedSequence([rng, 1]))


def check_act_and_update_shapes(agent: AgentLike, *, n_arms: int = 4, dim: int = 3, horizon: int = 256,
                                rng: int = 0) -> None:
    """Play the stream mixing ``act`` and ``act_batch``, checking every return value's type and shape.

    ``reset`` returns the agent; ``rounds_until_update()`` is in [1, T - t] before the horizon and 0 at it;
    ``act`` returns an int arm in [0, K); ``act_batch`` on (m, K, d) an integer array (m,) of arms;
    ``action_probabilities`` has shape (K,) for one round's features and (m, K) for m rounds.
    """
    name = "check_act_and_update_shapes"
    a = _builder(agent)()
    x, r = _stream(n_arms, dim, horizon, rng)
    if a.reset(BanditSpec(n_arms=n_arms, dim=dim, horizon=horizon), rng=rng) is not a:
        raise ContractError(name, "reset(spec, rng) must return the agent itself")
    t = 0
    while t < horizon:
        m = policy_rounds(a, t, horizon)
        p_one, p_many = a.action_probabilities(x[t]), a.action_probabilities(x[t:t + m])
        if np.shape(p_one) != (n_arms,) or np.shape(p_many) != (m, n_arms):
            raise ContractError(name, f"action_probabilities must have shape ({n_arms},) for one round and ({m}, "
                                      f"{n_arms}) for {m}, got {np.shape(p_one)} and {np.shape(p_many)}")
        first = a.act(x[t])
        if not (isinstance(first, (int, np.integer)) and 0 <= first < n_arms):
            raise ContractError(name, f"act must return an int arm in [0, {n_arms}), got {first!r}")
        rest = np.asarray(a.act_batch(x[t + 1:t + m])) if m > 1 else np.empty(0, dtype=np.int64)
        arms_ok = np.issubdtype(rest.dtype, np.integer) and np.all((rest >= 0) & (rest < n_arms))
        if rest.shape != (m - 1,) or not arms_ok:
            raise ContractError(name, f"act_batch on {m - 1} rounds must return {m - 1} int arms in [0, {n_arms}), "
                                      f"got {rest!r}")
        arms = np.concatenate([[first], rest]).astype(np.int64)
        rows = np.arange(m)
        a.update(x[t:t + m][rows, arms], r[t:t + m][rows, arms])
        t += m
    if a.rounds_until_update() != 0:
        raise ContractError(name, f"rounds_until_update() must be 0 at the horizon, got {a.rounds_until_update()!r}")


def check_step_loop_equals_batch_path(agent: AgentLike, *, n_arms: int = 4, dim: int = 3, horizon: int = 256,
                                      rng: int = 0, stream: tuple[np.ndarray, np.ndarray] | None = None,
                                      spec: BanditSpec | None = None) -> None:
    """For one seed the step loop and the batch path choose the same arms but at rounding ties, and record
    the same releases.

    Two copies of the agent play the stream in lockstep, fed the same rows (the step loop's arms): one
    round at a time (``act``, then ``update`` of one row), and one fixed policy at a time (``act_batch`` on
    the rounds ``rounds_until_update()`` allows, then ``update`` of the block), once whole and once in
    ragged pieces of at most 3 rounds. Both must draw the same uniforms per round. Where they choose
    different arms the decision must be a tie up to rounding: the batch path, from the state it chose in
    and with the same uniforms, must choose the step loop's arm on the round's features with each entry
    shrunk by a random relative amount below :data:`STEP_BATCH_RTOL` (one of
    :data:`STEP_BATCH_TRIES` perturbations suffices; that constant says why this separates rounding from
    another rule).

    ``stream`` (features (T, K, d), rewards (T, K)) replaces the synthetic stream (``n_arms``, ``dim`` and
    ``horizon`` are then the stream's), and ``spec`` the ``BanditSpec(K, d, T)`` both copies are reset with
    (an environment's ``bandit_spec()``, with its bound and link; it must match the stream's shape).
    """
    build = _builder(agent)
    x, r = _stream(n_arms, dim, horizon, rng) if stream is None else stream
    horizon = x.shape[0]
    ledgers = {}
    for path, max_chunk in (("batch path", None), ("ragged batch path", 3)):
        step, batch = build(), build()
        _reset(step, x, rng, spec)
        _reset(batch, x, rng, spec)
        t = 0
        while t < horizon:
            m = policy_rounds(batch, t, horizon)
            m = m if max_chunk is None else min(m, max_chunk)
            before = copy.deepcopy(batch)
            batch_arms = np.asarray(batch.act_batch(x[t:t + m]))
            step_arms = np.empty(m, dtype=np.int64)
            for i in range(m):
                step_arms[i] = a = step.act(x[t + i])
                step.update(x[t + i, a], float(r[t + i, a]))
            for i in np.flatnonzero(step_arms != batch_arms).tolist():
                if not _rounding_tie(before, x[t:t + i + 1], int(step_arms[i]), rng + t + i):
                    raise ContractError(
                        "check_step_loop_equals_batch_path",
                        f"the {path} played arm {batch_arms[i]} at round {t + i}, the step loop arm {step_arms[i]} "
                        f"(same seed, same rows so far), and no change of the features below {STEP_BATCH_RTOL:g} "
                        "relative makes it a tie: draw exactly the same uniforms per round and use one rule "
                        "whether acting one by one or in a batch")
            if step.action_rng_state != batch.action_rng_state:
                raise ContractError("check_step_loop_equals_batch_path",
                                    f"after round {t + m - 1} the step loop had drawn other uniforms than the {path}: "
                                    "draw exactly uniforms_per_round uniforms per round on both paths")
            rows = np.arange(m)
            batch.update(x[t:t + m][rows, step_arms], r[t:t + m][rows, step_arms])
            t += m
        ledgers[path] = (list(step.ledger.releases), list(batch.ledger.releases))
    for path, (loop_ledger, ledger) in ledgers.items():
        if ledger != loop_ledger:
            raise ContractError("check_step_loop_equals_batch_path",
                                f"the {path} recorded other releases than the step loop ({len(ledger)} vs "
                                f"{len(loop_ledger)})")


def _rounding_tie(before: Agent, contexts: np.ndarray, arm: int, seed: int) -> bool:
    """Whether ``before`` (an agent about to choose ``contexts``' rounds in one ``act_batch``) chooses ``arm``
    in the last round once that round's features are shrunk entrywise by relative amounts below
    :data:`STEP_BATCH_RTOL`, for one of :data:`STEP_BATCH_TRIES` random perturbations (same uniforms: each
    try acts on a copy)."""
    gen = np.random.default_rng(seed)
    for _ in range(STEP_BATCH_TRIES):
        shrunk = contexts.copy()
        shrunk[-1] *= 1.0 - STEP_BATCH_RTOL * gen.random(shrunk[-1].shape)     # (never leaves the ball)
        if int(np.asarray(copy.deepcopy(before).act_batch(shrunk))[-1]) == arm:
            return True
    return False


def _frequency_slack(variance: np.ndarray) -> np.ndarray:
    """Freedman's bound on |sum_t (1{a_t = k} - p_t(k))| at false-alarm rate :data:`FREQUENCY_ALPHA` (per arm)."""
    log_term = np.log(2.0 / FREQUENCY_ALPHA)
    return np.sqrt(2.0 * variance * log_term) + 2.0 * log_term / 3.0


def check_action_probabilities(agent: AgentLike, *, n_arms: int = 4, dim: int = 3, horizon: int = 256,
                               rng: int = 0) -> None:
    """``action_probabilities`` is the distribution the arms are drawn from, and asking for it changes nothing.

    On the batch path, each piece's probabilities are taken just before its ``act_batch``. They must be
    finite, >= 0 and sum to 1 per round; every drawn arm must have had a positive probability; for every
    arm k the count of draws minus the summed probabilities, a martingale, must be within Freedman's bound
    sqrt(2 V log(2/alpha)) + (2/3) log(2/alpha), V = sum_t p_t(k) (1 - p_t(k)), alpha =
    :data:`FREQUENCY_ALPHA`. And the actions must equal those of the same run without the calls.
    """
    name = "check_action_probabilities"
    build = _builder(agent)
    x, r = _stream(n_arms, dim, horizon, rng)
    played = play_batch(build(), x, r, rng, probabilities=True)
    p, arms = played.probabilities, played.actions
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ContractError(name, "action_probabilities must be finite, >= 0 and sum to 1 in every round")
    chosen = p[np.arange(horizon), arms]
    if np.any(chosen <= 0):
        t = int(np.flatnonzero(chosen <= 0)[0])
        raise ContractError(name, f"round {t} played arm {arms[t]}, to which action_probabilities gave probability "
                                  f"{chosen[t]:g}: the two disagree")
    excess = np.bincount(arms, minlength=n_arms) - p.sum(axis=0)
    slack = _frequency_slack((p * (1 - p)).sum(axis=0))
    if np.any(np.abs(excess) > slack):
        k = int(np.argmax(np.abs(excess) - slack))
        raise ContractError(name, f"arm {k} was drawn {np.count_nonzero(arms == k)} times in {horizon} rounds, but "
                                  f"action_probabilities summed to {p[:, k].sum():.1f} (bound +-{slack[k]:.1f})")
    plain = play_batch(build(), x, r, rng).actions
    if not np.array_equal(plain, arms):
        raise ContractError(name, "calling action_probabilities changed the actions: it must not draw from the "
                                  "agent's randomness nor change its state")


def check_ledger_within_budget(agent: AgentLike, *, n_arms: int = 4, dim: int = 3, horizon: int = 256,
                               rng: int = 0) -> None:
    """After a run the agent's ledger holds its privacy claim.

    A non-private agent records nothing. A private one records at least one release, every release touches
    rounds in [0, T), the worst user's composed epsilon at the spec's delta is at most the spec's epsilon
    (relative slack :data:`~privbandit.oracles.checks.BUDGET_RTOL`), and a local-DP agent records local
    releases only.
    """
    name = "check_ledger_within_budget"
    a = _builder(agent)()
    x, r = _stream(n_arms, dim, horizon, rng)
    play_batch(a, x, r, rng)
    ledger_within_spec(name, "agent", "rounds", a.privacy, a.ledger, horizon)


def _replayed_runs(build: Callable[[], Agent], n_arms: int, dim: int, horizon: int, rng: int, check: str,
                   step: bool = False, users: Sequence[int] | None = None) -> list[tuple]:
    """The neighbouring runs of the privacy checks: (user, tape of D, arms on D, tape of D', arms on D') for each
    of ``users`` (default: every user 0 .. T - 1), D and D' the contract stream changed at that user
    (:func:`~privbandit.oracles.checks.neighbour_pair`), D' handed D's releases.

    The shared prefix and the whole-run pair (the median of ``users``) are those of
    :func:`check_actions_depend_only_on_releases`; the tapes hold the releases from the user's block on (those
    before it have the same inputs on D and D'), the arms are the whole run's. An agent that releases nothing
    through privbandit's mechanisms is refused as by :func:`~privbandit.oracles.checks.replayed_neighbours`.
    """
    todo = list(range(horizon)) if users is None else sorted({check_int("user", u, low=0, high=horizon - 1)
                                                              for u in users})
    if not todo:
        raise ValueError("users must name at least one user (None: every user of the stream)")
    shared = _SHARED.get()
    key = (n_arms, dim, horizon, rng, step, tuple(todo))
    if shared is not None and key in shared:
        return shared[key]
    x, r = _stream(n_arms, dim, horizon, rng)
    base = build()
    _reset(base, x, rng)
    arms = np.empty(horizon, dtype=np.int64)
    pairs, t, i = [], 0, 0
    while i < len(todo):
        m = 1 if step else policy_rounds(base, t, horizon)
        while i < len(todo) and todo[i] < t + m:
            x1, r1, x2, r2 = neighbour_pair(x, r, todo[i])
            copies = partial(_continue, base, arms[:t], t, step)
            pairs.append(replayed_pair(partial(copies, x1, r1), partial(copies, x2, r2), todo[i], check, "user"))
            i += 1
        arms[t:t + m] = _play_from(base, x, r, t, step=step, stop=t + m)
        t += m
    anchor = len(todo) // 2
    user = todo[anchor]
    whole = replayed_neighbours(lambda xs, rs: play_loop(build(), xs, rs, rng) if step else
                                play_batch(build(), xs, rs, rng).actions, x, r, [user], check, "agent", "user")[0]
    kept = pairs[anchor]
    tail = len(kept[1])       # the releases from the user's block on: the last ones of the whole run
    same = (np.array_equal(whole[2], kept[2]) and np.array_equal(whole[4], kept[4]) and len(whole[1]) >= tail
            and all(len(mine) == tail and all(np.array_equal(p, q) for p, q in zip(tape.outputs[len(tape) - tail:],
                                                                                   mine.outputs))
                    for tape, mine in ((whole[1], kept[1]), (whole[3], kept[3]))))
    if not same:
        raise ContractError(check, f"a deep copy of the agent taken mid-run (before user {user}'s round) did not "
                                   "continue as the agent itself did: the privacy checks replay each user from "
                                   "copy.deepcopy of the run before it, so keep a run's state in the agent and "
                                   "draw all randomness from the rng given to reset")
    if shared is not None:
        shared[key] = pairs
    return pairs


_SHARED: ContextVar[dict | None] = ContextVar("privbandit_shared_replays", default=None)
"""Inside :func:`shared_replays`: the neighbouring runs of :func:`_replayed_runs` by their parameters; None
elsewhere."""


@contextmanager
def shared_replays() -> Iterator[None]:
    """Inside it the privacy checks play the neighbouring runs of one set of parameters once and share them (the
    batch path's runs, which both checks replay). For one agent only: :func:`check_agent` and the audit's contract
    stage run their checks of one agent inside it."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _continue(base: Agent, before: np.ndarray, t: int, step: bool, features: np.ndarray,
              rewards: np.ndarray) -> np.ndarray:
    """The whole run's arms when a deep copy of ``base`` (its run at round ``t``, arms ``before``) plays a stream
    from round ``t`` on. Call it before ``base`` moves on."""
    return np.concatenate([before, _play_from(copy.deepcopy(base), features, rewards, t, step=step)])


def check_releases_within_sensitivity(agent: AgentLike, *, n_arms: int = 4, dim: int = 3,
                                      horizon: int = PRIVACY_HORIZON, rng: int = 0,
                                      users: Sequence[int] | None = None) -> None:
    """Every release of a private agent moves by at most its mechanism's declared sensitivity when one user changes.

    :func:`~privbandit.oracles.checks.check_releases_within_sensitivity` on the batch-path runs of
    :func:`check_actions_depend_only_on_releases`: one pair of neighbouring streams per changed user (every user
    0 .. T - 1 of the T = ``horizon``-round stream in turn, or each of ``users``).
    """
    name = "check_releases_within_sensitivity"
    build = _builder(agent)
    spec = build().privacy
    if not spec.is_private:
        return
    releases_within_sensitivity(name, "user", _replayed_runs(build, n_arms, dim, horizon, rng, name, users=users),
                                local=spec.model == "ldp")


def check_actions_depend_only_on_releases(agent: AgentLike, *, n_arms: int = 4, dim: int = 3,
                                          horizon: int = PRIVACY_HORIZON, rng: int = 0,
                                          users: Sequence[int] | None = None) -> None:
    """A private agent's other users' actions depend on one user's data only through its releases.

    For every user u of the T = ``horizon``-round stream in turn (or each of ``users``): play stream D (user u's
    features and rewards at one extreme), recording every release; play the neighbour D' (user u's at the other
    extreme) with the same seed while every release returns the first run's output; both runs once through
    ``act_batch`` and once through the step loop (``act`` one round at a time, the lean per-round path). Every
    user other than u must get the same arm, and the second run must make the same releases (number and
    shapes): what an agent releases, and when, is public. This is the data flow joint DP needs
    (`def:JDP-interactive`; local DP implies it). Nothing to check for a non-private agent.

    The rounds before u's fixed policy (before u's round, in the step loop) are the same on D and D', so they
    are played once and each pair continues a deep copy of the agent from there; one pair is also played whole
    from ``reset`` and must agree with its continuation (an agent whose ``copy.deepcopy`` does not continue as
    itself fails, saying so). Each changed user costs two runs of the rest of the stream on each path: O(T^2)
    rounds for all users of the step loop, hence the short default stream (:data:`PRIVACY_HORIZON`).
    """
    name = "check_actions_depend_only_on_releases"
    build = _builder(agent)
    if not build().privacy.is_private:
        return
    for path, step in (("", False), (" in the step loop (act one round at a time)", True)):
        for user, _, first, _, second in _replayed_runs(build, n_arms, dim, horizon, rng, name, step, users):
            differ = [t for t in np.flatnonzero(first != second) if t != user]
            if differ:
                raise ContractError(name, f"changing only user {user}'s data changed user {differ[0]}'s arm{path} "
                                          "though every release was the same: the agent acts on data it did not "
                                          "release")


def check_bad_input_errors(agent: AgentLike, *, n_arms: int = 4, dim: int = 3, horizon: int = 256,
                           rng: int = 0) -> None:
    """Misuse raises: acting before ``reset`` (RuntimeError), a spec that is not a BanditSpec (TypeError), and
    features of the wrong shape or with NaN, rows and rewards that do not match, a NaN reward, more rounds
    than ``rounds_until_update()`` in ``act_batch`` or ``update`` (ValueError).
    """
    a = _builder(agent)()
    x, _ = _stream(n_arms, dim, horizon, rng)
    spec = BanditSpec(n_arms=n_arms, dim=dim, horizon=horizon)
    nan = x[0].copy()
    nan[0, 0] = np.nan
    wide = np.zeros((n_arms, dim + 1))
    cases: list[tuple[str, type, Callable[[], Any]]] = [
        ("act before reset", RuntimeError, lambda: a.act(x[0])),
        ("reset with a dict for spec", TypeError, lambda: a.reset({"n_arms": n_arms}, rng=rng)),
        (f"act on features of shape {wide.shape}", ValueError, lambda: a.reset(spec, rng=rng).act(wide)),
        ("act on features with a NaN", ValueError, lambda: a.act(nan)),
        ("update with 2 rows and 3 rewards", ValueError, lambda: a.update(x[0, :2], np.zeros(3))),
        ("update with a NaN reward", ValueError, lambda: a.update(x[0, 0], float("nan"))),
        ("act_batch on one round more than rounds_until_update()", ValueError,
         lambda: a.act_batch(np.repeat(x[:1], a.rounds_until_update() + 1, axis=0))),
        ("update with one row more than rounds_until_update()", ValueError,
         lambda: a.update(np.repeat(x[0, :1], a.rounds_until_update() + 1, axis=0),
                          np.zeros(a.rounds_until_update() + 1))),
    ]
    for what, error, call in cases:
        try:
            call()
        except error:
            continue
        except Exception as exc:               # the wrong kind of error: say which
            raise ContractError("check_bad_input_errors", f"{what} must raise {error.__name__}, raised "
                                                          f"{type(exc).__name__}: {exc}") from exc
        raise ContractError("check_bad_input_errors", f"{what} must raise {error.__name__}, and did not")


AGENT_CHECKS: tuple[Callable[..., None], ...] = (
    check_act_and_update_shapes, check_step_loop_equals_batch_path, check_action_probabilities,
    check_ledger_within_budget, check_releases_within_sensitivity, check_actions_depend_only_on_releases,
    check_bad_input_errors,
)
"""The checks :func:`check_agent` runs, in order; each takes ``(agent, *, n_arms, dim, horizon, rng)``."""

PRIVACY_CHECKS: tuple[Callable[..., None], ...] = (check_releases_within_sensitivity,
                                                   check_actions_depend_only_on_releases)
"""The checks of :data:`AGENT_CHECKS` whose failure is a privacy finding (one user's data reaches the other users
other than through its releases, or a release's noise does not cover one user); each also takes ``users``, the
users changed one at a time (default: every user of its stream). A failure of the others breaks the interface,
not (by itself) the privacy claim."""


def check_agent(agent: AgentLike, *, n_arms: int = 4, dim: int = 3, horizon: int = 256, rng: int = 0,
                privacy_horizon: int = PRIVACY_HORIZON) -> None:
    """Check that ``agent`` keeps the agent contract: run every check of :data:`AGENT_CHECKS`.

    Run it on your own agent as you run Gymnasium's ``check_env`` on your own env; the test suite runs it on
    every registered agent. It returns None when every check passes and raises at the first breach.

    What the privacy checks (:data:`PRIVACY_CHECKS`) change: every user 0 .. T - 1 of their stream of
    T = ``min(horizon, privacy_horizon)`` rounds, one at a time (that user's features and rewards moved across
    the ball, every other user's the same), each pair of runs handed the same releases. A leak keyed to any one
    of those users fails them; what they cannot see: users after round T - 1 and effects that show only later,
    a leak that needs two users changed at once, and noise drawn outside privbandit's mechanisms (refused:
    "released nothing"). The other checks play ``horizon`` rounds.

    Parameters
    ----------
    agent : Agent or callable
        The agent (deep-copied before each run, so it is never changed) or a zero-argument factory returning
        a fresh one, e.g. ``lambda: make_agent("elim-jdp", epsilon=1.0)``.
    n_arms, dim : int
        K >= 2 arms and the feature dimension d >= 1 of the synthetic stream.
    horizon : int
        T >= 8 rounds of each run (longer runs give the frequency test more power and take longer).
    rng : int
        Seed (>= 0) of the stream and of the agent.
    privacy_horizon : int
        At most this many rounds (>= 2) in the privacy checks' stream, every user of which they change in
        turn: their cost grows as its square (:data:`PRIVACY_HORIZON`).

    Raises
    ------
    ContractError
        From the first check that fails, naming it (``err.check``) and what failed.
    TypeError
        If ``agent`` is neither an Agent nor a factory returning one.

    References
    ----------
    Source paper, `alg:batch-cb-meta`, `alg:plan`, `def:JDP-interactive`, `def:LDP`.

    Examples
    --------
    >>> from privbandit.agents import check_agent, make_agent
    >>> check_agent(make_agent("elim-jdp-ucb", epsilon=1.0, delta=1e-5), horizon=64)

    An agent whose ``action_probabilities`` do not describe its draws fails, naming the check:

    >>> import numpy as np
    >>> from privbandit.agents import UniformAgent
    >>> from privbandit.agents import ContractError
    >>> class FirstArm(UniformAgent):               # says uniform, always plays arm 0
    ...     def _choose(self, features, uniforms):
    ...         return np.zeros(features.shape[0], dtype=np.int64)
    >>> try:
    ...     check_agent(FirstArm, horizon=64)
    ... except ContractError as err:
    ...     print(err.check)
    check_action_probabilities
    """
    build = _builder(agent)
    n_arms = check_int("n_arms", n_arms, low=2)
    dim = check_int("dim", dim, low=1)
    horizon = check_int("horizon", horizon, low=8)
    rng = check_int("rng", rng, low=0)
    privacy_horizon = min(horizon, check_int("privacy_horizon", privacy_horizon, low=2))
    with shared_replays():            # the two privacy checks replay the same batch-path runs: play them once
        for check in AGENT_CHECKS:
            check(build, n_arms=n_arms, dim=dim, horizon=privacy_horizon if check in PRIVACY_CHECKS else horizon,
                  rng=rng)
