"""A numpy-native Gymnasium VectorEnv for PrivLinCB-v0, PrivGLMCB-v0 and PrivCBify-v0 (``vector_entry_point``).

Sub-env i behaves exactly as a single env reset with seed ``seed + i`` (Gymnasium's convention), so
``vectorization_mode="vector_entry_point"`` and ``"sync"`` give identical observations, rewards and
infos. Each sub-env has its own generator and its own blocks of rounds (:func:`.instance.draw_block`);
the blocks are stacked so a step gathers all sub-envs' rounds with one indexing operation.
Autoreset follows ``AutoresetMode.NEXT_STEP``: the step after a truncation resets that sub-env
(reward 0, no regret info) and ignores its action.

What a sub-env is for Gymnasium's vector API (``call``, ``get_attr``, ``set_attr``): a slice of the stacked
state sharing one instance, horizon and spaces, answered as :class:`gymnasium.vector.SyncVectorEnv` answers it on
``gym.make(...)`` sub-envs (the environments guide, ``docs/guide/environments/index.md``, "The native vector env
and Gymnasium's vector API").

References
----------
Source paper, `sec:intro-cb`.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import logger
from gymnasium.envs.registration import EnvSpec
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .._validation import check_int
from ..bandit_spec import BanditSpec
from .bandit_env import PrivBanditEnv, PrivCBifyEnv, PrivGLMCBEnv, PrivLinCBEnv
from .data import CBifySource
from .instance import BLOCK_SIZE, draw_block
from .render import RENDER_FPS, RENDER_MODES, RegretTrace, RoundView, render_ansi, render_rgb

__all__ = ["PrivBanditVectorEnv", "PrivCBifyVectorEnv", "PrivGLMCBVectorEnv", "PrivLinCBVectorEnv"]

EPISODE_NAMES: frozenset[str] = frozenset({"reset", "step", "sample_batch", "close"})
"""Sub-env methods ``call`` refuses: they play a sub-env's episode, which the vector env steps as one."""

VECTOR_KWARGS: frozenset[str] = frozenset({"num_envs", "vectorization_mode", "vector_kwargs", "wrappers"})
"""What ``gym.make_vec`` adds to a vector env's ``spec.kwargs`` beyond the sub-envs' own arguments."""

MIRRORED_NAMES: frozenset[str] = frozenset({"horizon"})
"""Sub-env attributes the vector env reads itself: ``set_attr`` sets them on both."""

READ_ONLY_NAMES: frozenset[str] = frozenset({"np_random", "np_random_seed", "render_mode"})
"""Sub-env attributes ``set_attr`` refuses (the generators are seeded by ``reset``; ``gym.make``'s wrappers make
``render_mode`` read-only, so SyncVectorEnv refuses it too)."""


