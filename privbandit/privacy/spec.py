"""The privacy specification every oracle and agent is configured with, and the one check of a budget."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from .._validation import check_choice, check_real

PrivacyModel = Literal["none", "jdp", "ldp"]
MODELS: tuple[str, ...] = ("none", "jdp", "ldp")


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """epsilon as a float, finite and > 0; else a ValueError (TypeError for a non-number) naming ``name`` and the
    allowed range. The one check of a budget's epsilon, which every boundary calls: the CLI's arguments, a
    benchmark grid, :class:`PrivacySpec`, the mechanisms, calibrations and audits."""
    return check_real(name, epsilon, low=0.0, low_open=True)


def check_delta(delta: Any, name: str = "delta") -> float:
    """delta as a float in the open interval (0, 1); else a ValueError (TypeError for a non-number) naming ``name``
    and the allowed range (the one check of a budget's delta, as :func:`check_epsilon`)."""
    return check_real(name, delta, low=0.0, high=1.0, low_open=True, high_open=True)


@dataclass(frozen=True)
class PrivacySpec:
    """A privacy model with its (epsilon, delta) budget per user.

    The paper's (alpha, beta) are (epsilon, delta). The statistical failure probability of confidence
    widths is a separate parameter of the oracles (``confidence``), never ``delta``.

    Parameters
    ----------
    model : {"none", "jdp", "ldp"}
        ``"none"``: no privacy (epsilon = inf, delta = 0 are stored). ``"jdp"``: joint (central) DP, the
        curator sees raw data and releases privatized statistics (`def:JDP`, `def:JDP-interactive`).
        ``"ldp"``: local DP, each user's record passes through a channel chosen before it is seen (`def:LDP`).
    epsilon : float
        Privacy loss bound, > 0 (ignored for ``"none"``).
    delta : float
        Failure probability of the privacy guarantee, in (0, 1) (ignored for ``"none"``; a pure-DP
        mechanism spends delta = 0 of it).

    References
    ----------
    Source paper, `def:JDP`, `def:LDP`.
    """

    model: PrivacyModel = "jdp"
    epsilon: float = 1.0
    delta: float = 1e-5

    def __post_init__(self) -> None:
        check_choice("model", self.model, MODELS)
        if self.model == "none":
            object.__setattr__(self, "epsilon", math.inf)
            object.__setattr__(self, "delta", 0.0)
            return
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def is_private(self) -> bool:
        """Whether the spec asks for any privacy."""
        return self.model != "none"

    @classmethod
    def none(cls) -> PrivacySpec:
        """The non-private spec."""
        return cls(model="none")

    def label(self) -> str:
        """A short human-readable label, e.g. ``"jdp(eps=1, delta=1e-05)"``."""
        if not self.is_private:
            return "non-private"
        return f"{self.model}(eps={self.epsilon:g}, delta={self.delta:g})"
