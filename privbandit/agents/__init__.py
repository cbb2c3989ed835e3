"""Epoch-batched bandit agents and the baselines, behind one interface (:mod:`.base`).

``make_agent(name, ...)`` builds a registered agent; ``agent_names()`` lists them.
"""

from .base import (
    Agent,
    BanditSpec,
    EpochAgent,
    agent_descriptions,
    agent_names,
    doubling_schedule,
    make_agent,
    register_agent,
    uniform_choice,
)
from .simple import UniformAgent

__all__ = [
    "Agent", "BanditSpec", "EpochAgent", "UniformAgent", "agent_descriptions", "agent_names", "doubling_schedule",
    "make_agent", "register_agent", "uniform_choice",
]