class PrivBanditVectorEnv(VectorEnv):
    """``num_envs`` independent copies of one bandit instance, stepped together with numpy.

    Parameters
    ----------
    num_envs : int
        Number of sub-envs.
    max_episode_steps : int, optional
        Truncation after min(horizon, max_episode_steps) rounds (``gym.make_vec`` passes the value given
        to it, as ``gym.make`` adds a TimeLimit wrapper to the single env; none is registered, so by default
        the episode length is ``horizon``).
    **kwargs
        The arguments of the single env :attr:`env_class` (see :class:`~privbandit.envs.PrivLinCBEnv`), which
        checks them and builds the instance the sub-envs share.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS,
                                "autoreset_mode": AutoresetMode.NEXT_STEP}
    env_class: ClassVar[type[PrivBanditEnv]] = PrivBanditEnv
    """The single env this is the vector twin of."""

    def __init__(self, num_envs: int = 1, *, max_episode_steps: int | None = None, **kwargs: Any) -> None:
        self.num_envs = check_int("num_envs", num_envs, low=1)
        single = self.env_class(**kwargs)
        self.render_mode, self.horizon, self.instance = single.render_mode, single.horizon, single.instance
        if max_episode_steps is not None:
            self.horizon = min(self.horizon, check_int("max_episode_steps", max_episode_steps, low=1))
            single.horizon = self.horizon
        self._single = single                # what every sub-env shares, for call / get_attr / set_attr
        self._seeds: list[int | None] = [None] * self.num_envs
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.data: CBifySource | None = getattr(single, "data", None)
        self._rngs: list[np.random.Generator] | None = None
        self._t = np.zeros(self.num_envs, dtype=np.int64)
        self._done = np.zeros(self.num_envs, dtype=bool)
        # what render draws, per sub-env (kept only while rendering): the last round played or None
        self._last: list[tuple[np.ndarray, int, int, float, float] | None] = [None] * self.num_envs
        self._traces = [RegretTrace() for _ in range(self.num_envs)]

    def bandit_spec(self) -> BanditSpec:
        """K, d, horizon, B and link of every sub-env (a BanditSpec)."""
        inst = self.instance
        return BanditSpec(inst.n_arms, inst.dim, self.horizon, inst.bound, inst.link)

    # -- stacked blocks --------------------------------------------------------------------------
    def _refill(self, envs: np.ndarray) -> None:
        for i in envs:
            blk = draw_block(self.instance, BLOCK_SIZE, self._rngs[i])
            for buf, arr in zip(self._bufs, blk):
                buf[i] = arr
            self._pos[i] = 0

    def _start(self, seeds: Sequence[int | None]) -> None:
        self._rngs, self._seeds = map(list, zip(*(seeding.np_random(s) for s in seeds)))
        n, k, d = self.num_envs, self.instance.n_arms, self.instance.dim
        self._bufs = (np.empty((n, BLOCK_SIZE, k, d)), np.empty((n, BLOCK_SIZE, k)), np.empty((n, BLOCK_SIZE, k)),
                      np.empty((n, BLOCK_SIZE)), np.empty((n, BLOCK_SIZE), dtype=np.int64))
        self._pos = np.zeros(n, dtype=np.int64)
        self._refill(np.arange(n))

    def _advance(self, envs: np.ndarray) -> None:
        self._pos[envs] += 1
        full = envs[self._pos[envs] >= BLOCK_SIZE]
        if full.size:
            self._refill(full)

    def _observe(self) -> np.ndarray:
        return self._bufs[0][np.arange(self.num_envs), self._pos]

    # -- Gymnasium API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env: an int seeds sub-env i with ``seed + i``, a list gives one seed each."""
        if seed is None:
            if self._rngs is None:
                self._start([None] * self.num_envs)
            else:
                self._advance(np.arange(self.num_envs))
        else:
            seeds = ([int(seed) + i for i in range(self.num_envs)] if isinstance(seed, numbers.Integral)
                     else list(seed))
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed must be an int or a list of {self.num_envs} seeds, got {len(seeds)}")
            if self._rngs is None or all(s is not None for s in seeds):
                self._start(seeds)
            else:  # a list mixing seeds and None: reseed those given, continue the others
                keep = [i for i, s in enumerate(seeds) if s is None]
                self._advance(np.array(keep, dtype=np.int64))
                for i, s in enumerate(seeds):
                    if s is not None:
                        self._rngs[i], self._seeds[i] = seeding.np_random(s)
                        self._refill(np.array([i]))
        self._t[:] = 0
        self._done[:] = False
        n = self.num_envs
        if self.render_mode is not None:
            self._last, self._traces = [None] * n, [RegretTrace() for _ in range(n)]
        return self._observe(), {"t": np.zeros(n, dtype=np.int64), "_t": np.ones(n, dtype=bool)}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play one action per sub-env; sub-envs truncated at the previous step are reset instead."""
        if self._rngs is None:
            raise ResetNeeded("call reset() before step()")
        n, k = self.num_envs, self.instance.n_arms
        acts = np.asarray(actions)
        if acts.shape != (n,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be an integer array of shape ({n},) (one arm index per sub-env), "
                             f"got {acts.dtype} array of shape {acts.shape}")
        play = ~self._done
        if np.any((acts[play] < 0) | (acts[play] >= k)):
            raise ValueError(f"actions must be arm indices in [0, {k - 1}], got {acts.tolist()}")
        rows, pos = np.arange(n), self._pos
        feats, rew, means, best, opt = self._bufs
        safe = np.where(play, acts, 0)
        m = means[rows, pos]
        reward = np.where(play, rew[rows, pos, safe], 0.0)
        regret = np.where(play, best[rows, pos] - m[rows, safe], 0.0)
        infos: dict[str, Any] = {}
        if play.any():  # as SyncVectorEnv: a key appears when some sub-env reports it, masked per sub-env
            infos = {"expected_reward": np.where(play[:, None], m, 0.0), "_expected_reward": play.copy(),
                     "optimal_action": np.where(play, opt[rows, pos], 0), "_optimal_action": play.copy(),
                     "regret": regret, "_regret": play.copy()}
        self._t = np.where(play, self._t + 1, 0)
        if self.render_mode is not None:
            self._record(play, m, opt[rows, pos], safe, reward, regret)
        infos["t"], infos["_t"] = self._t.copy(), np.ones(n, dtype=bool)
        self._advance(rows)
        truncated = play & (self._t >= self.horizon)
        self._done = truncated.copy()
        return self._observe(), reward, np.zeros(n, dtype=bool), truncated, infos

    # -- the sub-envs' attributes (Gymnasium's vector API) --------------------------------------
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env with ``args`` and ``kwargs`` (an attribute is returned as it
        is), as :meth:`gymnasium.vector.SyncVectorEnv.call` does; what a sub-env is: the module docstring.

        Returns
        -------
        tuple
            One result per sub-env.

        Raises
        ------
        AttributeError
            If ``name`` is private, plays a sub-env's episode (``reset``, ``step``, ``sample_batch``,
            ``close``: use the vector env's own) or is no attribute of the sub-envs.
        """
        if name == "render":
            frames = self.render(*args, **kwargs)
            return (None,) * self.num_envs if frames is None else frames
        if name in ("np_random", "np_random_seed"):
            if self._rngs is None:           # as gymnasium's Env: the generator is made at first use
                self._start([None] * self.num_envs)
            return tuple(self._rngs) if name == "np_random" else tuple(self._seeds)
        if name == "spec":
            return (self._sub_env_spec(),) * self.num_envs
        results = []
        for _ in range(self.num_envs):          # looked up per sub-env, as sync's: a property is read each time
            attribute = self._sub_env_attribute(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env (``call`` of it, as in ``SyncVectorEnv``)."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set the attribute ``name`` of the sub-envs to ``values``: one value, or a list or tuple of one per
        sub-env (all equal: the sub-envs share one instance).

        Raises
        ------
        ValueError
            If a list or tuple has not ``num_envs`` values, or its values differ.
        AttributeError
            If ``name`` is private, read-only (``np_random``, ``np_random_seed``: seeded by ``reset``;
            ``render_mode``: fixed when the env is made), or the attribute cannot be set.
        """
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError("Values must be a list or tuple with length equal to the number of environments. "
                             f"Got `{len(values)}` values for {self.num_envs} environments.")
        if any(not _same_value(v, values[0]) for v in values[1:]):
            raise ValueError(f"set_attr({name!r}) got different values per sub-env, but the native vector env's "
                             "sub-envs share one instance; use gym.make_vec(..., vectorization_mode='sync') for "
                             "sub-envs that differ")
        if name in READ_ONLY_NAMES:
            raise AttributeError(f"set_attr({name!r}): {name} is read-only (the generators are seeded by "
                                 "reset(seed=...), the render mode is fixed when the env is made)")
        self._sub_env_attribute(name)
        setattr(self._single, name, values[0])
        if name in MIRRORED_NAMES:
            setattr(self, name, values[0])

    def _sub_env_spec(self) -> EnvSpec | None:
        """The ``EnvSpec`` ``gym.make`` gives a sub-env: ``gym.make_vec``'s spec without its vector arguments."""
        if self.spec is None:
            return None
        kwargs = {k: v for k, v in self.spec.kwargs.items() if k not in VECTOR_KWARGS}
        steps = kwargs.pop("max_episode_steps", self.spec.max_episode_steps)     # gym.make's field, not a kwarg
        return dataclasses.replace(self.spec, kwargs=kwargs, max_episode_steps=steps)

    def _sub_env_attribute(self, name: str) -> Any:
        """The attribute ``name`` the sub-envs share (on the single env), refusing what is no sub-env attribute."""
        if not isinstance(name, str) or name.startswith("_"):
            raise AttributeError(f"name must be a public attribute of the sub-envs, got {name!r}")
        if name in EPISODE_NAMES:
            raise AttributeError(f"{name!r} plays a sub-env's episode, which the native vector env steps as one: "
                                 f"use the vector env's own {name}() (or vectorization_mode='sync')")
        if not hasattr(self._single, name):
            raise AttributeError(f"the sub-envs ({self.env_class.__name__}) have no attribute {name!r}")
        return getattr(self._single, name)

    # -- rendering -------------------------------------------------------------------------------
    def _record(self, play: np.ndarray, means: np.ndarray, optimal: np.ndarray, actions: np.ndarray,
                reward: np.ndarray, regret: np.ndarray) -> None:
        for i in range(self.num_envs):
            if play[i]:
                self._last[i] = (means[i].copy(), int(optimal[i]), int(actions[i]), float(reward[i]),
                                 float(regret[i]))
                self._traces[i].add(float(regret[i]))
            else:  # the autoreset step: a new episode starts
                self._last[i], self._traces[i] = None, RegretTrace()

    def render(self) -> tuple[str | np.ndarray, ...] | None:
        """One frame per sub-env, each as the single env's :meth:`~privbandit.envs.PrivLinCBEnv.render`
        draws it (a tuple, as Gymnasium's vector envs return, ready for its vector ``RecordVideo``).

        With ``render_mode=None`` it warns and returns None.

        Raises
        ------
        gymnasium.error.ResetNeeded
            Before the first ``reset``.
        """
        if self.render_mode is None:
            logger.warn("You are calling render method without specifying any render mode. You can specify the "
                        "render_mode at initialization, e.g. gym.make_vec(\"privbandit:PrivLinCB-v0\", "
                        "render_mode=\"rgb_array\")")
            return None
        if self._rngs is None:
            raise ResetNeeded("call reset() before render()")
        draw = render_ansi if self.render_mode == "ansi" else render_rgb
        frames = []
        for i in range(self.num_envs):
            p = self._pos[i]
            shown = self._last[i] or (self._bufs[2][i, p].copy(), int(self._bufs[4][i, p]), None, None, None)
            frames.append(draw(RoundView(int(self._t[i]), self.horizon, *shown, self._traces[i].array())))
        return tuple(frames)


def _same_value(a: Any, b: Any) -> bool:
    """Whether two ``set_attr`` values are the same (arrays by their elements)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


class PrivLinCBVectorEnv(PrivBanditVectorEnv):
    """Vector twin of :class:`~privbandit.envs.PrivLinCBEnv` (identity link)."""

    env_class = PrivLinCBEnv


class PrivGLMCBVectorEnv(PrivBanditVectorEnv):
    """Vector twin of :class:`~privbandit.envs.PrivGLMCBEnv` (logistic link by default)."""

    env_class = PrivGLMCBEnv


class PrivCBifyVectorEnv(PrivBanditVectorEnv):
    """Vector twin of :class:`~privbandit.envs.PrivCBifyEnv` (same arguments; the data, ``data``, is prepared once)."""

    env_class = PrivCBifyEnv
