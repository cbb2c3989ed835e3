"""privbandit: differentially private linear and generalized-linear contextual bandits.

Importing the package registers the Gymnasium environments ``PrivLinCB-v0`` and ``PrivGLMCB-v0``.
"""

from . import envs, infomatrix, privacy
from .envs import PrivGLMCBEnv, PrivLinCBEnv, RoundBatch, make_family
from .links import Link, identity_link, logistic_link
from .privacy import PrivacyLedger, PrivacySpec

__version__ = "0.1.0"

__all__ = [
    "Link", "PrivGLMCBEnv", "PrivLinCBEnv", "PrivacyLedger", "PrivacySpec", "RoundBatch", "envs", "identity_link",
    "infomatrix", "logistic_link", "make_family", "privacy",
]
