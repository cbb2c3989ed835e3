"""coba adapters: privbandit envs as coba Environments, privbandit agents as coba Learners.

coba (https://github.com/VowpalWabbit/coba, tested with 8.1) runs contextual-bandit experiments: an
``Experiment(environments, learners).run()`` plays every learner on every environment with its
``SequentialCB`` evaluator and returns a ``Result`` of per-interaction rows. Install it with the extra:
``pip install "privbandit[coba]"``.

- :class:`CobaEnvironment` serves a privbandit env's rounds as coba interactions (``context=None``, the K arms'
  feature rows as actions, every arm's drawn reward, the env round as ``round``), reset with the seed split of
  :func:`privbandit.sim.run`.
- :class:`CobaLearner` wraps any privbandit agent: ``predict`` is ``agent.act``, ``learn`` is ``agent.update``
  with the row of the action coba passes (on-policy or logged), so ``CobaLearner.for_environment(agent,
  CobaEnvironment(env, seed=s))`` plays, inside coba, exactly the arms ``run(agent, env, seed=s)`` plays.
- :func:`pseudo_regret` computes every learner's pseudo-regret from coba's ``Result``, which stores realised
  rewards only (and features rounded to 5 decimals).

How each piece works (the horizon a learner needs, features on coba's own environments, what coba stores) is
in the interop guide, ``docs/guide/interop.md``, "coba".

References
----------
Source paper, `alg:batch-cb-meta` (the agents' epochs), `def:JDP-interactive`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

try:
    import coba
except ImportError as exc:                   # pragma: no cover - exercised only without the extra
    raise ImportError("privbandit.integrations.coba needs coba: pip install \"privbandit[coba]\"") from exc

from .._validation import check_choice, check_int, check_positive
from ..agents.base import Agent, BanditSpec
from ..links import Link, identity_link
from ..sim.runner import env_labels, run_spec, split_seed

__all__ = ["FEATURE_MAPS", "CobaEnvironment", "CobaLearner", "pseudo_regret"]

FEATURE_MAPS: tuple[str, ...] = ("actions", "disjoint")
"""Named feature maps of :class:`CobaLearner` (a callable is accepted too)."""

ROUNDING_TOLERANCE = 1e-5
"""How far a stored action may lie from its arm's row: coba rounds to 5 decimals (error <= 5e-6)."""


class _ArmRewards(coba.Rewards):
    """One round's drawn rewards, looked up by the action object coba passes back (then by value)."""

    __slots__ = ("_actions", "_rewards")

    def __init__(self, actions: Sequence[tuple], rewards: Sequence[float]) -> None:
        self._actions = actions
        self._rewards = rewards

    def __call__(self, action: Any) -> float:
        for i, candidate in enumerate(self._actions):
            if candidate is action:
                return self._rewards[i]
        return self._rewards[self._actions.index(tuple(action))]


