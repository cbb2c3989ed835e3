"""The grid model of a sweep: what runs (agents x envs x privacy levels x seeds at one horizon) and its seeds.

A sweep is a list of :class:`Cell` s (one agent, one env, one epsilon, one seed, one horizon); a
:class:`Grid` is the product that most sweeps are. A cell's :attr:`Cell.key` names its file in the cell
store (:mod:`privbandit.bench.cells`) and says what ran.

Seeds
-----
A cell's randomness comes from ``SeedSequence(entropy, spawn_key=(env_hash, seed))``: ``entropy`` is the
sweep's root entropy (:data:`DEFAULT_ENTROPY` unless given), ``env_hash`` a stable 64-bit hash of the
env's id and keyword arguments, ``seed`` the cell's seed index. It does not depend on the cell's
position in the sweep or on the process that runs it; and every agent and privacy level of the same
(env, seed) meets the same contexts and rewards (common random numbers).
"""

from __future__ import annotations

import hashlib
import json
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from .._validation import check_choice, check_int
from ..agents.registry import agent_is_private, agent_privacy, make_agent
from ..privacy import check_delta, check_epsilon

__all__ = ["DEFAULT_ENTROPY", "AgentEntry", "Cell", "EnvEntry", "Grid", "canonical", "stable_hash"]

DEFAULT_ENTROPY = 20_251_125
"""Root entropy of every sweep unless a sweep is given its own."""


