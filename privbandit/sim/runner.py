"""Run one agent on one environment for one seed: the batch path and the plain Gymnasium step loop.

Both paths play the same rounds with the same uniforms; they choose the same arms except at decisions within
rounding of a tie (:mod:`privbandit.agents.base`), and each path gives byte-identical tables for a seed:

- ``mode="loop"`` is the loop a user writes in RL code: ``obs, info = env.reset(seed=...)``, then per
  round ``a = agent.act(obs)``, ``obs, r, ..., info = env.step(a)``, ``agent.update(obs_before[a], r)``.
- ``mode="batch"`` draws rounds in blocks, ``env.unwrapped.sample_batch(n)`` (the next n rounds exactly as
  n ``step`` calls would; the draws do not depend on the actions, all arms' rewards are drawn), and serves
  each block in chunks while the agent's policy is fixed (``agent.rounds_until_update()``):
  ``agent.act_batch`` chooses the chunk's m arms at once and ``agent.update`` gets the m chosen rows.
  Blocks have at most ``max_chunk`` rounds to bound memory (max_chunk x K x d floats).

Seeds
-----
One ``seed`` (an int or a :class:`numpy.random.SeedSequence`) is turned into a SeedSequence ``ss`` and
spawned once: ``env_ss, agent_ss = ss.spawn(2)``. The env is reset with the int seed
``env_seed(ss)`` (128 bits of ``env_ss.generate_state``, folded into one Python int) and the agent with
``rng = numpy.random.default_rng(agent_ss)``. Nothing is seeded globally. The same seed therefore gives
the same contexts and rewards in both modes, and the same actions in one mode, in any process.

Regret
------
The instantaneous pseudo-regret of round t is max_a nu(<phi_t(a), theta*>) - nu(<phi_t(a_t), theta*>)
computed from the env's expected rewards of all K arms (``info["expected_reward"]`` in the loop,
``RoundBatch.expected_rewards`` in the batch path); the cumulative regret is its running sum.

References
----------
Source paper, `alg:batch-cb-meta` (the policy is fixed within an epoch, which is what makes the batch
path exact), `def:JDP-interactive` (the privacy guarantee checked at the end of every run).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._validation import check_choice, check_int
from ..protocols import AgentProtocol

COLUMNS: tuple[str, ...] = (
    "agent", "env", "family", "privacy_model", "epsilon", "delta", "seed", "n_arms", "dim", "horizon",
    "t", "epoch", "regret", "cum_regret", "epsilon_spent",
)
"""The columns of a run's table, in order (one row per logged round)."""

MODES: tuple[str, ...] = ("batch", "loop")


def split_seed(seed: Any) -> tuple[int, np.random.Generator]:
    """The env's reset seed and the agent's Generator derived from one seed (see the module docstring).

    Parameters
    ----------
    seed : int or SeedSequence
        The run's seed.

    Returns
    -------
    env_seed : int
        A 128-bit int for ``env.reset(seed=env_seed)``.
    agent_rng : numpy.random.Generator
        ``default_rng(agent_ss)`` for ``agent.reset(spec, rng=agent_rng)``.
    """
    env_seed, agent_ss = _split(seed)
    return env_seed, np.random.default_rng(agent_ss)


