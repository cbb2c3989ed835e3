"""Context families: the feature distributions that make private learning easy or hard.

The paper's point is that the cost of privacy depends on the context distribution p, not on its
covariance alone: perturbing sufficient statistics calibrates noise to the largest feature norm B,
which is wasteful when most features are short (E||phi||^2 << B E||phi||), while on the "simple"
distributions p_{Sigma,B} (norms 0 or B) every private estimator pays alike. Each family below is a
frozen :class:`ContextFamily` dataclass that samples K i.i.d. feature vectors per round and knows its
exact second moment (and, for a discrete family, its atoms, so that U* and W* can be computed exactly).

References
----------
Source paper, `example:ill-condition-p` (spiky p_{Sigma,B}), `prop:lower-perturbed-p` (rare direction),
`ssec:OLS` and `prop:OLS-fail-local-gen` (short features: E||phi||^2 << B E||phi||), `def:lmin`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

import numpy as np

from .._validation import as_generator, check_array, check_int, check_positive, check_real
from ..registry import Entry, PluginError, Registry, subclass_check

__all__ = [
    "FAMILIES", "ContextFamily", "HeavyTailed", "HeavyTailedDirection", "Isotropic", "LowRank", "RareDirection",
    "Spiky", "clipped_pareto_moment", "FAMILY_REGISTRY", "family_class", "family_names", "make_family",
    "register_family",
]


_SHRINK = 1.0 - 1e-12
"""Scale factor that keeps rounding from pushing a normalised vector past its radius."""


def _scale_rows(g: np.ndarray, radii: np.ndarray | float) -> np.ndarray:
    """Rescale the rows of g in place to norms ``radii`` (a zero row stays zero); returns g."""
    sq = np.einsum("ij,ij->i", g, g)
    np.sqrt(sq, out=sq)
    np.maximum(sq, 1e-300, out=sq)
    np.divide(radii * _SHRINK, sq, out=sq)
    g *= sq[:, None]
    return g


def _sphere(m: int, dim: int, rng: np.random.Generator, radii: np.ndarray | float = 1.0) -> np.ndarray:
    """m points uniform on the sphere of R^dim of radius ``radii`` (normalised Gaussians), shape (m, dim)."""
    return _scale_rows(rng.standard_normal((m, dim)), radii)


def _axes(frame: np.ndarray) -> np.ndarray | None:
    """Column indices if every column of ``frame`` is a standard basis vector, else None."""
    if np.all((frame == 0.0) | (frame == 1.0)) and np.all(frame.sum(axis=0) == 1.0):
        return np.argmax(frame, axis=0)
    return None


def _complement(basis: np.ndarray) -> np.ndarray:
    """An orthonormal basis (d, d - r) of the orthogonal complement of span(basis) (basis: (d, r))."""
    axes = _axes(basis)
    if axes is not None:  # keep coordinate frames coordinate frames (sampling is then a scatter)
        return np.eye(basis.shape[0])[:, np.setdiff1d(np.arange(basis.shape[0]), axes)]
    u, _, _ = np.linalg.svd(basis, full_matrices=True)
    return np.ascontiguousarray(u[:, basis.shape[1]:])


def _sphere_in(m: int, frame: np.ndarray, rng: np.random.Generator, radii: np.ndarray | float = 1.0
               ) -> np.ndarray:
    """m points uniform on the sphere (radius ``radii``) of span(frame), frame (d, k) orthonormal: (m, d).

    A coordinate frame draws d Gaussians per point and zeroes the d - k coordinates outside it (cheaper
    than allocating and scattering); any other frame maps k Gaussians by the isometry ``frame``.
    """
    d, k = frame.shape
    axes = _axes(frame)
    if axes is None:
        return _scale_rows(rng.standard_normal((m, k)), radii) @ frame.T
    g = rng.standard_normal((m, d))
    for j in np.setdiff1d(np.arange(d), axes):
        g[:, j] = 0.0
    return _scale_rows(g, radii)


def _unit(name: str, value: Any, dim: int) -> np.ndarray:
    v = check_array(name, value, shape=(dim,))
    n = float(np.linalg.norm(v))
    if n == 0.0:
        raise ValueError(f"{name} must be a non-zero vector of length {dim}")
    return v / n


def _orthonormal_columns(name: str, value: Any, dim: int, cols: int) -> np.ndarray:
    a = check_array(name, value, shape=(dim, cols))
    if not np.allclose(a.T @ a, np.eye(cols), atol=1e-8):
        raise ValueError(f"{name} must have orthonormal columns (A^T A = I), shape ({dim}, {cols})")
    return a


def clipped_pareto_moment(k: float, tail: float, scale: float) -> float:
    """E[s^k] for s = min(1, scale V), V Pareto with P(V > v) = v^{-tail} (v >= 1).

    P(s > r) = 1 for r < scale, (scale / r)^tail on [scale, 1), and P(s = 1) = scale^tail, so
    E[s^k] = scale^k + k scale^tail (1 - scale^{k - tail}) / (k - tail)   (k scale^k log(1/scale) at k = tail).
    """
    if scale >= 1.0:
        return 1.0
    a = k - tail
    log_s = math.log(scale)
    integral = -log_s if a == 0 else -math.expm1(a * log_s) / a
    return scale ** k + k * scale ** tail * integral


def _clipped_pareto(m: int, tail: float, scale: float, rng: np.random.Generator) -> np.ndarray:
    """m draws of s = min(1, scale V), V = exp(E / tail) with E ~ Exp(1), so P(V > v) = v^{-tail}."""
    v = rng.standard_exponential(m)
    v *= 1.0 / tail
    np.exp(v, out=v)
    v *= scale
    return np.minimum(v, 1.0, out=v)


@dataclass(frozen=True, eq=False)
class ContextFamily(abc.ABC):
    """Base class of the context families.

    Parameters
    ----------
    dim : int
        Feature dimension d >= 1.
    n_arms : int
        Number of arms K >= 1 (one i.i.d. feature vector per arm and round).
    bound : float
        Feature bound B > 0: every sampled vector has ||phi|| <= B.
    """

    name: ClassVar[str] = ""
    dial: ClassVar[str | None] = None
    """Name of the conditioning parameter (the dial for how hard the instance is), or None."""
    min_dim: ClassVar[int] = 1

    dim: int
    n_arms: int = 1
    bound: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", check_int("dim", self.dim, low=self.min_dim))
        object.__setattr__(self, "n_arms", check_int("n_arms", self.n_arms, low=1))
        object.__setattr__(self, "bound", check_positive("bound", self.bound))
        self._validate()

    def _validate(self) -> None:  # noqa: B027 (a hook: a family without parameters of its own checks nothing)
        """Check the family's own parameters (called by __post_init__)."""

    # -- sampling --------------------------------------------------------------------------------
    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        """Draw n rounds of K per-arm features.

        Parameters
        ----------
        n : int
            Number of rounds (>= 0).
        rng : int, Generator or None
            Randomness.

        Returns
        -------
        ndarray of shape (n, K, d), float64, every row of norm <= B.
        """
        n = check_int("n", n, low=0)
        rows = self._sample_rows(n * self.n_arms, as_generator(rng))
        return rows.reshape(n, self.n_arms, self.dim)

    @abc.abstractmethod
    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        """m i.i.d. feature vectors, shape (m, d)."""

    # -- exact quantities ------------------------------------------------------------------------
    @abc.abstractmethod
    def second_moment(self) -> np.ndarray:
        """The exact E[phi phi^T] of one arm's feature (d, d) (= the uniform-policy second moment)."""

    def atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(points (m, d), probabilities (m,)) for a discrete family; None for a continuous one."""
        return None

    def theta_direction(self, rng: Any = None) -> np.ndarray:
        """A unit vector for theta* (uniform on the sphere unless the family has a hard direction)."""
        return _sphere(1, self.dim, as_generator(rng))[0]

    @classmethod
    def parameter_names(cls) -> tuple[str, ...]:
        """The family's own keyword parameters (beyond dim, n_arms, bound)."""
        return tuple(f.name for f in fields(cls) if f.name not in ("dim", "n_arms", "bound"))


