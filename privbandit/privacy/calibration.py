"""Noise calibration for the Gaussian mechanism: the paper's sigma_alpha and the analytic Gaussian.

Conventions. ``sensitivity`` is the L2 sensitivity, sup ||F(z) - F(z')|| over neighbouring inputs
z, z'. The paper (`def:Guassian-channel`) writes Delta for *half* the L2 diameter of F, so its L2
sensitivity is 2 Delta, and its channel N(F(z), sigma_alpha^2 Delta^2 I) with
sigma_alpha = 4 sqrt(log(2.5/beta)) / alpha is (alpha, beta/2)-DP. Here every function takes the
sensitivity (= 2 Delta), so ``method="paper"`` gives sigma = sigma_alpha * sensitivity / 2.

The analytic Gaussian mechanism (Balle & Wang 2018) is the smallest sigma for which the Gaussian
mechanism is (epsilon, delta)-DP; its privacy profile is exact:

    delta(epsilon) = Phi(s/(2 sigma) - epsilon sigma/s) - e^epsilon Phi(-s/(2 sigma) - epsilon sigma/s).

The noise multiplier is z = sigma / sensitivity; composed Gaussian mechanisms with multipliers z_i are
one Gaussian mechanism with multiplier (sum z_i^-2)^(-1/2).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from .._validation import check_int, check_positive
from .spec import check_delta, check_epsilon

CalibrationMethod = Literal["analytic", "paper"]
CALIBRATION_METHODS: tuple[str, ...] = ("analytic", "paper")


def paper_sigma_alpha(epsilon: float, delta: float) -> float:
    """The paper's sigma_alpha = 4 sqrt(log(2.5/delta)) / epsilon (epsilon > 0, delta in (0, 1)).

    N(F(z), sigma_alpha^2 Delta^2 I) with Delta half the L2 diameter of F is (epsilon, delta/2)-DP.

    References
    ----------
    Source paper, `def:Guassian-channel`.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    return 4.0 * math.sqrt(math.log(2.5 / delta)) / epsilon


