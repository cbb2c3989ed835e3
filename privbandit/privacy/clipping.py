"""Input guards: features clipped to norm B and rewards to [-1, 1] before any mechanism.

Sensitivities are only true for bounded inputs, so every mechanism's input passes through these
functions first. When clipping changes data, a :class:`ClippingWarning` is issued (Python's default
warning filter shows it once per call site).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_positive


class ClippingWarning(UserWarning):
    """Raised (as a warning) when clipping changed a feature or a reward before a mechanism."""


def clip_features(features: np.ndarray, bound: float) -> np.ndarray:
    """Scale each row of ``features`` (..., d) down to L2 norm at most ``bound``.

    Parameters
    ----------
    features : ndarray of shape (..., d)
        Finite feature vectors (checked by the caller).
    bound : float
        The feature bound B > 0.

    Returns
    -------
    ndarray
        A new array whose rows have norm <= bound; rows already inside are unchanged.
    """
    bound = check_positive("bound", bound)
    norms = np.linalg.norm(features, axis=-1, keepdims=True)
    over = norms > bound
    if not np.any(over):
        return np.array(features, dtype=float, copy=True)
    warnings.warn(f"{int(over.sum())} feature vector(s) had norm above the bound B={bound:g} and were "
                  f"scaled down before a privacy mechanism", ClippingWarning, stacklevel=2)
    scale = np.where(over, bound / np.where(over, norms, 1.0), 1.0)
    return features * scale


def clip_rewards(rewards: np.ndarray, bound: float = 1.0) -> np.ndarray:
    """Clip rewards to ``[-bound, bound]`` (the paper's clip_1 for labels |y| <= 1)."""
    bound = check_positive("bound", bound)
    over = np.abs(rewards) > bound
    if np.any(over):
        warnings.warn(f"{int(over.sum())} reward(s) outside [-{bound:g}, {bound:g}] were clipped before a "
                      f"privacy mechanism", ClippingWarning, stacklevel=2)
        return np.clip(rewards, -bound, bound)
    return np.array(rewards, dtype=float, copy=True)
