"""privbandit: differentially private linear and generalized-linear contextual bandits.

Importing the package registers the Gymnasium environments ``PrivLinCB-v0`` and ``PrivGLMCB-v0``.
"""

from . import infomatrix, privacy
from .links import Link, identity_link, logistic_link
from .privacy import PrivacyLedger, PrivacySpec

__version__ = "0.1.0"

__all__ = ["Link", "PrivacyLedger", "PrivacySpec", "identity_link", "infomatrix", "logistic_link", "privacy"]
