"""Input guards: features clipped to norm B and rewards to [-1, 1] before any mechanism.

Sensitivities are only true for bounded inputs, so every mechanism's input passes through these
functions first. When clipping changes data, a :class:`ClippingWarning` is issued (Python's default
warning filter shows it once per call site).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_finite, check_positive


class ClippingWarning(UserWarning):
    """Raised (as a warning) when clipping changed a feature or a reward before a mechanism."""


def scale_to_ball(rows: np.ndarray, radius: float, ord: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Scale each row (last axis) of ``rows`` down to L``ord`` norm (2 or 1) at most ``radius``, without overflow.

    Norms are computed on rows divided by their largest absolute entry, so rows with entries near the
    float maximum are projected correctly (not turned into zeros by an infinite norm).

    Returns
    -------
    out : ndarray
        The projected rows (rows inside the ball unchanged).
    over : ndarray of bool, shape rows.shape[:-1]
        Which rows were changed.
    """
    rows = np.asarray(rows, dtype=float)
    top = np.max(np.abs(rows), axis=-1, keepdims=True) if rows.shape[-1] else np.zeros(rows.shape[:-1] + (1,))
    safe_top = np.where(top > 0, top, 1.0)
    unit = rows / safe_top
    unit_norm = np.linalg.norm(unit, ord=ord, axis=-1, keepdims=True)  # in [1, d] for nonzero rows
    with np.errstate(over="ignore"):  # radius / top overflows to inf for tiny rows: inf means "inside the ball"
        over = (top > 0) & (unit_norm > radius / safe_top)
    safe_norm = np.where(over, unit_norm, 1.0)
    out = np.where(over, unit / safe_norm * radius, rows)
    return out, over[..., 0]


def within_ball(features: np.ndarray, bound: float) -> bool:
    """Whether every row (last axis) of the float64 array ``features`` has squared norm <= ``bound``^2.

    The one input test shared by clipping and the agents: rows that pass are exactly those
    :func:`clip_features` returns unchanged. NaN, inf and an overflowing norm give False.
    """
    sq = np.einsum("...i,...i->...", features, features)
    return np.count_nonzero(sq <= bound * bound) == sq.size


def clip_features(features: np.ndarray, bound: float) -> np.ndarray:
    """Scale each row of ``features`` (..., d) down to L2 norm at most ``bound``.

    Parameters
    ----------
    features : ndarray of shape (..., d)
        Feature vectors.
    bound : float
        The feature bound B > 0.

    Returns
    -------
    ndarray
        A new array whose rows have norm <= bound; rows already inside are unchanged.

    Raises
    ------
    ValueError
        If ``features`` holds NaN or inf (the norm test below is also the finiteness test: a row that passes
        it is finite, so callers need not check finiteness before).
    """
    bound = check_positive("bound", bound)
    arr = np.asarray(features, dtype=float)
    # the common case: all squared norms finite and <= B^2; an overflowing or NaN norm fails the test and
    # takes the exact path below
    if arr.shape[-1:] and within_ball(arr, bound):
        return arr.copy()
    check_finite("features", arr)
    out, over = scale_to_ball(features, bound)
    if not np.any(over):
        return np.array(features, dtype=float, copy=True)
    # Rows over B by rounding only (norm <= B (1 + 1e-12), e.g. unit vectors scaled to B) are projected
    # silently: the projection is still applied, but the data did not really change.
    rows = np.asarray(features, dtype=float)[over]
    top = np.max(np.abs(rows), axis=-1)
    norms = top * np.linalg.norm(rows / top[:, None], axis=-1)
    real = int(np.sum(norms > bound * (1 + 1e-12)))
    if real:
        warnings.warn(f"{real} feature vector(s) had norm above the bound B={bound:g} and were "
                      f"scaled down before a privacy mechanism", ClippingWarning, stacklevel=2)
    return out


def clip_rewards(rewards: np.ndarray) -> np.ndarray:
    """Clip rewards to [-1, 1] (the paper's clip_1 for labels |y| <= 1).

    Parameters
    ----------
    rewards : ndarray
        Rewards (any shape).

    Raises
    ------
    ValueError
        If ``rewards`` holds NaN or inf (as for :func:`clip_features`, the bound test is also the finiteness test).
    """
    rewards = np.asarray(rewards, dtype=float)
    inside = np.count_nonzero(np.abs(rewards) <= 1.0)     # NaN is never inside
    if inside == rewards.size:
        return rewards.copy()
    check_finite("rewards", rewards)
    over = rewards.size - inside
    if over:
        warnings.warn(f"{over} reward(s) outside [-1, 1] were clipped before a privacy mechanism", ClippingWarning,
                      stacklevel=2)
        return np.clip(rewards, -1.0, 1.0)
    return np.array(rewards, dtype=float, copy=True)
