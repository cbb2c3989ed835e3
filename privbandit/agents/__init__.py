"""Epoch-batched bandit agents and the baselines, behind one interface (:mod:`.base`), by name through
:mod:`.registry`.

A new epoch agent subclasses :class:`PolicyAgent` and writes one method (:mod:`.policy`).
``make_agent(name, ...)`` builds a registered agent (a private one needs ``epsilon=``); ``agent_names()``
lists them and ``agent_is_private(name)`` / ``agent_privacy(name)`` say which take a budget and under which privacy
model, from the registration. ``check_agent(agent)`` runs the interface contract on any agent (:mod:`.checks`) and
raises ``ContractError`` at the first breach.
"""

from .base import Agent, BanditSpec, clone, doubling_schedule, epoch_schedule, uniform_choice
from .checks import AGENT_CHECKS, ContractError, check_agent
from .elimination import EliminationAgent, surviving_actions
from .glm import GLMUCBAgent, GLOCAgent
from .ldp_glm import LDPGLMSGDAgent
from .linucb import LDPUCBAgent, LinUCBAgent, SSLinUCBAgent
from .policy import PolicyAgent
from .pooled import PooledReleases
from .registry import (
    AGENT_REGISTRY,
    agent_descriptions,
    agent_is_private,
    agent_names,
    agent_privacy,
    make_agent,
    register_agent,
)
from .simple import EpsilonGreedyAgent, UniformAgent
from .spanner import barycentric_spanner
from .squarecb import SquareCBAgent, inverse_gap_weighting

__all__ = [
    "AGENT_REGISTRY", "Agent", "BanditSpec", "EliminationAgent", "EpsilonGreedyAgent", "GLMUCBAgent",
    "GLOCAgent", "LDPGLMSGDAgent", "LDPUCBAgent", "LinUCBAgent", "PolicyAgent", "PooledReleases",
    "SSLinUCBAgent", "SquareCBAgent", "UniformAgent", "agent_descriptions", "agent_is_private", "agent_names",
    "agent_privacy",
    "barycentric_spanner", "clone", "doubling_schedule", "epoch_schedule", "inverse_gap_weighting", "make_agent",
    "register_agent", "surviving_actions", "uniform_choice",
    # the contract as a public checker
    "AGENT_CHECKS", "ContractError", "check_agent",
]