@dataclass(frozen=True, eq=False)
class Isotropic(ContextFamily):
    """Uniform on the sphere of radius B: the well-conditioned control.

    Sigma = B^2 / d I and ||phi|| = B always, so E||phi||^2 = B E||phi||: no short features for
    information weighting to exploit; every estimator should do about equally well.

    References
    ----------
    Source paper, `ssec:PoP` (well-conditioned distributions, where the price of privacy vanishes fastest).
    """

    name: ClassVar[str] = "isotropic"

    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        return _sphere(m, self.dim, rng, self.bound)

    def second_moment(self) -> np.ndarray:
        return np.eye(self.dim) * (self.bound ** 2 / self.dim)


@dataclass(frozen=True, eq=False)
class Spiky(ContextFamily):
    """The paper's "simple distribution" p_{Sigma,B}: phi = B e_j with probability rho_j / B^2, else 0.

    Sigma = sum_j rho_j e_j e_j^T exactly, and ||phi|| is 0 or B. On this family every private
    estimator pays the lower bound of `prop:lower-linear-cov`; information weighting has nothing to win.

    Parameters
    ----------
    condition : float
        rho_1 / rho_d >= 1 of a geometric spectrum (the dial); ignored when ``spectrum`` is given.
    mass : float
        P(phi != 0) = sum_j rho_j / B^2, in (0, 1] (ignored when ``spectrum`` is given).
    spectrum : array (d,), optional
        The eigenvalues rho_j >= 0 of Sigma directly, with sum_j rho_j <= B^2.
    basis : array (d, d), optional
        Orthonormal eigenvectors e_j as columns (identity by default).

    References
    ----------
    Source paper, `example:ill-condition-p`, `prop:lower-linear-cov`, `prop:lower-linear-cov-JDP`.
    """

    name: ClassVar[str] = "spiky"
    dial: ClassVar[str | None] = "condition"

    condition: float = 100.0
    mass: float = 1.0
    spectrum: Any = None
    basis: Any = None

    def _validate(self) -> None:
        d, b2 = self.dim, self.bound ** 2
        if self.spectrum is None:
            cond = check_real("condition", self.condition, low=1.0)
            mass = check_real("mass", self.mass, low=0.0, high=1.0, low_open=True)
            expo = np.arange(d) / max(d - 1, 1)
            raw = cond ** (-expo)
            rho = raw / raw.sum() * mass * b2
        else:
            rho = check_array("spectrum", self.spectrum, shape=(d,))
            if np.any(rho < 0):
                raise ValueError("spectrum must be non-negative")
            if rho.sum() > b2 * (1 + 1e-12) or rho.sum() <= 0:
                raise ValueError(f"spectrum must have a sum in (0, B^2] = (0, {b2:g}], got {rho.sum():g}")
        basis = np.eye(d) if self.basis is None else _orthonormal_columns("basis", self.basis, d, d)
        object.__setattr__(self, "spectrum", rho)
        object.__setattr__(self, "basis", basis)
        points = basis.T * (self.bound * _SHRINK / np.linalg.norm(basis, axis=0))[:, None]
        object.__setattr__(self, "_points", np.vstack([points, np.zeros((1, d))]))
        cum = np.minimum(np.cumsum(rho / b2), 1.0)
        if abs(cum[-1] - 1.0) < 1e-12:
            cum[-1] = 1.0  # no zero features when the spectrum has full mass
        object.__setattr__(self, "_cum", cum)

    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.random(m)
        j = np.searchsorted(self._cum, u, side="right")  # j == d means phi = 0
        return self._points[j]

    def second_moment(self) -> np.ndarray:
        return (self.basis * self.spectrum) @ self.basis.T

    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        b2 = self.bound ** 2
        pts = self._points
        probs = np.append(self.spectrum / b2, max(0.0, 1.0 - self.spectrum.sum() / b2))
        keep = probs > 0
        return pts[keep], probs[keep]


