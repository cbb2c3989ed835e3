"""Noise-adding mechanisms, vectorised over batches, each stating its sensitivity and calibration.

Every mechanism is a frozen dataclass that stores its sensitivity and noise scale, releases a whole
batch at once with one ``rng`` argument, and describes itself to the privacy ledger
(:meth:`ledger_entry`). Callers must bound their inputs first (:mod:`privbandit.privacy.clipping`);
the mechanism trusts the declared sensitivity.

References
----------
Source paper, `def:Guassian-channel` (Gaussian channel and SymPriv), `alg:LDP-simple-linear-regression`
(Laplace pair), `alg:LDP-linear-regression-fixed-p` (L2-ball channel of Duchi, Jordan & Wainwright 2013).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_generator, check_array, check_int, check_positive
from .calibration import CalibrationMethod, gaussian_epsilon, gaussian_sigma
from .spec import check_epsilon


@dataclass(frozen=True)
class MechanismEntry:
    """How a mechanism appears in the privacy ledger.

    Attributes
    ----------
    family : {"gaussian", "laplace", "pure"}
        Gaussian: ``parameter`` is the noise multiplier sigma / L2-sensitivity. Laplace: ``parameter`` is
        scale / L1-sensitivity (the release is 1/parameter-DP). Pure: ``parameter`` is the pure epsilon.
    parameter : float
        See ``family``.
    name : str
        The mechanism's name, for reports.
    """

    family: str
    parameter: float
    name: str


@dataclass(frozen=True)
class GaussianMechanism:
    """Add i.i.d. N(0, sigma^2) noise to every entry of a vector statistic.

    (epsilon, delta)-DP when ``sigma`` is calibrated for the L2 ``sensitivity`` (sup over neighbours of
    ||F(z) - F(z')||_2; the paper's 2 Delta).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity of the released statistic, > 0.
    sigma : float
        Noise standard deviation, > 0.

    References
    ----------
    Source paper, `def:Guassian-channel`.
    """

    sensitivity: float
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))

    @classmethod
    def calibrated(cls, epsilon: float, delta: float, sensitivity: float,
                   method: CalibrationMethod = "analytic"):
        """The mechanism with the smallest sigma (analytic) or the paper's sigma for (epsilon, delta)."""
        return cls(sensitivity=sensitivity, sigma=gaussian_sigma(epsilon, delta, sensitivity, method))

    @property
    def noise_multiplier(self) -> float:
        """sigma / sensitivity."""
        return self.sigma / self.sensitivity

    def epsilon(self, delta: float) -> float:
        """The exact epsilon of one release at ``delta``."""
        return gaussian_epsilon(self.noise_multiplier, delta)

    def release(self, values: np.ndarray, rng=None) -> np.ndarray:
        """Return ``values`` plus N(0, sigma^2) on every entry (any shape; a batch is many releases).

        Raises ValueError if ``values`` holds NaN or inf (a bounded statistic never does).
        """
        return self._add_noise(check_array("values", values), as_generator(rng))

    def _add_noise(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``release`` for a finite float ``values`` and a Generator (already checked by the caller):
        ``values + sigma * z`` computed in the buffer of the draws z (the same products and sums)."""
        noisy = rng.standard_normal(values.shape)
        noisy *= self.sigma
        noisy += values
        return noisy

    def ledger_entry(self) -> MechanismEntry:
        """This mechanism as the ledger records it."""
        return MechanismEntry("gaussian", self.noise_multiplier, "gaussian")


@functools.lru_cache(maxsize=64)
def strictly_lower(n: int, m: int) -> np.ndarray:
    """The (n, m) boolean mask of the entries below the diagonal, i > j (read-only; a release of a d x d matrix
    per user builds it once per shape, not once per user)."""
    mask = np.tri(n, m, -1, dtype=bool)
    mask.flags.writeable = False
    return mask


@dataclass(frozen=True)
class SymmetricGaussianMechanism(GaussianMechanism):
    """SymPriv: add a symmetric Gaussian matrix Z (Z_ij = Z_ji ~ N(0, sigma^2) i.i.d. for i <= j).

    The noise lives on the d(d+1)/2 upper-triangle entries. The L2 norm of a symmetric matrix's upper
    triangle is at most its Frobenius norm, so calibrating to the *Frobenius* sensitivity is valid
    (and slightly conservative). Calibration, noise multiplier and epsilon are the vector Gaussian's.

    Parameters
    ----------
    sensitivity : float
        Frobenius sensitivity of the symmetric matrix statistic, > 0.
    sigma : float
        Noise standard deviation per upper-triangle entry, > 0.

    References
    ----------
    Source paper, `def:Guassian-channel` (SymPriv), `alg:W-JDP`, `alg:U-LDP`.
    """

    def noise(self, shape: tuple[int, ...], rng=None) -> np.ndarray:
        """Symmetric noise of shape ``(..., d, d)``."""
        return self._noise(shape, as_generator(rng))

    def _noise(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """:meth:`noise` for a Generator: z = sigma N(0, 1) of ``shape`` on and above the diagonal, mirrored
        below it (z_ij for i <= j, z_ji for i > j)."""
        z = rng.standard_normal(shape)
        z *= self.sigma
        return np.where(strictly_lower(shape[-2], shape[-1]), z.swapaxes(-1, -2), z)   # (non-square: ValueError)

    def release(self, matrices: np.ndarray, rng=None) -> np.ndarray:
        """Return symmetric ``matrices`` (..., d, d) plus symmetric Gaussian noise.

        The input must be symmetric (up to rounding, which is removed by symmetrising): the noise is shared
        by the entries (i, j) and (j, i), so an asymmetric input would publish M_ij - M_ji without noise.
        """
        return self._add_noise(check_array("matrices", matrices), as_generator(rng))

    def _add_noise(self, matrices: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``release`` for finite float ``matrices`` and a Generator: the shape and symmetry checks, the
        symmetrisation and the noise."""
        if matrices.ndim < 2 or matrices.shape[-1] != matrices.shape[-2]:
            raise ValueError(f"matrices must have shape (..., d, d), got {matrices.shape}")
        transposed = matrices.swapaxes(-1, -2)
        # max |M - M^T| <= 1e-9 max(1, max |M|) (M - M^T is antisymmetric, so its max is max |M - M^T|)
        gap = float((matrices - transposed).max()) if matrices.size else 0.0
        if gap > 1e-9 and gap > 1e-9 * max(1.0, float(np.abs(matrices).max())):
            raise ValueError("matrices must be symmetric: SymPriv shares the noise of (i, j) and (j, i), so an "
                             "asymmetric input would leak M_ij - M_ji")
        noisy = matrices + transposed                  # 0.5 (M + M^T) + the symmetric noise, in place
        noisy *= 0.5
        noisy += self._noise(matrices.shape, rng)
        return noisy

    def ledger_entry(self) -> MechanismEntry:
        """This mechanism as the ledger records it."""
        return MechanismEntry("gaussian", self.noise_multiplier, "symmetric-gaussian")


@dataclass(frozen=True)
class LaplaceMechanism:
    """Add i.i.d. Laplace(0, scale) noise to every entry; (L1-sensitivity / scale, 0)-DP.

    Parameters
    ----------
    sensitivity : float
        L1 sensitivity of the released statistic, > 0.
    scale : float
        Laplace scale b > 0 (density proportional to exp(-|x|/b)).
    """

    sensitivity: float
    scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "scale", check_positive("scale", self.scale))

    @classmethod
    def calibrated(cls, epsilon: float, sensitivity: float) -> LaplaceMechanism:
        """The epsilon-DP mechanism: scale = sensitivity / epsilon."""
        epsilon = check_epsilon(epsilon)
        sensitivity = check_positive("sensitivity", sensitivity)
        return cls(sensitivity=sensitivity, scale=sensitivity / epsilon)

    @property
    def pure_epsilon(self) -> float:
        """The release's (pure) epsilon = sensitivity / scale."""
        return self.sensitivity / self.scale

    def release(self, values: np.ndarray, rng=None) -> np.ndarray:
        """Return ``values`` plus Laplace(0, scale) on every entry (ValueError on NaN or inf)."""
        return self._add_noise(check_array("values", values), as_generator(rng))

    def _add_noise(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``release`` for a finite float ``values`` and a Generator (already checked by the caller)."""
        return values + rng.laplace(0.0, self.scale, values.shape)

    def ledger_entry(self) -> MechanismEntry:
        """This mechanism as the ledger records it."""
        return MechanismEntry("laplace", self.scale / self.sensitivity, "laplace")


@dataclass(frozen=True)
class LaplacePair:
    """The local channel of `alg:LDP-simple-linear-regression`: release (sign(x) y, |x|) with Laplace noise.

    For x, y in [-1, 1] the pair (sign(x) y, |x|) has L1 sensitivity 3 (2 from the first entry and 1
    from the second, attained together by (x, y) = (1, 1) against (-0+, 1)). One Laplace mechanism of
    scale 3/epsilon on the pair is epsilon-LDP. (The paper writes Laplace(., alpha/2) on each entry
    separately; read literally as rate alpha/2 that composes to 1.5 alpha, so privbandit calibrates the
    joint statistic instead, which spends exactly epsilon.)

    Parameters
    ----------
    epsilon : float
        The pure local privacy level, > 0.

    References
    ----------
    Source paper, `alg:LDP-simple-linear-regression`, `lem:1d-LDP`.
    """

    epsilon: float

    L1_SENSITIVITY = 3.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    @property
    def mechanism(self) -> LaplaceMechanism:
        """The Laplace mechanism on the pair."""
        return LaplaceMechanism.calibrated(self.epsilon, self.L1_SENSITIVITY)

    def release(self, x: np.ndarray, y: np.ndarray, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """Privatize each user's (x_t, y_t); inputs must lie in [-1, 1] (clip them first).

        Returns
        -------
        psi, Psi : ndarray of shape (m,)
            Noisy sign(x) y and noisy |x|.
        """
        x = check_array("x", x, ndim=1)
        y = check_array("y", y, shape=(x.shape[0],))
        if np.any(np.abs(x) > 1) or np.any(np.abs(y) > 1):
            raise ValueError("x and y must lie in [-1, 1] before the Laplace pair (clip them first)")
        pair = np.stack([np.sign(x) * y, np.abs(x)], axis=1)
        out = self.mechanism.release(pair, rng)
        return out[:, 0], out[:, 1]

    def ledger_entry(self) -> MechanismEntry:
        """This mechanism as the ledger records it."""
        return MechanismEntry("laplace", 1.0 / self.epsilon, "laplace-pair")


def l2_ball_channel_magnitude(epsilon: float, dim: int, radius: float = 1.0) -> float:
    """Norm M of every output of the L2-ball channel, chosen so that the channel is unbiased.

    M = radius * (e^eps + 1)/(e^eps - 1) * sqrt(pi) Gamma((d+1)/2) / Gamma(d/2), for the parameters of
    :class:`L2BallChannel`.
    """
    epsilon = check_epsilon(epsilon)
    dim = check_int("dim", dim, low=1)
    from scipy import special  # on first use: `import privbandit` needs no scipy

    log_ratio = special.gammaln((dim + 1) / 2) - special.gammaln(dim / 2)
    return radius / math.tanh(epsilon / 2) * math.sqrt(math.pi) * math.exp(log_ratio)


@dataclass(frozen=True)
class L2BallChannel:
    """Pure epsilon-LDP channel for vectors in the L2 ball of a radius (Duchi, Jordan & Wainwright 2013).

    For v with ||v|| <= r: draw v~ = +-r v/||v|| with P(+) = 1/2 + ||v||/(2r); with probability
    pi = e^eps/(1 + e^eps) output a uniform point of the sphere of radius M on the hemisphere
    {z : <z, v~> >= 0}, otherwise on the opposite hemisphere. Every output has norm M, the density ratio
    between any two inputs is at most pi/(1 - pi) = e^eps (pure epsilon-LDP), E[Z] = v (unbiased), and
    E[Z Z^T] = (M^2/d) I, so Cov(Z) <= (M^2/d) I = O(1/eps^2) I for eps <= 1.

    Parameters
    ----------
    epsilon : float
        > 0.
    dim : int
        Dimension d >= 1.
    radius : float
        Radius r of the input ball, > 0.

    References
    ----------
    Source paper, `alg:LDP-linear-regression-fixed-p`; Duchi, Jordan & Wainwright (2013).
    """

    epsilon: float
    dim: int
    radius: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "dim", check_int("dim", self.dim, low=1))
        object.__setattr__(self, "radius", check_positive("radius", self.radius))

    @property
    def magnitude(self) -> float:
        """The norm M of every output."""
        return l2_ball_channel_magnitude(self.epsilon, self.dim, self.radius)

    def release(self, values: np.ndarray, rng=None) -> np.ndarray:
        """Privatize each row of ``values`` (m, d) independently; rows must have norm <= radius."""
        v = check_array("values", values, ndim=2)
        if v.shape[1] != self.dim:
            raise ValueError(f"values must have shape (m, {self.dim}), got {v.shape}")
        norms = np.linalg.norm(v, axis=1)
        if np.any(norms > self.radius * (1 + 1e-12)):
            raise ValueError(f"values must have norm <= radius={self.radius:g} (clip them first)")
        from scipy import special

        rng = as_generator(rng)
        m, d = v.shape
        # All of a row's randomness comes from one row of a single draw, so privatizing rows in
        # chunks consumes the generator exactly as one call does (streaming == one-shot).
        draw = rng.random((m, 2 * d + 2))
        u_sign, u_hemi = draw[:, 0], draw[:, 1]
        gauss = special.ndtri(np.clip(draw[:, 2:], 1e-300, None))
        direction = gauss[:, :d]
        direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-300)
        safe = np.where(norms > 0, norms, 1.0)
        unit = np.where((norms > 0)[:, None], v / safe[:, None], direction)
        sign = np.where(u_sign < 0.5 + norms / (2 * self.radius), 1.0, -1.0)
        tilde = sign[:, None] * unit
        z = gauss[:, d:]
        z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-300)
        want_positive = u_hemi < special.expit(self.epsilon)
        side = np.sign(np.einsum("ij,ij->i", z, tilde))
        side = np.where(side == 0, 1.0, side)
        flip = np.where(want_positive, side, -side)
        return self.magnitude * z * flip[:, None]

    def ledger_entry(self) -> MechanismEntry:
        """This mechanism as the ledger records it."""
        return MechanismEntry("pure", self.epsilon, "l2-ball")