class CobaEnvironment(coba.Environment):
    """A privbandit bandit env served as a coba ``Environment`` (see the module docstring).

    Parameters
    ----------
    env : gymnasium.Env or str
        A privbandit bandit env (``gym.make("PrivLinCB-v0", ...)``), or its Gymnasium id (made here with
        ``gym.make(env, **env_kwargs)``).
    horizon : int, optional
        Interactions to serve, at most the env's episode length (default: that length).
    seed : int
        The run's seed, split as in :func:`privbandit.sim.run`.
    max_chunk : int
        Rounds drawn per ``sample_batch`` call while reading (memory bound; no effect on the rounds).
    env_kwargs : dict, optional
        Keyword arguments of ``gym.make`` when ``env`` is an id.

    Attributes
    ----------
    bandit_spec : BanditSpec
        What an agent may know before the run: K, d, the served horizon, B and the link.
    """

    def __init__(self, env: Any, horizon: int | None = None, seed: int = 0, *, max_chunk: int = 4096,
                 env_kwargs: dict[str, Any] | None = None) -> None:
        if isinstance(env, str):
            import gymnasium as gym

            env = gym.make(env, **(env_kwargs or {}))
        elif env_kwargs is not None:
            raise ValueError("env_kwargs applies only when env is given by id; configure the env instance instead")
        self.env = env
        self.bandit_spec = run_spec(env, horizon)
        self.seed = check_int("seed", seed, low=0)
        self.max_chunk = check_int("max_chunk", max_chunk, low=1)

    @property
    def params(self) -> dict[str, Any]:
        """coba's environment columns: the env id, its context family, K, d, horizon and seed."""
        env_id, family = env_labels(self.env)
        return {"env": env_id, "family": family, "n_arms": self.bandit_spec.n_arms, "dim": self.bandit_spec.dim,
                "horizon": self.bandit_spec.horizon, "seed": self.seed}

    def _batches(self) -> Iterator[Any]:
        """The env's rounds from a fresh reset, ``max_chunk`` at a time."""
        env_seed, _agent_rng = split_seed(self.seed)
        self.env.reset(seed=env_seed)
        left = self.bandit_spec.horizon
        while left > 0:
            n = min(self.max_chunk, left)
            yield self.env.unwrapped.sample_batch(n)
            left -= n

    def rounds(self) -> tuple[np.ndarray, np.ndarray]:
        """All served rounds' features (T, K, d) and expected rewards (T, K), regenerated from the seed."""
        batches = list(self._batches())
        return (np.concatenate([np.asarray(b.features, dtype=float) for b in batches]),
                np.concatenate([np.asarray(b.expected_rewards, dtype=float) for b in batches]))

    def read(self) -> Iterator[coba.SimulatedInteraction]:
        """One ``SimulatedInteraction(context=None, actions=[phi_t(a)], rewards, round=t)`` per round (re-iterable).

        ``round`` is the env's 1-based round t; coba records it with every interaction, so the rounds are
        known after coba's ``shuffle`` or ``take`` renumber its ``index``.
        """
        t = 0
        for batch in self._batches():
            features = np.asarray(batch.features, dtype=float).tolist()
            rewards = np.asarray(batch.rewards, dtype=float).tolist()
            for rows, drawn in zip(features, rewards):
                t += 1
                actions = [tuple(row) for row in rows]
                yield coba.SimulatedInteraction(None, actions, _ArmRewards(actions, drawn), round=t)