class _FrozenDict(dict):
    """A dict keyword argument (e.g. an env's ``link_kwargs``) in a frozen entry: hashable, and a dict to the
    function it is passed to and to the JSON of the cell identities. Do not mutate it."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))


def _freeze(kwargs: Mapping[str, Any] | Iterable[tuple[str, Any]] | None) -> tuple[tuple[str, Any], ...]:
    items = dict(kwargs or {})
    for k, v in items.items():
        if isinstance(v, np.ndarray):
            items[k] = tuple(np.asarray(v).ravel().tolist()) if v.ndim <= 1 else tuple(map(tuple, v.tolist()))
        elif isinstance(v, dict):
            items[k] = _FrozenDict(_freeze(v))
    return tuple(sorted(items.items()))


def canonical(obj: Any) -> str:
    """``obj`` as compact JSON with sorted keys (what the hashes and the cell footers hold)."""
    return json.dumps(obj, sort_keys=True, default=repr, separators=(",", ":"))


def stable_hash(obj: Any, bits: int = 64) -> int:
    """A hash of a JSON-able object that is the same in every process and Python version."""
    digest = hashlib.sha256(canonical(obj).encode()).digest()
    return int.from_bytes(digest[: bits // 8], "little")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-")


@dataclass(frozen=True)
class AgentEntry:
    """One agent of a sweep: a registered agent name, its keyword arguments and how to label it.

    Parameters
    ----------
    name : str
        A name from :func:`privbandit.agents.agent_names`.
    kwargs : mapping
        Keyword arguments of ``make_agent(name, ...)`` besides the privacy level.
    label : str, optional
        The ``agent`` column of the results (default ``name``).
    private : bool, optional
        Whether the agent takes a privacy level (``epsilon=``, ``delta=`` keywords of ``make_agent``).
        Default: the registration's (:func:`privbandit.agents.agent_is_private`, which an ``oracle`` in
        ``kwargs`` decides); the agent is never built to learn it, so an entry of a registration that does
        not say must give it.
    privacy : {"jdp", "ldp"}, optional
        The privacy model, for an agent whose registration names none (a challenger's ``--private`` claim);
        it implies ``private=True``. Default: the registration's (:func:`privbandit.agents.agent_privacy`).
    reference : str, optional
        Label of the non-private counterpart, for the price of privacy in reports.
    version : int
        The version of this agent's numbers (1). Raise it when a change to the library changes this agent's
        results: its cells get a new identity (:meth:`Cell.identity`), so a resumed sweep and the stored
        reference results run them again, while every other agent's cells keep theirs.
    """

    name: str
    kwargs: Any = ()
    label: str | None = None
    private: bool | None = None
    reference: str | None = None
    version: int = 1
    privacy: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty agent name, got {self.name!r}")
        check_int("version", self.version, low=1)
        if self.privacy is not None:
            check_choice("privacy", self.privacy, ("jdp", "ldp"))
            if self.private is False:
                raise ValueError(f"private=False contradicts privacy={self.privacy!r}")
            object.__setattr__(self, "private", True)
        object.__setattr__(self, "kwargs", _freeze(self.kwargs))
        if self.label is None:
            object.__setattr__(self, "label", self.name)

    def is_private(self) -> bool:
        """Whether the agent takes a privacy level (see ``private``), read from the registration.

        Raises
        ------
        ValueError
            If neither the entry nor the registration says (a plugin factory of ``**kwargs`` only).
        """
        if self.private is not None:
            return bool(self.private)
        private = agent_is_private(self.name, dict(self.kwargs))
        if private is None:
            raise ValueError(f"agent {self.name!r} does not say whether it takes a privacy budget: register it with "
                             "privacy='jdp', 'ldp' or 'none', or give AgentEntry(private=...)")
        return private

    def privacy_model(self) -> str:
        """The agent's privacy model, ``"none"``, ``"jdp"`` or ``"ldp"``, from ``privacy`` or the registration
        (:func:`~privbandit.agents.agent_privacy`), or ``"any"`` when neither names one; never by building it."""
        if not self.is_private():
            return "none"
        return self.privacy or agent_privacy(self.name, dict(self.kwargs))

    def build(self, epsilon: float | None = None, delta: float | None = None):
        """The agent, at privacy level (epsilon, delta) if it is private."""
        kw = dict(self.kwargs)
        if epsilon is not None:
            kw.update(epsilon=epsilon, delta=delta)
        return make_agent(self.name, **kw)


@dataclass(frozen=True)
class EnvEntry:
    """One environment of a sweep: a Gymnasium id, its keyword arguments and a label.

    Parameters
    ----------
    label : str
        The ``env`` column of the results, e.g. ``"heavy-tailed-d10"``.
    env_id : str
        A registered id, e.g. ``"PrivLinCB-v0"``.
    kwargs : mapping
        Keyword arguments of ``gymnasium.make`` (family, dim, n_arms, ...); the sweep adds the horizon.
    """

    label: str
    env_id: str = "PrivLinCB-v0"
    kwargs: Any = ()

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"label must be a non-empty string, got {self.label!r}")
        object.__setattr__(self, "kwargs", _freeze(self.kwargs))

    def identity(self) -> dict:
        """What defines the env instance (its seed stream depends only on this)."""
        return dict(env_id=self.env_id, kwargs=[list(kv) for kv in self.kwargs])

    def make(self, horizon: int):
        """``gymnasium.make(env_id, horizon=horizon, **kwargs)``."""
        return gym.make(self.env_id, **{**dict(self.kwargs), "horizon": horizon})


@dataclass(frozen=True)
class Cell:
    """One run of a sweep: an agent at a privacy level on an env for one seed and horizon."""

    agent: AgentEntry
    env: EnvEntry
    epsilon: float | None
    seed: int
    horizon: int
    delta: float | None = None
    entropy: int = DEFAULT_ENTROPY
    points_per_octave: int = 8

    def __post_init__(self) -> None:
        # the budget was checked at the boundary (Grid; PrivacySpec again when the agent is built)
        object.__setattr__(self, "delta", None if self.epsilon is None else 1e-5 if self.delta is None else self.delta)
        object.__setattr__(self, "seed", check_int("seed", self.seed, low=0))
        object.__setattr__(self, "horizon", check_int("horizon", self.horizon, low=1))
        object.__setattr__(self, "entropy", check_int("entropy", self.entropy, low=0))

    def identity(self) -> dict:
        """Everything that defines the cell's result (the agent's ``version`` only once raised, so that raising it
        for one agent leaves every other cell's identity as it was)."""
        version = [self.agent.version] if self.agent.version != 1 else []
        return dict(agent=[self.agent.name, [list(kv) for kv in self.agent.kwargs], self.agent.label, *version],
                    env=[self.env.label, self.env.identity()], epsilon=self.epsilon, delta=self.delta,
                    seed=self.seed, horizon=self.horizon, entropy=self.entropy, ppo=self.points_per_octave)

    @property
    def key(self) -> str:
        """A file name that says what ran (``env__agent__eps__T__seed``) plus a short hash of the identity."""
        eps = "nonprivate" if self.epsilon is None else f"eps{self.epsilon:g}"
        name = f"{self.env.label}__{self.agent.label}__{eps}__T{self.horizon}__seed{self.seed}"
        return f"{_slug(name)}__{stable_hash(self.identity(), 32):08x}"

    def seed_sequence(self) -> np.random.SeedSequence:
        """``SeedSequence(entropy, spawn_key=(env_hash, seed))`` (see the module docstring)."""
        return np.random.SeedSequence(self.entropy, spawn_key=(stable_hash(self.env.identity()), self.seed))


@dataclass(frozen=True)
class Grid:
    """A product of agents x envs x epsilons x seeds at one horizon.

    Non-private agents get one cell per (env, seed) whatever the epsilons.

    Parameters
    ----------
    agents, envs : sequence of AgentEntry, EnvEntry
    epsilons : sequence of float
        Privacy levels of the private agents, each > 0.
    seeds : int or sequence of int
        A count n >= 1 (the seeds 0 .. n-1) or the seeds themselves (distinct integers >= 0, kept in
        their order); stored as a tuple. A seed names a cell's random stream (see the module docstring),
        so two grids that share a seed and an env share its contexts and rewards.
    horizon : int
        T >= 1.
    delta : float
        The privacy delta of every private agent, in (0, 1).
    points_per_octave : int
        Logging density of the runs.
    """

    agents: tuple
    envs: tuple
    epsilons: tuple = (1.0,)
    seeds: Any = 1
    horizon: int = 1024
    delta: float = 1e-5
    points_per_octave: int = 8

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))
        object.__setattr__(self, "envs", tuple(self.envs))
        if not self.agents or not all(isinstance(a, AgentEntry) for a in self.agents):
            raise ValueError("agents must be a non-empty sequence of AgentEntry")
        if not self.envs or not all(isinstance(e, EnvEntry) for e in self.envs):
            raise ValueError("envs must be a non-empty sequence of EnvEntry")
        object.__setattr__(self, "epsilons", tuple(check_epsilon(e) for e in self.epsilons))
        if not self.epsilons:
            raise ValueError("epsilons must contain at least one privacy level > 0")
        object.__setattr__(self, "seeds", _seed_list(self.seeds))
        object.__setattr__(self, "horizon", check_int("horizon", self.horizon, low=1))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "points_per_octave", check_int("points_per_octave", self.points_per_octave, low=1))

    def cells(self, entropy: int = DEFAULT_ENTROPY) -> list[Cell]:
        """The grid's cells in a fixed order (env, agent, epsilon, seed)."""
        return [Cell(agent, env, eps, seed, self.horizon, self.delta if eps is not None else None, entropy,
                     self.points_per_octave)
                for env in self.envs for agent in self.agents
                for eps in (self.epsilons if agent.is_private() else (None,)) for seed in self.seeds]


def _seed_list(seeds: Any) -> tuple[int, ...]:
    """A grid's seeds: ``range(n)`` for a count n >= 1, else the given distinct integers >= 0, as a tuple."""
    if isinstance(seeds, (numbers.Integral, np.integer)) and not isinstance(seeds, (bool, np.bool_)):
        return tuple(range(check_int("seeds", seeds, low=1)))
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds must be a count (an integer >= 1) or a sequence of integers >= 0, "
                        f"got {type(seeds).__name__}")
    out = tuple(check_int("seeds[i]", s, low=0) for s in seeds)
    if not out:
        raise ValueError("seeds must contain at least one seed")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must be distinct, got {list(out)}")
    return out
