"""Register PrivLinCB-v0, PrivGLMCB-v0 and PrivCBify-v0 with Gymnasium (done when ``privbandit`` is imported).

``gym.make("privbandit:PrivLinCB-v0")`` imports ``privbandit`` first, so it works with no prior import.
Re-importing never re-registers (no "overriding" warning).
"""

from __future__ import annotations

import gymnasium as gym

from .bandit_env import DEFAULT_HORIZON

__all__ = ["ENV_IDS", "register_envs"]

ENV_IDS = {
    "PrivLinCB-v0": ("privbandit.envs.bandit_env:PrivLinCBEnv", "privbandit.envs.vector:PrivLinCBVectorEnv"),
    "PrivGLMCB-v0": ("privbandit.envs.bandit_env:PrivGLMCBEnv", "privbandit.envs.vector:PrivGLMCBVectorEnv"),
    "PrivCBify-v0": ("privbandit.envs.bandit_env:PrivCBifyEnv", "privbandit.envs.vector:PrivCBifyVectorEnv"),
}
"""Env id -> (entry_point, vector_entry_point)."""


def register_envs() -> None:
    """Register the envs (idempotent), with ``max_episode_steps`` = the default horizon 2^16."""
    for env_id, (entry, vector_entry) in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry, vector_entry_point=vector_entry,
                         max_episode_steps=DEFAULT_HORIZON)