@dataclass(frozen=True, eq=False)
class RareDirection(ContextFamily):
    """p' = (1 - rho) p + rho delta_{B e}: features fill the (d-1)-dimensional subspace e^perp except
    that the direction e appears (as B e) with probability rho.

    The base p is uniform on the sphere of radius B in e^perp, so
    Sigma = (1 - rho) B^2 / (d - 1) (I - e e^T) + rho B^2 e e^T exactly, and lambda_min = rho B^2 for
    small rho. theta* drawn for this family has half its squared norm on e, so the rare direction matters.

    Parameters
    ----------
    rho : float
        Probability in (0, 1) that an arm's feature is B e (the dial).
    direction : array (d,), optional
        The rare direction e (normalised; the last axis by default).

    References
    ----------
    Source paper, `prop:lower-perturbed-p`, `def:lmin`.
    """

    name: ClassVar[str] = "rare-direction"
    dial: ClassVar[str | None] = "rho"
    min_dim: ClassVar[int] = 2

    rho: float = 0.01
    direction: Any = None

    def _validate(self) -> None:
        object.__setattr__(self, "rho", check_real("rho", self.rho, low=0.0, high=1.0, low_open=True, high_open=True))
        e = np.eye(self.dim)[-1] if self.direction is None else _unit("direction", self.direction, self.dim)
        object.__setattr__(self, "direction", e)
        object.__setattr__(self, "_perp", _complement(e[:, None]))

    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        rows = _sphere_in(m, self._perp, rng, self.bound)
        rare = rng.random(m) < self.rho
        rows[rare] = (self.bound * _SHRINK) * self.direction
        return rows

    def second_moment(self) -> np.ndarray:
        e, b2 = self.direction, self.bound ** 2
        ee = np.outer(e, e)
        return (1 - self.rho) * b2 / (self.dim - 1) * (np.eye(self.dim) - ee) + self.rho * b2 * ee

    def theta_direction(self, rng: Any = None) -> np.ndarray:
        u = _sphere_in(1, self._perp, as_generator(rng))[0]
        return math.sqrt(0.5) * (self.direction + u)


