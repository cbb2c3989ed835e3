"""Privacy layer: specifications, calibration, mechanisms, local randomizers, input guards and the ledger.

Every mechanism states its sensitivity and its calibration; inputs are clipped (or refused) before
noise; composition is computed by :class:`PrivacyLedger`, never guessed.
"""

from .audit import AuditResult, audit_delta, clopper_pearson
from .calibration import (
    CALIBRATION_METHODS,
    analytic_noise_multiplier,
    compose_gaussian_multipliers,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    paper_sigma_alpha,
    release_multiplier,
)
from .clipping import ClippingWarning, clip_features, clip_rewards
from .ledger import (
    CentralMechanism,
    PrivacyBudgetExceeded,
    PrivacyLedger,
    Release,
    release_recorded,
)
from .mechanisms import (
    GaussianMechanism,
    L2BallChannel,
    LaplaceMechanism,
    LaplacePair,
    MechanismEntry,
    SymmetricGaussianMechanism,
    l2_ball_channel_magnitude,
)
from .randomizers import LocalRandomizer, project_rows
from .spec import MODELS, PrivacySpec, check_delta, check_epsilon

__all__ = [
    "AuditResult", "audit_delta", "clopper_pearson", "CALIBRATION_METHODS", "MODELS", "CentralMechanism",
    "ClippingWarning", "GaussianMechanism", "L2BallChannel", "LaplaceMechanism", "LaplacePair", "LocalRandomizer",
    "MechanismEntry", "PrivacyBudgetExceeded", "PrivacyLedger", "PrivacySpec", "Release",
    "SymmetricGaussianMechanism", "analytic_noise_multiplier", "check_delta", "check_epsilon", "clip_features",
    "clip_rewards", "compose_gaussian_multipliers", "gaussian_delta", "gaussian_epsilon", "gaussian_sigma",
    "l2_ball_channel_magnitude", "paper_sigma_alpha", "project_rows", "release_multiplier", "release_recorded",
]
