"""An example privbandit plugin: joint-DP action elimination that plays UCB among the survivors from round 2.

Installed (``pip install -e examples/my_agent``), it is the agent ``my-agent`` through the entry point
``privbandit.agents``: ``privbandit bench --suite quick --agent my-agent`` and
``privbandit audit --agent my-agent --epsilon 1`` find it, in every worker too.
"""

from __future__ import annotations

from privbandit.agents import Agent
from privbandit.agents import make_agent as _make


def make_agent(*, epsilon: float, delta: float = 1e-5, **kwargs) -> Agent:
    """Joint-DP elimination (IW-Regression-DP) with UCB play and a first epoch of one round."""
    kwargs.setdefault("first_epoch", 1)
    agent = _make("elim-jdp-ucb", epsilon=epsilon, delta=delta, **kwargs)
    agent.name = "my-agent"
    return agent


make_agent.privacy_model = "jdp"   # declared for privbandit's registry: make_agent("my-agent") needs a budget