@dataclass(frozen=True, eq=False)
class HeavyTailed(ContextFamily):
    """Short features with a polynomial norm tail reaching B: phi = B s u.

    u is uniform on the unit sphere and s = min(1, scale V) with V Pareto(tail) (P(V > v) = v^{-tail}),
    so most norms are near ``scale * B`` while P(||phi|| > r B) = (scale / r)^tail reaches B (with an
    atom P(s = 1) = scale^tail). Then E||phi||^2 = B^2 E[s^2] is much smaller than
    B E||phi|| = B^2 E[s] (their ratio shrinks with ``scale``: 0.18 at the default tail 2 and scale 0.05,
    0.03 at scale 0.005), the regime where perturbing sufficient statistics calibrated to B wastes its
    noise and the information-weighted estimators should win.
    Sigma = B^2 E[s^2] / d I exactly (see :func:`clipped_pareto_moment`).

    Parameters
    ----------
    tail : float
        Pareto tail index > 0 (smaller = heavier tail).
    scale : float
        Typical norm as a fraction of B, in (0, 1] (the dial: smaller = harder).

    References
    ----------
    Source paper, `ssec:OLS`, `prop:OLS-fail-local-gen`, `lem:OLS-fail` (in d = 1, mechanisms smooth in x
    pay 1 / E[x^2] where the optimum pays 1 / E|x|; the local lower bound assumes E x = 0).
    """

    name: ClassVar[str] = "heavy-tailed"
    dial: ClassVar[str | None] = "scale"

    tail: float = 2.0
    scale: float = 0.05

    def _validate(self) -> None:
        object.__setattr__(self, "tail", check_positive("tail", self.tail))
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, high=1.0, low_open=True))

    def radius_moment(self, k: float) -> float:
        """E[s^k] of the heavy-tailed norm fraction s (of ||phi|| / B; of the e-features' for
        :class:`HeavyTailedDirection`), exactly."""
        return clipped_pareto_moment(k, self.tail, self.scale)

    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        g = rng.standard_normal((m, self.dim))
        return _scale_rows(g, _clipped_pareto(m, self.tail, self.scale, rng) * self.bound)

    def second_moment(self) -> np.ndarray:
        return np.eye(self.dim) * (self.bound ** 2 * self.radius_moment(2) / self.dim)


