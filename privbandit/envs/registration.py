"""Register PrivLinCB-v0, PrivGLMCB-v0 and PrivCBify-v0 with Gymnasium (done when ``privbandit`` is imported).

``gym.make("privbandit:PrivLinCB-v0")`` imports ``privbandit`` first, so it works with no prior import.
Re-importing never re-registers (no "overriding" warning).

The ids are registered without ``max_episode_steps``: an env truncates its episode itself at its ``horizon``,
so ``gym.make(..., horizon=2**20)`` plays 2^20 rounds (a registered limit would add a ``TimeLimit`` wrapper
that cuts every longer horizon). ``max_episode_steps=n`` given to ``gym.make`` or ``gym.make_vec`` still
truncates at min(horizon, n).
"""

from __future__ import annotations

import gymnasium as gym

__all__ = ["ENV_IDS", "register_envs"]

ENV_IDS = {
    "PrivLinCB-v0": ("privbandit.envs.bandit_env:PrivLinCBEnv", "privbandit.envs.vector:PrivLinCBVectorEnv"),
    "PrivGLMCB-v0": ("privbandit.envs.bandit_env:PrivGLMCBEnv", "privbandit.envs.vector:PrivGLMCBVectorEnv"),
    "PrivCBify-v0": ("privbandit.envs.bandit_env:PrivCBifyEnv", "privbandit.envs.vector:PrivCBifyVectorEnv"),
}
"""Env id -> (entry_point, vector_entry_point)."""


def register_envs() -> None:
    """Register the envs (idempotent), without ``max_episode_steps``: the episode length is ``horizon``."""
    for env_id, (entry, vector_entry) in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry, vector_entry_point=vector_entry)
