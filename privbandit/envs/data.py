"""Real classification data as a context source: the cbify construction behind ``PrivCBify-v0``.

:func:`cbify_source` prepares a classification dataset (X, y) once, before the run: the columns standardised
with statistics of the whole dataset (optionally projected onto principal directions), the rows scaled by the
public clipping rule (:func:`scale_rows`), and theta* a ridge fit of the signed one-hot labels scaled into the
model's range. :class:`DataContexts` (reward ``"linear-fit"``) and :class:`LabelContexts` (reward ``"label"``)
then draw one row per round with replacement, so any horizon works. The env card of
:class:`~privbandit.envs.PrivCBifyEnv` describes each step, the feature maps and the two reward models.

References
----------
Source paper, `sec:intro-cb`, `def:linear-model`, `example:ill-condition-p` (real features: constant
pixels, rare directions, spread norms).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .._validation import as_generator, check_array, check_bool, check_choice, check_int, check_positive, check_real
from .features import FEATURE_MAPS, DisjointFeatures, make_feature_map

__all__ = ["DATASETS", "DATA_EXTRA", "REWARD_MODELS", "CBifySource", "DataContexts", "LabelContexts",
           "cbify_source", "load_dataset", "scale_rows"]

DATASETS = ("digits", "wine", "breast_cancer", "iris")
"""The datasets that ship inside scikit-learn (``sklearn.datasets.load_<name>``)."""

DATA_EXTRA = 'pip install "privbandit[data]"'
"""How to install the optional dependency of the named datasets (scikit-learn)."""

REWARD_MODELS = ("label", "linear-fit")
"""The reward models of ``PrivCBify-v0``."""

_SHRINK = 1.0 - 1e-12


@functools.cache
def _load(name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        from sklearn import datasets
    except ImportError:
        raise ImportError(f"dataset={name!r} is loaded from scikit-learn, which is not installed; install the "
                          f"optional extra: {DATA_EXTRA} (or pass your own arrays X, y)") from None
    bunch = getattr(datasets, f"load_{name}")()
    x = np.asarray(bunch.data, dtype=np.float64)
    y = np.asarray(bunch.target)
    x.setflags(write=False)
    y.setflags(write=False)
    return x, y


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, p), y (n,)) of a dataset that ships inside scikit-learn (read-only arrays, loaded once).

    Parameters
    ----------
    name : str
        A dataset of ``sklearn.datasets`` (e.g. ``"digits"``).

    Raises
    ------
    ImportError
        If scikit-learn is missing (``pip install "privbandit[data]"``).
    """
    return _load(check_choice("dataset", name, DATASETS))