@dataclass(frozen=True, eq=False)
class HeavyTailedDirection(HeavyTailed):
    """Only one direction has short features: with probability ``mix`` phi = +-B s e with s heavy-tailed
    (as in :class:`HeavyTailed`), otherwise phi = B u with u uniform on the unit sphere of e^perp.

    Along e, E<phi, e>^2 = mix B^2 E[s^2] is much smaller than B E|<phi, e>| = mix B^2 E[s], so only
    that direction is in the information-weighting regime; the others are well conditioned.
    Sigma = (1 - mix) B^2 / (d - 1) (I - e e^T) + mix B^2 E[s^2] e e^T exactly. theta* drawn for this
    family has half its squared norm on e.

    Parameters
    ----------
    tail : float
        Pareto tail index > 0.
    scale : float
        Typical norm of the e-features as a fraction of B, in (0, 1] (the dial).
    mix : float
        Probability in (0, 1) of an e-feature.
    direction : array (d,), optional
        The direction e (normalised; the last axis by default).

    References
    ----------
    Source paper, `ssec:OLS`, `prop:OLS-fail-local-gen`, `lem:U-L1-covariance`.
    """

    name: ClassVar[str] = "heavy-tailed-direction"
    min_dim: ClassVar[int] = 2

    mix: float = 0.5
    direction: Any = None

    def _validate(self) -> None:
        super()._validate()
        object.__setattr__(self, "mix", check_real("mix", self.mix, low=0.0, high=1.0, low_open=True,
                                                   high_open=True))
        e = np.eye(self.dim)[-1] if self.direction is None else _unit("direction", self.direction, self.dim)
        object.__setattr__(self, "direction", e)
        object.__setattr__(self, "_perp", _complement(e[:, None]))

    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        rows = _sphere_in(m, self._perp, rng, self.bound)
        u = rng.random(m)
        on_e = u < self.mix
        sign = np.where(u < 0.5 * self.mix, -1.0, 1.0)  # given on_e, each sign has probability 1/2
        s = _clipped_pareto(m, self.tail, self.scale, rng)
        coef = np.where(on_e, (self.bound * _SHRINK) * sign * s, 0.0)
        rows *= (~on_e).astype(np.float64)[:, None]  # in-place passes beat a boolean-mask scatter here
        axis = _axes(self.direction[:, None])
        if axis is None:
            rows += np.multiply.outer(coef, self.direction)
        else:  # e is a coordinate axis, where every e-perp row is exactly 0
            rows[:, axis[0]] = coef
        return rows

    def second_moment(self) -> np.ndarray:
        e, b2 = self.direction, self.bound ** 2
        ee = np.outer(e, e)
        return ((1 - self.mix) * b2 / (self.dim - 1) * (np.eye(self.dim) - ee)
                + self.mix * b2 * self.radius_moment(2) * ee)

    def theta_direction(self, rng: Any = None) -> np.ndarray:
        u = _sphere_in(1, self._perp, as_generator(rng))[0]
        return math.sqrt(0.5) * (self.direction + u)