def gaussian_delta(epsilon: float, noise_multiplier: float) -> float:
    """Exact delta(epsilon) of a Gaussian mechanism with noise multiplier z = sigma / sensitivity.

    Parameters
    ----------
    epsilon : float
        Privacy loss level, >= 0.
    noise_multiplier : float
        sigma divided by the L2 sensitivity, > 0.

    Returns
    -------
    float
        The smallest delta for which the mechanism is (epsilon, delta)-DP (Balle & Wang 2018, Thm 8).

    References
    ----------
    Source paper, `def:Guassian-channel` (the channel being calibrated).
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    eps = float(epsilon)
    if not eps >= 0 or math.isnan(eps):
        raise ValueError(f"epsilon must be in [0, inf], got {epsilon!r}")
    if math.isinf(eps):
        return 0.0
    from scipy import special  # on first use: `import privbandit` needs no scipy

    a = 1.0 / (2.0 * z) - eps * z
    b = -1.0 / (2.0 * z) - eps * z
    # Phi(a) - e^eps Phi(b), computed in log space for accuracy at small deltas.
    la = special.log_ndtr(a)
    lb = eps + special.log_ndtr(b)
    if lb >= la:
        return 0.0
    return float(math.exp(la) * -math.expm1(lb - la))


def gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """The smallest epsilon for which a Gaussian mechanism with multiplier z is (epsilon, delta)-DP.

    Parameters
    ----------
    noise_multiplier : float
        sigma divided by the L2 sensitivity, > 0.
    delta : float
        In (0, 1).

    Notes
    -----
    dp-accounting's ``get_epsilon_gaussian`` (Balle & Wang 2018), rounded up until :func:`gaussian_delta`
    confirms ``delta(epsilon) <= delta``; 0.0 when the mechanism is already (0, delta)-DP.

    References
    ----------
    Source paper, `def:Guassian-channel`.
    """
    z = check_positive("noise_multiplier", noise_multiplier)
    delta = check_delta(delta)
    import dp_accounting  # on first use: `import privbandit` needs no dp-accounting

    eps = float(dp_accounting.get_epsilon_gaussian(z, delta))   # Balle & Wang's root (sigma = z at sensitivity 1)
    # Round up until the exact profile confirms it, so the reported epsilon is never optimistic.
    return _round_up(eps, lambda e: not gaussian_delta(e, z) > delta)


def analytic_noise_multiplier(epsilon: float, delta: float) -> float:
    """The analytic Gaussian's smallest multiplier z = sigma/sensitivity that is (epsilon, delta)-DP (epsilon > 0,
    delta in (0, 1)).

    Computed with dp-accounting's ``get_sigma_gaussian`` (Balle & Wang 2018) and then rounded up until
    the exact profile :func:`gaussian_delta` confirms ``delta(epsilon) <= delta``.

    References
    ----------
    Source paper, `def:Guassian-channel`.
    """
    return _analytic_noise_multiplier(check_epsilon(epsilon), check_delta(delta))


@functools.lru_cache(maxsize=4096)
def _analytic_noise_multiplier(epsilon: float, delta: float) -> float:
    # Memoised: agents and oracles ask for the same (epsilon, delta) at every reset and every epoch, and
    # one dp-accounting root search costs milliseconds.
    import dp_accounting

    z = float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    while gaussian_delta(epsilon, z) > delta:
        z *= 1.0 + 1e-9
    # A margin far above float error: sigma = z * s divided back by s may lose an ulp or two, and the
    # returned multiplier must certify the target after any such round trip (see `gaussian_sigma`).
    return z * (1.0 + _MULTIPLIER_MARGIN)


#: Relative margin added to every analytic multiplier (about 1e7 ulps): costs 1e-9 of noise, absorbs rounding.
_MULTIPLIER_MARGIN = 1e-9


def _round_up(x: float, ok: Callable[[float], bool]) -> float:
    """``x``, or the first of its successive roundings up (the next float, times 1 + 1e-12) for which ``ok``
    holds: a calibrated value that the exact privacy profile itself confirms."""
    while not ok(x):
        x = float(np.nextafter(x, math.inf)) * (1.0 + 1e-12)
    return x


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float,
                   method: CalibrationMethod = "analytic") -> float:
    """Standard deviation of a Gaussian mechanism that is (epsilon, delta)-DP at the given L2 sensitivity.

    Parameters
    ----------
    epsilon, delta : float
        The privacy budget: epsilon > 0, delta in (0, 1).
    sensitivity : float
        L2 sensitivity, > 0 (the paper's 2 Delta).
    method : {"analytic", "paper"}
        ``"analytic"`` (default): the exact smallest sigma (Balle & Wang 2018, through dp-accounting).
        ``"paper"``: sigma_alpha * Delta with Delta = sensitivity / 2 and sigma_alpha computed for
        ``delta`` itself (the paper's channel is (epsilon, delta/2)-DP, so this is conservative).
        The paper proves its channel only for epsilon, delta in (0, 1]; for epsilon > 1 its formula can
        be too small (at epsilon >= ~14 it is no longer (epsilon, delta)-DP), so there the larger of the
        paper's and the analytic sigma is returned, which equals the paper's wherever the paper's is valid.

    Returns
    -------
    float
        The noise standard deviation.

    References
    ----------
    Source paper, `def:Guassian-channel`.
    """
    sensitivity = check_positive("sensitivity", sensitivity)
    if method == "analytic":
        sigma = analytic_noise_multiplier(epsilon, delta) * sensitivity
    elif method == "paper":
        sigma = paper_sigma_alpha(epsilon, delta) * sensitivity / 2.0
        if epsilon > 1.0:  # outside the regime def:Guassian-channel is proved for: never below the exact minimum
            sigma = max(sigma, analytic_noise_multiplier(epsilon, delta) * sensitivity)
    else:
        raise ValueError(f"method must be one of {CALIBRATION_METHODS}, got {method!r}")
    # checked on the returned float itself, so no rounding in ``z * sensitivity`` can make a caller's
    # ``gaussian_delta(epsilon, sigma / sensitivity)`` exceed ``delta``
    eps, delta = float(epsilon), float(delta)
    return _round_up(sigma, lambda s: not gaussian_delta(eps, s / sensitivity) > delta)


@functools.lru_cache(maxsize=1024)
def release_multiplier(epsilon: float, delta: float, method: str = "analytic", n_releases: int = 1) -> float:
    """Noise multiplier sigma / sensitivity of each of ``n_releases`` Gaussians on the same records.

    Together the releases are (epsilon, delta)-DP: with ``"analytic"`` each gets sqrt(k) times the single
    analytic multiplier z*, and k Gaussians with multiplier sqrt(k) z* compose exactly into one with z*;
    with ``"paper"`` each gets the paper's calibration at (epsilon/k, delta/k) (basic composition).

    Parameters
    ----------
    epsilon, delta : float
        The budget the releases spend together: epsilon > 0, delta in (0, 1).
    method : {"analytic", "paper"}
        The calibration (see :func:`gaussian_sigma`).
    n_releases : int
        k >= 1, the number of Gaussians released on the same records.

    References
    ----------
    Source paper, `def:Guassian-channel`; PAPER.md ("split the budget or release one joint vector").
    """
    n_releases = check_int("n_releases", n_releases, low=1)
    if method == "analytic":
        return analytic_noise_multiplier(epsilon, delta) * math.sqrt(n_releases)
    if method == "paper":
        return gaussian_sigma(epsilon / n_releases, delta / n_releases, 1.0, "paper")
    raise ValueError(f"method must be one of {CALIBRATION_METHODS}, got {method!r}")


def compose_gaussian_multipliers(multipliers: np.ndarray | list[float]) -> float:
    """Multiplier of the single Gaussian equivalent to composing Gaussians with multipliers z_i.

    A record released through Gaussians with multipliers z_1..z_k has the privacy profile of one
    Gaussian with z = (sum_i z_i^-2)^(-1/2) (the mechanisms' outputs are jointly a Gaussian whose
    mean shift has Mahalanobis length sqrt(sum z_i^-2)).

    Parameters
    ----------
    multipliers : array or list of float
        The multipliers z_i > 0 of the composed Gaussians.
    """
    z = np.asarray(multipliers, dtype=float)
    if z.size == 0:
        return math.inf
    if np.any(~(z > 0)):
        raise ValueError("noise multipliers must be > 0")
    return float(np.sum(z ** -2.0) ** -0.5)
