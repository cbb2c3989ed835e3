"""privbandit: differentially private linear and generalized-linear contextual bandits.

Importing the package registers the Gymnasium environments ``PrivLinCB-v0`` and ``PrivGLMCB-v0``.
``make_agent``, ``make_oracle`` and ``run`` (and the ``agents``, ``oracles``, ``sim``, ``bench`` and ``report``
subpackages) are imported on first use, so ``import privbandit`` stays light.
"""

from . import envs, infomatrix, privacy
from .envs import PrivGLMCBEnv, PrivLinCBEnv, RoundBatch, make_family
from .links import Link, identity_link, logistic_link
from .privacy import PrivacyLedger, PrivacySpec

__all__ = [
    "Link", "PrivGLMCBEnv", "PrivLinCBEnv", "PrivacyLedger", "PrivacySpec", "RoundBatch", "agents", "bench", "envs",
    "identity_link", "infomatrix", "logistic_link", "make_agent", "make_family", "make_oracle", "oracles", "privacy",
    "report", "run", "sim",
]

__version__ = "0.1.0"

# Imported on first access, not with the envs: the agents and oracles need scipy, the runner pandas,
# the figures matplotlib (tests/house/test_api.py checks that `import privbandit` loads none of them).
_LAZY_MODULES = ("agents", "bench", "oracles", "report", "sim")
_LAZY_ATTRIBUTES = {"make_agent": "agents", "make_oracle": "oracles", "run": "sim.runner"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY_ATTRIBUTES:
        return getattr(importlib.import_module(f".{_LAZY_ATTRIBUTES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
