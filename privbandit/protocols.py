"""What the runner needs of an agent, and what an agent needs of an oracle's fit, as typed Protocols.

An object need not inherit anything to be run: :func:`~privbandit.sim.run` plays any object with the
attributes of :class:`AgentProtocol` (``isinstance(obj, AgentProtocol)`` checks that they exist, not their
signatures; :func:`~privbandit.agents.check_agent` checks the contract). The library's own agents derive
from :class:`~privbandit.agents.Agent`, and a user's epoch agent most simply from
:class:`~privbandit.agents.PolicyAgent`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from .bandit_spec import BanditSpec
    from .oracles.base import Estimate
    from .privacy import PrivacyLedger, PrivacySpec

__all__ = ["AgentProtocol", "FitProtocol"]


@runtime_checkable
class AgentProtocol(Protocol):
    """An agent as the runner uses it: act on a block of rounds, give its action law, update on a block.

    Attributes
    ----------
    name : str
        The label of its tables.
    """

    name: str

    @property
    def privacy(self) -> PrivacySpec:
        """The guarantee the agent promises; the runner checks ``ledger`` against it at the end of a run."""

    @property
    def ledger(self) -> PrivacyLedger:
        """What every release of the current run spent, per user (round)."""

    def reset(self, spec: BanditSpec, rng: Any = None) -> Any:
        """Start a run on the bandit ``spec``; all action randomness comes from ``rng``."""

    def rounds_until_update(self) -> int:
        """How many more rounds the current policy serves (``act_batch`` may cover at most this many)."""

    def act_batch(self, features: np.ndarray) -> np.ndarray:
        """Arms (m,) for features (m, K, d), drawing a fixed number of the agent's uniforms per round."""

    def act(self, features: np.ndarray) -> int:
        """The arm for one round's features (K, d): ``act_batch(features[None])[0]``."""

    def action_probabilities(self, features: np.ndarray) -> np.ndarray:
        """The exact law (K,) or (m, K) the current policy draws its arms from."""

    def update(self, chosen_features: np.ndarray, rewards: np.ndarray) -> None:
        """Learn from the chosen rows (d,) or (m, d) and their rewards."""


@runtime_checkable
class FitProtocol(Protocol):
    """One epoch's oracle fit: rows in (``add``), one release out (``result``), the releases' ``ledger``."""

    @property
    def ledger(self) -> PrivacyLedger:
        """The fit's releases; record indices are the fit's rows 0 .. n_rounds - 1."""

    def add(self, features: np.ndarray, rewards: np.ndarray) -> None:
        """Add one row (d,) and its reward or many (m, d) and (m,)."""

    def result(self) -> Estimate:
        """Release the epoch's :class:`~privbandit.oracles.Estimate` (idempotent)."""
