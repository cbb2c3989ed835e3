"""privbandit: differentially private linear and generalized-linear contextual bandits.

Importing the package registers the Gymnasium environments ``PrivLinCB-v0`` and ``PrivGLMCB-v0``.
"""

from . import envs, infomatrix, privacy
from .envs import PrivGLMCBEnv, PrivLinCBEnv, RoundBatch, make_family
from .links import Link, identity_link, logistic_link
from .privacy import PrivacyLedger, PrivacySpec

__version__ = "0.1.0"

_LAZY = ("plots", "sim")  # pandas/matplotlib users: imported on first access, not with the envs


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Link", "PrivGLMCBEnv", "PrivLinCBEnv", "PrivacyLedger", "PrivacySpec", "RoundBatch", "envs", "identity_link",
    "infomatrix", "logistic_link", "make_family", "plots", "privacy", "sim",
]