class CobaLearner(coba.Learner):
    """A privbandit agent as a coba ``Learner`` (see the module docstring).

    Parameters
    ----------
    agent : Agent
        Any privbandit agent; reset here at the first interaction of every run.
    horizon : int, optional
        T, the number of interactions of one run (public: it fixes the agent's epochs and calibration). coba
        never says it: pass it on coba's own environments (:meth:`for_environment` takes it from a
        :class:`CobaEnvironment`); without it the first ``predict`` raises a ValueError.
    bound : float
        The feature bound B of the agent's spec (public).
    link : Link, optional
        The reward link of the agent's spec (identity by default).
    seed : int
        The agent's seed, split as in :func:`privbandit.sim.run`; every run starts from it.
    feature_map : {"actions", "disjoint"} or callable, optional
        How coba's (context, actions) become the (K, d) feature rows; by default ``"actions"`` when the
        context is None and ``"disjoint"`` otherwise.

    Notes
    -----
    A run is ``horizon`` interactions and starts from ``seed``: a copy coba makes, and the learner at its first
    interaction after a finished run, start a new one (the interop guide, "The horizon, and reuse").
    """

    def __init__(self, agent: Agent, *, horizon: int | None = None, bound: float = 1.0, link: Link | None = None,
                 seed: int = 0, feature_map: str | Callable[[Any, Any], Any] | None = None) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"agent must be a privbandit Agent, got {type(agent).__name__}")
        if feature_map is not None and not callable(feature_map):
            check_choice("feature_map", feature_map, FEATURE_MAPS)
        if link is not None and not isinstance(link, Link):
            raise TypeError(f"link must be a privbandit Link, got {type(link).__name__}")
        self.agent = agent
        self.horizon = None if horizon is None else check_int("horizon", horizon, low=1)
        self.bound = check_positive("bound", bound)
        self.link = link
        self.seed = check_int("seed", seed, low=0)
        self.feature_map = feature_map
        self._played = 0                      # interactions predicted in the current run (0: no run yet)
        self._round: tuple[Sequence[Any], np.ndarray] | None = None     # this interaction's actions and rows

    def __deepcopy__(self, memo: dict) -> CobaLearner:
        """A copy that starts a new run (coba copies a learner it evaluates in several tasks)."""
        return type(self)(copy.deepcopy(self.agent, memo), horizon=self.horizon, bound=self.bound,
                          link=self.link, seed=self.seed, feature_map=self.feature_map)

    @classmethod
    def for_environment(cls, agent: Agent, environment: CobaEnvironment, seed: int | None = None) -> CobaLearner:
        """A learner with ``environment``'s public spec (horizon, bound, link) and seed (unless ``seed``)."""
        spec = environment.bandit_spec
        return cls(agent, horizon=spec.horizon, bound=spec.bound, link=spec.link,
                   seed=environment.seed if seed is None else seed)

    @property
    def params(self) -> dict[str, Any]:
        """coba's learner columns: the agent's name and privacy, horizon and seed."""
        privacy = self.agent.privacy
        return {"family": f"privbandit:{self.agent.name or type(self.agent).__name__}",
                "privacy_model": privacy.model, "epsilon": float(privacy.epsilon), "delta": float(privacy.delta),
                "horizon": self.horizon, "seed": self.seed}

    def _features(self, context: Any, actions: Sequence[Any]) -> np.ndarray:
        mapping = self.feature_map
        if mapping is None:
            mapping = "actions" if context is None else "disjoint"
        if callable(mapping):
            phi = np.asarray(mapping(context, actions), dtype=float)
        elif mapping == "actions":
            phi = np.asarray([np.asarray(a, dtype=float).reshape(-1) for a in actions])
        else:
            if context is None or isinstance(context, dict):
                raise ValueError("feature_map='disjoint' needs a dense context (a number or a sequence of numbers), "
                                 f"got {type(context).__name__}")
            x = np.asarray(context, dtype=float).reshape(-1)
            phi = np.kron(np.eye(len(actions)), x)
        if phi.ndim != 2 or phi.shape[0] != len(actions):
            raise ValueError(f"the feature map must give one row per action, shape ({len(actions)}, d), "
                             f"got {phi.shape}")
        return phi

    def _start(self, phi: np.ndarray) -> None:
        if self.horizon is None:
            raise ValueError("CobaLearner needs horizon=T, the number of interactions of a run: coba does not "
                             "tell a learner, and the agent's epochs and privacy calibration are fixed from T "
                             "before the first interaction (pass horizon=, or use CobaLearner.for_environment)")
        spec = BanditSpec(phi.shape[0], phi.shape[1], self.horizon, self.bound, self.link or identity_link())
        _env_seed, agent_rng = split_seed(self.seed)
        self.agent.reset(spec, rng=agent_rng)
        self._played = 0

    def predict(self, context: Any, actions: Sequence[Any]) -> tuple[Any, float]:
        """The agent's arm for this interaction as (the coba action, its probability under the policy)."""
        phi = self._features(context, actions)
        if self._played == 0 or self._played >= self.agent.spec.horizon:
            self._start(phi)                  # the first interaction, or the one after a finished run
        spec = self.agent.spec
        if phi.shape != (spec.n_arms, spec.dim):
            raise ValueError(f"coba gave {phi.shape[0]} actions with {phi.shape[1]} features, but the agent was "
                             f"started with K={spec.n_arms}, d={spec.dim}")
        arm = self.agent.act(phi)
        probability = float(self.agent.action_probabilities(phi)[arm])
        self._round = (actions, phi)
        self._played += 1
        return actions[arm], probability

    def learn(self, context: Any, action: Any, reward: float, probability: float, **kwargs: Any) -> None:
        """Feed the row of ``action`` (the action coba passes: the agent's own, or the logged one) and its reward.

        Raises
        ------
        RuntimeError
            If no ``predict`` of this interaction came before (the agent needs the interaction's actions).
        ValueError
            If ``action`` is none of the interaction's actions.
        """
        if self._round is None:
            raise RuntimeError("learn was called without a predict of the same interaction before it: CobaLearner "
                               "needs the interaction's actions (evaluate with an eval that predicts, such as "
                               "SequentialCB's default eval='on')")
        (actions, phi), self._round = self._round, None
        self.agent.update(phi[_action_index(action, actions, phi)], float(reward))


def _action_index(action: Any, actions: Sequence[Any], phi: np.ndarray) -> int:
    """The index of ``action`` among ``actions``: the same object, else the equal ones if their rows agree."""
    for i, candidate in enumerate(actions):
        if candidate is action:
            return i
    equal = [i for i, candidate in enumerate(actions) if _same_action(candidate, action)]
    if not equal or any(not np.array_equal(phi[i], phi[equal[0]]) for i in equal[1:]):
        raise ValueError(f"learn got the action {action!r}, which is {'none' if not equal else 'several'} of the "
                         f"interaction's {len(actions)} actions (with different feature rows), so its row is unknown")
    return equal[0]