@dataclass(frozen=True, eq=False)
class LowRank(ContextFamily):
    """An r-dimensional subspace plus a small leak: phi = B (sqrt(1 - eta^2) A u + eta w).

    A (d, r) has orthonormal columns, u is uniform on the unit sphere of R^r and w uniform on the unit
    sphere of range(A)^perp, so ||phi|| = B and
    Sigma = B^2 (1 - eta^2) / r A A^T + B^2 eta^2 / (d - r) (I - A A^T) exactly.

    Parameters
    ----------
    rank : int
        r in [1, d - 1] (default max(1, d // 5)).
    noise_level : float
        eta in [0, 1): the share of the norm outside the subspace (the dial: smaller = worse conditioned).
    basis : array (d, r), optional
        A (the first r axes by default).

    References
    ----------
    Source paper, `def:lmin` (low explorability: directions that are almost never observed).
    """

    name: ClassVar[str] = "low-rank"
    dial: ClassVar[str | None] = "noise_level"
    min_dim: ClassVar[int] = 2

    rank: Any = None
    noise_level: float = 0.1
    basis: Any = None

    def _validate(self) -> None:
        r = max(1, self.dim // 5) if self.rank is None else check_int("rank", self.rank, low=1, high=self.dim - 1)
        object.__setattr__(self, "rank", r)
        object.__setattr__(self, "noise_level", check_real("noise_level", self.noise_level, low=0.0, high=1.0,
                                                           high_open=True))
        a = np.eye(self.dim)[:, :r] if self.basis is None else _orthonormal_columns("basis", self.basis, self.dim, r)
        object.__setattr__(self, "basis", a)
        frame = np.hstack([a, _complement(a)])
        object.__setattr__(self, "_frame", None if np.array_equal(frame, np.eye(self.dim)) else frame)

    def _sample_rows(self, m: int, rng: np.random.Generator) -> np.ndarray:
        # one Gaussian per coordinate of the frame [A | A_perp]: the first r scaled to a sphere of radius
        # B sqrt(1 - eta^2) in range(A), the rest to a sphere of radius B eta in its complement
        eta, r = self.noise_level, self.rank
        g = rng.standard_normal((m, self.dim))
        _scale_rows(g[:, :r], self.bound * math.sqrt(1.0 - eta ** 2))
        _scale_rows(g[:, r:], self.bound * eta)
        return g if self._frame is None else g @ self._frame.T

    def second_moment(self) -> np.ndarray:
        eta, b2, r, d = self.noise_level, self.bound ** 2, self.rank, self.dim
        proj = self.basis @ self.basis.T
        return b2 * (1 - eta ** 2) / r * proj + b2 * eta ** 2 / (d - r) * (np.eye(d) - proj)


def _describe_family(entry: Entry) -> dict:
    """The family's own parameters with their defaults, and its conditioning dial."""
    cls = entry.obj
    return dict(dial=cls.dial, hyperparameters={
        f.name: dict(default=None if f.default is MISSING else f.default, allowed=None)
        for f in fields(cls) if f.name in cls.parameter_names()})


FAMILY_REGISTRY = Registry("family", "privbandit.families",
                           subclass_check("family", ContextFamily, "privbandit.envs.ContextFamily"),
                           describe=_describe_family)
"""The context-family registry: name -> ContextFamily subclass (``FAMILY_REGISTRY.describe(name)``)."""


def register_family(cls: type[ContextFamily]) -> type[ContextFamily]:
    """Make the ContextFamily subclass ``cls`` available by its ``name`` (:func:`make_family`, the envs'
    ``family=``); usable as a class decorator.

    Parameters
    ----------
    cls : type
        A ContextFamily subclass with a ``name``.

    Raises
    ------
    ValueError
        If ``cls`` has no ``name`` or another class is registered under it.
    """
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no name")
    return FAMILY_REGISTRY.register(cls.name, cls)


for _cls in (Isotropic, Spiky, RareDirection, HeavyTailed, HeavyTailedDirection, LowRank):
    register_family(_cls)

FAMILIES: Mapping[str, type[ContextFamily]] = FAMILY_REGISTRY.view()
"""The registered context families, name -> class (read-only; add one with :func:`register_family`)."""


def family_names() -> tuple[str, ...]:
    """Names accepted by :func:`make_family`: the registered families, then the installed
    ``privbandit.families`` entry points."""
    return FAMILY_REGISTRY.names()


def family_class(name: str) -> type[ContextFamily]:
    """The family class named ``name``, loading it first if it is an import path ``"pkg.module:Class"``
    or a ``privbandit.families`` entry point (:mod:`privbandit.registry`).

    Parameters
    ----------
    name : str
        A registered family, an import path ``"pkg.module:Class"`` or an entry point's name.

    Raises
    ------
    ValueError
        For an unknown name (:class:`~privbandit.registry.PluginError` for a plugin that fails to load).
    """
    try:
        return FAMILY_REGISTRY.get(name).obj
    except PluginError:
        raise
    except ValueError:
        raise ValueError(f"family must be one of {family_names()} or an import path 'pkg.module:Class', "
                         f"got {name!r}") from None


def make_family(name: str, *, dim: int, n_arms: int = 1, bound: float = 1.0, **params: Any) -> ContextFamily:
    """Build a context family by name.

    Parameters
    ----------
    name : str
        One of :data:`FAMILIES` ("isotropic", "spiky", "rare-direction", "heavy-tailed",
        "heavy-tailed-direction", "low-rank").
    dim, n_arms, bound : int, int, float
        Feature dimension d, number of arms K, feature bound B.
    **params
        The family's own parameters (see each class); unknown names raise ValueError.
    """
    cls = family_class(name)
    allowed = cls.parameter_names()
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for family {name!r}; allowed: {allowed}")
    return cls(dim=dim, n_arms=n_arms, bound=bound, **params)