def _split(seed: Any) -> tuple[int, np.random.SeedSequence]:
    """:func:`split_seed` with the agent's SeedSequence instead of its Generator."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(check_int("seed", seed, low=0))
    env_ss, agent_ss = ss.spawn(2)
    words = env_ss.generate_state(4, dtype=np.uint32)
    return int(sum(int(w) << (32 * i) for i, w in enumerate(words))), agent_ss


def _copy(ss: np.random.SeedSequence) -> np.random.SeedSequence:
    """An equal, independent SeedSequence: an agent that spawns from its Generator's SeedSequence (which
    advances that object's spawn counter) cannot change what another agent's copy spawns."""
    return np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                  n_children_spawned=ss.n_children_spawned)


def geometric_grid(horizon: int, points_per_octave: int = 8) -> np.ndarray:
    """Rounds 1 <= t <= horizon logged by a run: about ``points_per_octave`` per doubling of t, plus t = horizon.

    Every t up to ``points_per_octave`` is kept, so short runs are logged densely; T = 2^24 gives about
    ``24 * points_per_octave`` rows.

    Parameters
    ----------
    horizon : int
        The last round T >= 1.
    points_per_octave : int
        Logged rounds per doubling of t.
    """
    horizon = check_int("horizon", horizon, low=1)
    ppo = check_int("points_per_octave", points_per_octave, low=1)
    n = int(math.ceil(math.log2(horizon) * ppo)) + 1 if horizon > 1 else 1
    grid = np.unique(np.round(np.geomspace(1, horizon, n)).astype(np.int64))
    dense = np.arange(1, min(ppo, horizon) + 1, dtype=np.int64)
    return np.union1d(np.union1d(grid, dense), [horizon])


def run_spec(env: Any, horizon: int | None) -> Any:
    """The :class:`BanditSpec` of a run of ``horizon`` rounds on ``env`` (the env's own horizon when None).

    Raises
    ------
    TypeError
        If ``env`` is not a privbandit bandit env (``env.unwrapped`` needs ``bandit_spec`` and ``sample_batch``).
    ValueError
        If ``horizon`` is not an integer in [1, the env's episode length].
    """
    unwrapped = env.unwrapped
    if not hasattr(unwrapped, "bandit_spec") or not hasattr(unwrapped, "sample_batch"):
        raise TypeError("env must be a privbandit bandit env (env.unwrapped needs bandit_spec() and sample_batch()), "
                        f"got {type(unwrapped).__name__}")
    spec = unwrapped.bandit_spec()
    if horizon is None:
        return spec
    horizon = check_int("horizon", horizon, low=1)
    if horizon > spec.horizon:
        raise ValueError(f"horizon must be in [1, {spec.horizon}] (the env's episode length), got {horizon}; "
                         f"make the env with horizon={horizon}")
    return dataclasses.replace(spec, horizon=horizon)


def start_run(agent: AgentProtocol, env: Any, horizon: int | None, seed: Any) -> tuple[Any, np.ndarray]:
    """Reset ``env`` and ``agent`` for a run of ``horizon`` rounds from one ``seed`` (see the module docstring).

    Returns
    -------
    spec : BanditSpec
        The env's spec with the run's horizon (the agent was reset with it).
    obs : ndarray (K, d)
        The first round's features, from ``env.reset``.
    """
    spec = run_spec(env, horizon)
    env_seed, agent_rng = split_seed(seed)
    obs, _info = env.reset(seed=env_seed)
    agent.reset(spec, rng=agent_rng)
    return spec, obs


@contextlib.contextmanager
def made_env(env_id: Any, horizon: int | None, env_kwargs: dict[str, Any] | None) -> Iterator[Any]:
    """``gym.make(env_id, horizon=horizon, **env_kwargs)``, closed on exit; an env instance as it is (it takes
    no ``env_kwargs``)."""
    import gymnasium as gym

    from ..envs.registration import ENV_IDS

    if not isinstance(env_id, str):
        if env_kwargs is not None:
            raise ValueError("env_kwargs applies only when env is given by id; configure the env instance instead")
        yield env_id
        return
    kwargs = dict(env_kwargs or {})
    if horizon is not None:
        kwargs["horizon"] = check_int("horizon", horizon, low=1)
    try:
        made = gym.make(env_id, **kwargs)
    except gym.error.Error as exc:              # unknown id, bad version, ...
        raise ValueError(f"env must be an env or a registered Gymnasium id such as {sorted(ENV_IDS)}, "
                         f"got {env_id!r} ({exc})") from None
    try:
        yield made
    finally:
        made.close()


def env_labels(env: Any) -> tuple[str, str]:
    """The ``env`` and ``family`` columns of a run on ``env``: its Gymnasium id (its class name when made
    without ``gym.make``) and its context family's name ("" when it has none)."""
    env_id = env.spec.id if getattr(env, "spec", None) is not None else type(env.unwrapped).__name__
    u = env.unwrapped
    family = getattr(u, "family", None)
    if family is None:
        family = getattr(getattr(u, "instance", None), "family", None)
    name = getattr(family, "name", family)
    return str(env_id), "" if name is None else str(name)


class _RegretLog:
    """The logged rounds' regret, cumulative regret and epoch, filled chunk by chunk in O(#logged) memory.

    The cumulative regret is carried as a running total with a sequential ``np.cumsum`` per chunk, which
    adds in the same order as one cumsum over all rounds: the numbers are bitwise those of the whole-array
    computation, whatever the chunking (one round at a time in the step loop).
    """

    def __init__(self, rounds: np.ndarray) -> None:
        self.rounds = rounds                    # 1-based logged rounds, increasing
        n = rounds.shape[0]
        self.regret = np.empty(n)
        self.cum = np.empty(n)
        self.epoch = np.empty(n, dtype=np.int64)
        self.total = 0.0
        self.done = 0

    def add(self, regret: np.ndarray, epoch: int) -> None:
        m = regret.shape[0]
        cum = np.cumsum(np.concatenate(([self.total], regret)))[1:]
        lo = int(np.searchsorted(self.rounds, self.done + 1, side="left"))
        hi = int(np.searchsorted(self.rounds, self.done + m, side="right"))
        idx = self.rounds[lo:hi] - 1 - self.done
        self.regret[lo:hi] = regret[idx]
        self.cum[lo:hi] = cum[idx]
        self.epoch[lo:hi] = epoch
        self.total = cum[-1]
        self.done += m


class PolicyChunk(NamedTuple):
    """Rounds played while the agent's policy was fixed (see :func:`policy_chunks`).

    Attributes
    ----------
    start : int
        0-based index of the chunk's first round in the run.
    features, rewards, expected_rewards : ndarray (m, K, d), (m, K), (m, K)
        The rounds as the env drew them (all arms' rewards).
    arms : ndarray of int (m,)
        The arms the agent chose.
    epoch : int
        The agent's epoch while it chose them (0 for agents without epochs).
    """

    start: int
    features: np.ndarray
    rewards: np.ndarray
    expected_rewards: np.ndarray
    arms: np.ndarray
    epoch: int


def policy_chunks(agent: AgentProtocol, env: Any, horizon: int, max_chunk: int = 1 << 14) -> Iterator[PolicyChunk]:
    """Play the batch path, yielding each chunk of rounds served by one fixed policy before the agent learns it.

    The agent (already reset) chooses a chunk's arms with one ``act_batch``; the chunk is yielded, and the
    agent is updated with the chosen rows when the consumer asks for the next chunk. So while a chunk is
    in the consumer's hands the agent's policy is still the one that chose its arms:
    ``agent.action_probabilities(chunk.features)`` are the probabilities the arms were drawn from.

    Parameters
    ----------
    agent : AgentProtocol
        A privbandit agent, reset for this env.
    env : gymnasium.Env
        A privbandit bandit env, reset; ``env.unwrapped.sample_batch`` draws the rounds.
    horizon : int
        Rounds to play.
    max_chunk : int
        At most this many rounds per ``sample_batch`` call (memory bound, max_chunk x K x d floats).

    References
    ----------
    Source paper, `alg:batch-cb-meta` (the policy is fixed within an epoch).
    """
    for start, features, rewards, expected in _env_blocks(env, horizon, max_chunk):
        yield from _block_chunks(agent, start, features, rewards, expected)


def _env_blocks(env: Any, horizon: int, max_chunk: int
                ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """The run's rounds in blocks of at most ``max_chunk``: (first round, features, rewards, expected rewards).

    The env's rounds do not depend on the actions (all arms' rewards are drawn every round), so one
    ``sample_batch`` serves several policy chunks (agents that update every round pay no env overhead) and
    several agents (:func:`run_many`). The next block is drawn only when the consumer asks for it.
    """
    sampler = env.unwrapped.sample_batch
    t = 0
    while t < horizon:
        n = min(max_chunk, horizon - t)
        batch = sampler(n)
        yield (t, np.asarray(batch.features, dtype=float), np.asarray(batch.rewards, dtype=float),
               np.asarray(batch.expected_rewards, dtype=float))
        t += n


def _block_chunks(agent: AgentProtocol, start: int, features: np.ndarray, rewards: np.ndarray, expected: np.ndarray
                  ) -> Iterator[PolicyChunk]:
    """One block's policy chunks for ``agent`` (see :func:`policy_chunks`), starting at round ``start``."""
    n = features.shape[0]
    lo = 0
    while lo < n:
        m = min(agent.rounds_until_update(), n - lo)
        if m <= 0:
            raise RuntimeError(f"{type(agent).__name__}.rounds_until_update() returned {m} at round {start + lo}")
        hi = lo + m
        epoch = int(getattr(agent, "epoch", 0))
        arms = np.asarray(agent.act_batch(features[lo:hi]), dtype=np.int64)
        rows = np.arange(lo, hi)
        yield PolicyChunk(start + lo, features[lo:hi], rewards[lo:hi], expected[lo:hi], arms, epoch)
        agent.update(features[rows, arms], rewards[rows, arms])
        lo = hi


def _log_chunk(log: _RegretLog, chunk: PolicyChunk) -> None:
    """Add a chunk's pseudo-regret (best expected reward minus the chosen arm's) to ``log``."""
    expected = chunk.expected_rewards
    chosen = expected[np.arange(chunk.arms.shape[0]), chunk.arms]
    log.add(expected.max(axis=1) - chosen, chunk.epoch)


def _play_loop(agent: AgentProtocol, env: Any, obs: np.ndarray, horizon: int, log: _RegretLog) -> None:
    for _t in range(horizon):
        epoch = int(getattr(agent, "epoch", 0))
        arm = agent.act(obs)
        chosen = np.array(obs[arm], dtype=float)
        obs, reward, _terminated, _truncated, info = env.step(arm)
        expected = np.asarray(info["expected_reward"], dtype=float)
        log.add(np.array([expected.max() - expected[arm]]), epoch)
        agent.update(chosen, reward)


def run(agent: AgentProtocol, env: Any, horizon: int | None = None, seed: Any = 0, *, mode: str = "batch",
        log: str = "geometric", points_per_octave: int = 8, max_chunk: int = 1 << 14,
        labels: dict[str, Any] | None = None, env_kwargs: dict[str, Any] | None = None) -> pd.DataFrame:
    """Play ``agent`` on ``env`` for ``horizon`` rounds and return the tidy table of its regret.

    Parameters
    ----------
    agent : AgentProtocol
        Any privbandit agent; it is reset here with the env's :class:`BanditSpec` and the seed's agent rng.
    env : gymnasium.Env or str
        A privbandit bandit env (``gym.make("PrivLinCB-v0", ...)``), reset here, or its Gymnasium id
        (``"PrivLinCB-v0"``): then the env is made here with ``gym.make(env, horizon=horizon, **env_kwargs)``
        (the env's default horizon when ``horizon`` is None) and closed at the end.
    horizon : int, optional
        Rounds to play, at most the env's episode length (default: that length).
    seed : int or numpy.random.SeedSequence
        The one seed of the run (see the module docstring for how it is split).
    mode : {"batch", "loop"}
        The chunked batch path or the plain Gymnasium step loop; both give the same tables but at rounding ties.
    log : {"geometric", "all"}
        Log the rounds of :func:`geometric_grid` (plus the last one) or every round.
    points_per_octave : int
        Density of the geometric grid.
    max_chunk : int
        At most this many rounds per ``sample_batch`` call in the batch path (memory bound); it does not
        change the results.
    labels : dict, optional
        Override the descriptive columns (e.g. ``{"agent": "iw-elim", "env": "heavy-tailed-d10"}``).
    env_kwargs : dict, optional
        Keyword arguments of ``gym.make`` (``family``, ``dim``, ``n_arms``, ...), only when ``env`` is an id.

    Returns
    -------
    pandas.DataFrame
        One row per logged round with the columns :data:`COLUMNS`: ``regret`` is the instantaneous
        pseudo-regret of round t, ``cum_regret`` the sum up to t, ``epoch`` the agent's epoch at round t
        (0 for agents without epochs), ``epsilon_spent`` the worst user's composed epsilon at the spec's
        delta from the agent's ledger (the same on every row).

    Raises
    ------
    privbandit.privacy.ledger.PrivacyBudgetExceeded
        If the agent's ledger shows a user who spent more than the agent's privacy spec.

    References
    ----------
    Source paper, `alg:batch-cb-meta`, `def:JDP-interactive`.

    Examples
    --------
    >>> from privbandit.agents import make_agent
    >>> from privbandit.sim import run
    >>> table = run(make_agent("elim-jdp", epsilon=1.0), "PrivLinCB-v0", horizon=256, seed=0,
    ...             env_kwargs={"n_arms": 3, "dim": 2})
    >>> list(table.columns)
    ['agent', 'env', 'family', 'privacy_model', 'epsilon', 'delta', 'seed', 'n_arms', 'dim', 'horizon',
     't', 'epoch', 'regret', 'cum_regret', 'epsilon_spent']
    >>> int(table["t"].iloc[-1]), round(float(table["epsilon_spent"].iloc[-1]), 6)
    (256, 1.0)
    """
    if not isinstance(agent, AgentProtocol):
        raise TypeError(f"agent must be a privbandit Agent (or have the methods of privbandit.protocols."
                        f"AgentProtocol), got {type(agent).__name__}")
    check_choice("mode", mode, MODES)
    max_chunk = _check_logging(log, max_chunk)
    with made_env(env, horizon, env_kwargs) as env:
        spec, obs = start_run(agent, env, horizon, seed)
        logged = _RegretLog(_logged_rounds(spec.horizon, log, points_per_octave))   # memory O(#logged rounds)
        if mode == "batch":
            for chunk in policy_chunks(agent, env, spec.horizon, max_chunk):
                _log_chunk(logged, chunk)
        else:
            _play_loop(agent, env, obs, spec.horizon, logged)
        return _table(agent, env, spec, seed, logged, labels)


def run_many(agents: Sequence[AgentProtocol], env: Any, horizon: int | None = None, seed: Any = 0, *,
             log: str = "geometric", points_per_octave: int = 8, max_chunk: int = 1 << 14,
             labels: Sequence[dict[str, Any] | None] | None = None,
             env_kwargs: dict[str, Any] | None = None) -> list[pd.DataFrame]:
    """Play several agents on the same rounds (the batch path): one env draw serves them all.

    Each agent's table is exactly :func:`run`'s for that agent alone with the same env and seed (the env
    is reset once with the seed's env part, every agent with its own fresh Generator from the seed's agent
    part; each agent's ledger is checked as there), but the rounds are drawn once instead of once per agent.
    Agents advance block by block (at most ``max_chunk`` rounds), so memory is one block plus the agents' own
    state. The shared blocks are read-only: an agent that writes into the features it is given raises instead
    of changing another agent's rounds.

    Parameters
    ----------
    agents : sequence of Agent
        Distinct privbandit agents (at least one; a single Agent counts as a sequence of one); each is
        reset here.
    env, horizon, seed, log, points_per_octave, max_chunk, env_kwargs :
        As in :func:`run`.
    labels : sequence of dict or None, optional
        One ``labels`` override per agent (see :func:`run`).

    Returns
    -------
    list of pandas.DataFrame
        One table per agent, in the order given, with the columns :data:`COLUMNS`. Each table's ``attrs``
        hold ``"agent_seconds"`` (wall seconds of this agent's own work: its reset, choices, updates and
        ledger check) and ``"env_seconds"`` (wall seconds of drawing the shared rounds, the same in every
        table).

    References
    ----------
    Source paper, `alg:batch-cb-meta`, `def:JDP-interactive`.

    Examples
    --------
    >>> from privbandit.agents import make_agent
    >>> from privbandit.sim import run, run_many
    >>> agents = [make_agent("elim-jdp", epsilon=1.0), make_agent("linucb")]
    >>> kw = dict(horizon=256, seed=0, env_kwargs={"n_arms": 3, "dim": 2})
    >>> tables = run_many(agents, "PrivLinCB-v0", **kw)
    >>> tables[0].equals(run(make_agent("elim-jdp", epsilon=1.0), "PrivLinCB-v0", **kw))
    True
    """
    agents, labels = _checked_agents(agents, labels)
    max_chunk = _check_logging(log, max_chunk)
    with made_env(env, horizon, env_kwargs) as env:
        spec = run_spec(env, horizon)
        env_seed, agent_ss = _split(seed)
        env.reset(seed=env_seed)
        clock = _reset_agents(agents, spec, agent_ss)
        rounds = _logged_rounds(spec.horizon, log, points_per_octave)
        logs = [_RegretLog(rounds) for _ in agents]
        env_seconds = _play_blocks(agents, logs, _env_blocks(env, spec.horizon, max_chunk), clock)
        tables = []
        for i, (agent, logged, lab) in enumerate(zip(agents, logs, labels)):
            tic = time.perf_counter()
            table = _table(agent, env, spec, seed, logged, lab)
            table.attrs.update(agent_seconds=clock[i] + time.perf_counter() - tic, env_seconds=env_seconds)
            tables.append(table)
        return tables


def _checked_agents(agents: Any, labels: Any) -> tuple[list[AgentProtocol], list[dict[str, Any] | None]]:
    """:func:`run_many`'s ``agents`` and ``labels`` as lists, checked (distinct agents, one label each)."""
    agents = list(agents) if not isinstance(agents, AgentProtocol) else [agents]
    if not agents or not all(isinstance(a, AgentProtocol) for a in agents):
        bad = next((type(a).__name__ for a in agents if not isinstance(a, AgentProtocol)), "an empty sequence")
        raise TypeError(f"agents must be a non-empty sequence of privbandit Agents, got {bad}")
    if len({id(a) for a in agents}) != len(agents):
        raise ValueError("agents must be distinct objects: one agent cannot play two runs at once")
    labels = [None] * len(agents) if labels is None else list(labels)
    if len(labels) != len(agents):
        raise ValueError(f"labels must have one entry per agent ({len(agents)}), got {len(labels)}")
    return agents, labels


def _reset_agents(agents: list[AgentProtocol], spec: Any, agent_ss: np.random.SeedSequence) -> list[float]:
    """Reset each agent with ``spec`` and its own fresh Generator from ``agent_ss``; the seconds each took."""
    clock = [0.0] * len(agents)
    for i, agent in enumerate(agents):
        tic = time.perf_counter()
        agent.reset(spec, rng=np.random.default_rng(_copy(agent_ss)))
        clock[i] += time.perf_counter() - tic
    return clock


def _play_blocks(agents: list[AgentProtocol], logs: list[_RegretLog], blocks: Iterator[tuple], clock: list[float]
                 ) -> float:
    """Play every agent on each shared read-only block of ``blocks``, logging its regret; add each agent's
    seconds to ``clock``. The seconds spent drawing the blocks."""
    env_seconds = 0.0
    while True:
        tic = time.perf_counter()
        block = next(blocks, None)
        env_seconds += time.perf_counter() - tic
        if block is None:
            return env_seconds
        for array in block[1:]:
            array.setflags(write=False)
        for i, (agent, logged) in enumerate(zip(agents, logs)):
            tic = time.perf_counter()
            for chunk in _block_chunks(agent, *block):
                _log_chunk(logged, chunk)
            clock[i] += time.perf_counter() - tic


def _check_logging(log: str, max_chunk: Any) -> int:
    """Check ``log``; the checked ``max_chunk``."""
    check_choice("log", log, ("geometric", "all"))
    return check_int("max_chunk", max_chunk, low=1)


def _logged_rounds(horizon: int, log: str, points_per_octave: int) -> np.ndarray:
    """The 1-based rounds a run logs: all of them or :func:`geometric_grid`'s."""
    return np.arange(1, horizon + 1) if log == "all" else geometric_grid(horizon, points_per_octave)


def _table(agent: AgentProtocol, env: Any, spec: Any, seed: Any, logged: _RegretLog,
           labels: dict[str, Any] | None) -> pd.DataFrame:
    """A finished run's table (:data:`COLUMNS`), after checking the agent's ledger against its spec."""
    spent = float(agent.ledger.check(agent.privacy))
    env_id, family = env_labels(env)
    privacy = agent.privacy
    meta = dict(agent=agent.name or type(agent).__name__, env=env_id, family=family, privacy_model=privacy.model,
                epsilon=float(privacy.epsilon), delta=float(privacy.delta),
                seed=int(seed) if not isinstance(seed, np.random.SeedSequence) else -1,
                n_arms=spec.n_arms, dim=spec.dim, horizon=spec.horizon)
    unknown = set(labels or {}) - set(meta)
    if unknown:
        raise ValueError(f"labels may only override {sorted(meta)}, got {sorted(unknown)}")
    meta.update(labels or {})
    t = logged.rounds
    n = t.shape[0]
    table: dict[str, Any] = {k: [v] * n for k, v in meta.items()}
    table.update(t=t, epoch=logged.epoch, regret=logged.regret, cum_regret=logged.cum,
                 epsilon_spent=np.full(n, spent))
    return pd.DataFrame({c: table[c] for c in COLUMNS})