def check_data(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Check user arrays: X (n, p) finite, y (n,) with at least 2 classes; returns (X, labels 0..K-1, K)."""
    xa = check_array("X", x, ndim=2)
    n, p = xa.shape
    if n < 2 or p < 1:
        raise ValueError(f"X must have at least 2 rows and 1 column, got shape {xa.shape}")
    ya = np.asarray(y)
    if ya.shape != (n,):
        raise ValueError(f"y must have shape ({n},) (one label per row of X), got {ya.shape}")
    if ya.dtype.kind == "f" and not np.all(np.isfinite(ya)):
        raise ValueError("y must contain no NaN or inf labels")
    if ya.dtype.kind not in "biufUSO":
        raise ValueError(f"y must hold class labels (integers or strings), got dtype {ya.dtype}")
    classes, labels = np.unique(ya, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"y must contain at least 2 classes (the arms), got {classes.size}")
    return xa, labels.reshape(n).astype(np.int64), int(classes.size)


def _principal_axes(z: np.ndarray, k: int) -> np.ndarray:
    """The top k right singular vectors of z as columns (p, k), each with its largest entry positive."""
    _, _, vt = np.linalg.svd(z, full_matrices=False)
    v = vt[:k].T
    signs = np.sign(v[np.argmax(np.abs(v), axis=0), np.arange(k)])
    return v * np.where(signs == 0, 1.0, signs)


def scale_rows(z: np.ndarray, bound: float, clip_quantile: float) -> tuple[np.ndarray, float, int]:
    """The public clipping rule: rows times B / r_q (r_q the q-quantile of the norms), then the rows longer
    than B projected onto the ball of radius B. Returns (rows, the factor B / r_q, rows clipped)."""
    norms = np.linalg.norm(z, axis=1)
    r_q = float(np.quantile(norms, clip_quantile))
    if r_q <= 0.0:
        raise ValueError(f"the {clip_quantile:g}-quantile of the standardised row norms is 0 (the rows are "
                         "constant); raise clip_quantile or pass data that varies")
    factor = bound * _SHRINK / r_q
    rows = z * factor
    norms *= factor
    over = norms > bound * _SHRINK
    rows[over] *= (bound * _SHRINK / norms[over])[:, None]
    return rows, factor, int(over.sum())


@dataclass(frozen=True, eq=False)
class DataContexts:
    """Rows of a dataset drawn with replacement: the context source of ``PrivCBify-v0`` (reward "linear-fit").

    Parameters
    ----------
    rows : ndarray (n, p)
        The scaled rows, every norm <= ``bound``.
    labels : ndarray (n,)
        Class indices in [0, K).
    n_classes : int
        K, the number of arms.
    bound : float
        B.
    per_arm : bool
        False: one context x per round (shape (n, 1, p), for the "disjoint" map); True: the K per-arm
        vectors e_a (x) x (shape (n, K, K p), for the "shared" map).
    """

    name: ClassVar[str] = "data"

    rows: np.ndarray
    labels: np.ndarray
    n_classes: int
    bound: float
    per_arm: bool = False

    @property
    def n_rows(self) -> int:
        """Rows n of the dataset."""
        return self.rows.shape[0]

    @property
    def dim(self) -> int:
        """Context dimension: p (disjoint) or K p (shared)."""
        p = self.rows.shape[1]
        return self.n_classes * p if self.per_arm else p

    @property
    def n_arms(self) -> int:
        """Vectors per round's context: 1 (disjoint) or K (shared)."""
        return self.n_classes if self.per_arm else 1

    def _contexts(self, x: np.ndarray) -> np.ndarray:
        if not self.per_arm:
            return x[:, None, :]
        k = self.n_classes
        return DisjointFeatures(n_arms=k, dim=k * x.shape[1]).features(x[:, None, :])  # the K vectors e_a (x) x

    def _draw(self, n: int, rng: Any) -> np.ndarray:
        return as_generator(rng).integers(0, self.n_rows, size=check_int("n", n, low=0))

    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        """n rounds' contexts (n, n_arms, dim): rows drawn uniformly with replacement."""
        return self._contexts(self.rows[self._draw(n, rng)])

    def second_moment(self) -> np.ndarray:
        """Exact uniform-policy E[x x^T] (p, p) of the rows, or, per arm, (1/K) sum_a E[x_a x_a^T] (Kp, Kp)."""
        m = self.rows.T @ self.rows / self.n_rows
        m = 0.5 * (m + m.T)
        return np.kron(np.eye(self.n_classes), m) / self.n_classes if self.per_arm else m

    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows with equal probabilities 1/n (per arm: the K n vectors e_a (x) x, each 1/(K n))."""
        n = self.n_rows
        if not self.per_arm:
            return self.rows.copy(), np.full(n, 1.0 / n)
        pts = self._contexts(self.rows).reshape(n * self.n_classes, -1)
        return pts, np.full(pts.shape[0], 1.0 / pts.shape[0])


@dataclass(frozen=True, eq=False)
class LabelContexts(DataContexts):
    """As :class:`DataContexts`, but the rounds carry the cbify means: +1 for the drawn row's class, -1 else."""

    def sample_with_means(self, n: int, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(contexts (n, n_arms, dim), expected rewards (n, K)) of n rows drawn with replacement."""
        idx = self._draw(n, rng)
        means = np.full((idx.size, self.n_classes), -1.0)
        means[np.arange(idx.size), self.labels[idx]] = 1.0
        return self._contexts(self.rows[idx]), means


class CBifySource(NamedTuple):
    """What ``PrivCBify-v0`` is built from (see :func:`cbify_source`).

    Attributes
    ----------
    family : DataContexts
        The context source (a :class:`LabelContexts` for reward "label").
    theta : ndarray (K p,)
        theta*: the ridge fit scaled into the model's range (the reference linear model under "label").
    center, spread : ndarray (p0,)
        The column means and standard deviations used to standardise (spread 1 for constant columns).
    components : ndarray (p0, p) or None
        The principal axes projected onto (``n_components``), or None.
    factor : float
        The common scale factor B / r_q applied after standardising.
    n_clipped : int
        Rows projected onto the ball of radius B by the clipping rule.
    fit_scale : float
        The factor the ridge fit was divided by to enter the model's range (>= 1).
    """

    family: DataContexts
    theta: np.ndarray
    center: np.ndarray
    spread: np.ndarray
    components: np.ndarray | None
    factor: float
    n_clipped: int
    fit_scale: float


def cbify_source(*, dataset: str | None = None, X: Any = None, y: Any = None, feature_map: str = "disjoint",
                 reward: str = "label", bound: float = 1.0, standardize: bool = True,
                 n_components: int | None = None, clip_quantile: float = 1.0, ridge: float = 1.0) -> CBifySource:
    """Build the context source and theta* of ``PrivCBify-v0``.

    Parameters
    ----------
    dataset, X, y, feature_map, reward, bound, standardize, n_components, clip_quantile, ridge
        The arguments of :class:`~privbandit.envs.PrivCBifyEnv`, whose env card describes each one and each step.
    """
    check_choice("feature_map", feature_map, tuple(FEATURE_MAPS))
    check_choice("reward", reward, REWARD_MODELS)
    bound = check_positive("bound", bound)
    q = check_real("clip_quantile", clip_quantile, low=0.0, high=1.0, low_open=True)
    lam = check_positive("ridge", ridge)
    check_bool("standardize", standardize)
    if X is None and y is None:
        xa, labels, k = check_data(*load_dataset("digits" if dataset is None else dataset))
    elif X is None or y is None:
        raise ValueError("pass both X and y (a user dataset), or neither (a named dataset)")
    elif dataset is not None:
        raise ValueError(f"pass either dataset={dataset!r} or arrays X, y, not both")
    else:
        xa, labels, k = check_data(X, y)

    p0 = xa.shape[1]
    center = xa.mean(axis=0) if standardize else np.zeros(p0)
    spread = xa.std(axis=0) if standardize else np.ones(p0)
    spread = np.where(spread > 0, spread, 1.0)
    z = (xa - center) / spread
    components = None
    if n_components is not None:
        components = _principal_axes(z, check_int("n_components", n_components, low=1, high=p0))
        z = z @ components
    rows, factor, n_clipped = scale_rows(z, bound, q)
    rows.setflags(write=False)

    # theta*: ridge fit of the signed one-hot labels (one block per class), scaled into the model's range
    p = rows.shape[1]
    targets = np.where(labels[:, None] == np.arange(k), 1.0, -1.0)
    blocks = np.linalg.solve(rows.T @ rows + lam * np.eye(p), rows.T @ targets)  # (p, K)
    fit = np.ascontiguousarray(blocks.T).reshape(-1)
    fmap = make_feature_map(feature_map, n_arms=k, dim=k * p)
    fit_scale = max(1.0, float(np.linalg.norm(fit)), fmap.predictor_bound(fit, bound)) / _SHRINK
    cls = LabelContexts if reward == "label" else DataContexts
    family = cls(rows, labels, k, bound, per_arm=feature_map == "shared")
    return CBifySource(family, fit / fit_scale, center, spread, components, factor, n_clipped, fit_scale)
