"""What an agent knows about a bandit before it starts: :class:`BanditSpec`.

The envs build it (``env.bandit_spec()``) and the agents are reset with it; it sits apart from both so
that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._validation import check_int, check_positive
from .links import Link, identity_link

__all__ = ["BanditSpec"]


@dataclass(frozen=True)
class BanditSpec:
    """What an agent knows about the bandit before it starts.

    Parameters
    ----------
    n_arms : int
        K >= 1.
    dim : int
        Feature dimension d >= 1.
    horizon : int
        T >= 1 rounds.
    bound : float
        Feature bound B (||phi(x, a)|| <= B).
    link : Link
        The reward link nu (identity for linear bandits).
    """

    n_arms: int
    dim: int
    horizon: int
    bound: float = 1.0
    link: Link = field(default_factory=identity_link)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_arms", check_int("n_arms", self.n_arms, low=1))
        object.__setattr__(self, "dim", check_int("dim", self.dim, low=1))
        object.__setattr__(self, "horizon", check_int("horizon", self.horizon, low=1))
        object.__setattr__(self, "bound", check_positive("bound", self.bound))
        if not isinstance(self.link, Link):
            raise TypeError(f"link must be a privbandit Link, got {type(self.link).__name__}")
