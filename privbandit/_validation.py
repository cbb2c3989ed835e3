"""Argument checks shared by every module.

Each check raises :class:`ValueError` (or :class:`TypeError` for a wrong type) whose message names the
argument and the allowed range, so that bad input never turns into a silent NaN deep inside numpy.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

def as_generator(rng: Any = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` from a seed, a SeedSequence or a Generator (SPEC 7).

    Parameters
    ----------
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None
        ``None`` gives fresh OS entropy; a Generator is returned as is (not copied).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"rng must be a seed, a SeedSequence or a numpy Generator, got {rng!r}")
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(rng, numbers.Integral) and rng < 0:
            raise ValueError(f"rng must be a non-negative seed, got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a seed, a SeedSequence or a numpy Generator, got {type(rng).__name__}")


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as a finite float inside the interval, or raise ValueError naming ``name``.

    Parameters
    ----------
    name : str
        The argument's name, quoted in the error.
    value : float
        The value to check.
    low, high : float or None
        Interval ends (None for unbounded).
    low_open, high_open : bool
        Whether the ends are excluded.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    interval = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    if math.isnan(v):
        raise ValueError(f"{name} must be a number in {interval}, got nan")
    bad_low = low is not None and (v < low or (low_open and v == low))
    bad_high = high is not None and (v > high or (high_open and v == high))
    if bad_low or bad_high or (math.isinf(v) and not (low is None or high is None)):
        raise ValueError(f"{name} must be in {interval}, got {value!r}")
    if math.isinf(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as a finite float > 0, or raise ValueError naming ``name``."""
    return check_real(name, value, low=0.0, low_open=True)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Check a privacy parameter epsilon: a finite float > 0."""
    return check_real(name, epsilon, low=0.0, low_open=True)


def check_delta(delta: Any, name: str = "delta") -> float:
    """Check a privacy parameter delta: a float in the open interval (0, 1)."""
    return check_real(name, delta, low=0.0, high=1.0, low_open=True, high_open=True)


def check_choice(name: str, value: Any, choices: "tuple | list") -> Any:
    """Return ``value`` if it is one of ``choices``, else raise ValueError naming ``name`` and the choices."""
    if value not in tuple(choices):
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_int(name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]``, or raise (TypeError for non-integers)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if v < low or (high is not None and v > high):
        raise ValueError(f"{name} must be an integer in [{low}, {'inf' if high is None else high}], got {v}")
    return v


def check_array(name: str, value: Any, *, ndim: int | tuple[int, ...] | None = None,
                shape: tuple[int | None, ...] | None = None, allow_empty: bool = True) -> np.ndarray:
    """Return ``value`` as a finite float64 array of the given ndim/shape, or raise ValueError naming ``name``.

    Parameters
    ----------
    name : str
        The argument's name, quoted in the error.
    value : array_like
        The values.
    ndim : int or tuple of int, optional
        Allowed numbers of dimensions.
    shape : tuple of (int or None), optional
        The expected shape; ``None`` entries match any length.
    allow_empty : bool
        Whether a zero-size array is accepted.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(f"{name} must have {' or '.join(map(str, allowed))} dimensions, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def check_rows(features: Any, rewards: Any, dim: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Check a batch of regression rows: features (m, d) (or (d,) for one row) and rewards (m,) (or scalar).

    Returns
    -------
    features : ndarray of shape (m, d)
    rewards : ndarray of shape (m,)
    """
    x = check_array("features", features, ndim=(1, 2))
    y = check_array("rewards", rewards, ndim=(0, 1))
    if x.ndim == 1:
        x = x[None, :]
    y = np.atleast_1d(y)
    if dim is not None and x.shape[1] != dim:
        raise ValueError(f"features must have {dim} columns (the dimension d), got shape {x.shape}")
    if y.shape[0] != x.shape[0]:
        raise ValueError(f"rewards must have one entry per feature row: got {y.shape[0]} rewards for {x.shape[0]} rows")
    return x, y