def _same_action(candidate: Any, action: Any) -> bool:
    """Whether two coba actions are equal (a value, a sequence of values or a dict of features)."""
    if isinstance(candidate, dict) or isinstance(action, dict):
        return candidate == action
    try:
        return bool(np.array_equal(np.asarray(candidate, dtype=float), np.asarray(action, dtype=float)))
    except (TypeError, ValueError):
        return bool(candidate == action)


def pseudo_regret(result: Any, environment: CobaEnvironment, environment_id: int | None = None) -> pd.DataFrame:
    """Every learner's pseudo-regret on ``environment`` from a coba ``Result``.

    Parameters
    ----------
    result : coba.Result
        What ``Experiment.run()`` returned; its interactions must record ``action`` (coba's default).
    environment : CobaEnvironment
        The environment the rows were played on (its rounds are regenerated from its seed).
    environment_id : int, optional
        coba's id of that environment in ``result``; by default the one environment whose parameters
        equal ``environment.params``.

    Returns
    -------
    pandas.DataFrame
        One row per stored interaction, in coba's order of play: ``environment_id``, ``learner_id``,
        ``learner`` (coba's family), ``evaluator_id``, ``index`` (coba's 1-based position in the stream it
        played), ``t`` (the env's 1-based round: equal to ``index`` unless coba's ``shuffle`` or ``take``
        reordered the rounds), ``arm`` (0-based), ``reward`` (as coba stored it), ``regret``
        (max_a m_t(a) - m_t(a_t)) and ``cum_regret`` (its running sum per learner, in order of play).

    Raises
    ------
    ValueError
        If the environment is not found once in ``result``, or a stored action is none of its round's arms.
    """
    environment_id = _environment_id(result, environment) if environment_id is None else environment_id
    rows = result.interactions.to_pandas()
    rows = rows[rows["environment_id"] == environment_id]
    if "action" not in rows.columns:
        raise ValueError("the result has no 'action' column: run the experiment with SequentialCB's default record")
    features, expected = environment.rounds()
    index = rows["index"].to_numpy(dtype=np.int64)
    # the env's round of each interaction: recorded by CobaEnvironment (so shuffle/take are undone), else the index
    t = rows["round"].to_numpy(dtype=np.int64) if "round" in rows.columns else index
    if t.size and (t.min() < 1 or t.max() > features.shape[0]):
        raise ValueError(f"the result's interactions run to round {t.max()}, but the environment has "
                         f"{features.shape[0]} rounds")
    stored = np.array([np.asarray(a, dtype=float).reshape(-1) for a in rows["action"]]).reshape(t.size, -1)
    distance = np.abs(features[t - 1] - stored[:, None, :]).max(axis=2)          # (rows, K)
    arm = distance.argmin(axis=1)
    if t.size and distance[np.arange(t.size), arm].max() > ROUNDING_TOLERANCE:
        bad = int(distance[np.arange(t.size), arm].argmax())
        raise ValueError(f"the action stored at index {t[bad]} is none of that round's arms: was the result made "
                         "with this environment (same env, horizon and seed)?")
    mean = expected[t - 1]
    regret = mean.max(axis=1) - mean[np.arange(t.size), arm]
    families = dict(zip(result.learners["learner_id"], result.learners["family"]))
    out = pd.DataFrame({"environment_id": environment_id, "learner_id": rows["learner_id"].to_numpy(),
                        "learner": [families.get(i) for i in rows["learner_id"]],
                        "evaluator_id": rows["evaluator_id"].to_numpy(), "index": index, "t": t, "arm": arm,
                        "reward": rows["reward"].to_numpy(dtype=float) if "reward" in rows else np.nan,
                        "regret": regret})
    out = out.sort_values(["learner_id", "evaluator_id", "index"], kind="stable").reset_index(drop=True)
    out["cum_regret"] = out.groupby(["learner_id", "evaluator_id"])["regret"].cumsum()
    return out


def _environment_id(result: Any, environment: CobaEnvironment) -> int:
    """coba's id of the one environment in ``result`` whose parameters are ``environment.params``."""
    wanted = environment.params
    table = result.environments.to_pandas()
    hits = [int(row["environment_id"]) for _, row in table.iterrows()
            if all(k in row and row[k] == v for k, v in wanted.items())]
    if len(hits) != 1:
        raise ValueError(f"found {len(hits)} environments with parameters {wanted} in the result; "
                         "pass environment_id")
    return hits[0]
