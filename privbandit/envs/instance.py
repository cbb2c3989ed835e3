"""The bandit instance (its options, how it is built) and its stream of rounds, shared by the Env and its vector twin.

One round: contexts x ~ p (a context family), features Phi = phi(x, .) (K, d), expected rewards
m_a = nu(<phi(x, a), theta*>), drawn rewards r_a in [-1, 1] with E r_a = m_a for ALL arms (common
random numbers), the best arm a* = argmax_a m_a and the pseudo-regret m_{a*} - m_a of an action.

Randomness is drawn in fixed-size blocks of rounds (:data:`BLOCK_SIZE`) from the env's generator:
first the block's contexts (``family.sample``), then its rewards (``noise.sample``). A
:class:`RoundStream` serves rounds from the current block, so how a consumer splits the rounds
(``step`` one by one, ``sample_batch`` in chunks of any size) never changes the numbers.

References
----------
Source paper, `sec:intro-cb` (regret, f*(x, a) = nu(<phi(x, a), theta*>)), `def:GLM`, `def:linear-model`.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np

from .._validation import check_array, check_int, check_positive
from ..links import Link, identity_link, make_link
from .contexts import FAMILIES, Isotropic, family_class, make_family
from .features import FeatureMap, make_feature_map
from .noise import RewardNoise, make_noise

__all__ = ["BLOCK_SIZE", "BanditInstance", "Block", "InstanceOptions", "RoundBatch", "RoundStream", "build_instance",
           "check_action", "draw_block", "expected_rewards"]

BLOCK_SIZE = 1024
"""Rounds drawn per block from the env's generator (fixes the random stream; not a tuning knob)."""

_NORM_SLACK = 1e-9
_BUILT_IN = frozenset(FAMILIES.values())


class RoundBatch(NamedTuple):
    """n consecutive rounds of a bandit.

    Attributes
    ----------
    features : ndarray (n, K, d)
        The features of every arm (the observations).
    rewards : ndarray (n, K)
        The drawn reward of every arm, in [-1, 1].
    expected_rewards : ndarray (n, K)
        nu(<phi, theta*>) of every arm.
    """

    features: np.ndarray
    rewards: np.ndarray
    expected_rewards: np.ndarray

    @property
    def optimal_actions(self) -> np.ndarray:
        """argmax_a of the expected rewards, shape (n,) (first index on ties)."""
        return np.argmax(self.expected_rewards, axis=-1)

    def regret(self, actions: Any) -> np.ndarray:
        """Pseudo-regret max_a m_a - m_{a_t} of the actions (n,), shape (n,)."""
        means = self.expected_rewards
        return means.max(axis=-1) - means[np.arange(means.shape[0]), np.asarray(actions)]

    def rewards_of(self, actions: Any) -> np.ndarray:
        """The drawn rewards of the chosen actions (n,)."""
        acts = np.asarray(actions)
        return self.rewards[np.arange(self.rewards.shape[0]), acts]


class Block(NamedTuple):
    """A block of rounds with the per-round best value and optimal action precomputed."""

    features: np.ndarray
    rewards: np.ndarray
    expected_rewards: np.ndarray
    best: np.ndarray
    optimal: np.ndarray


@dataclass(frozen=True, eq=False)
class BanditInstance:
    """Everything fixed about a bandit instance (built by :func:`build_instance`).

    Attributes
    ----------
    family : ContextFamily or object with ``sample(n, rng)``
        Draws contexts of shape (n, *feature_map.context_shape).
    feature_map : FeatureMap
        Contexts -> features (n, K, d).
    theta : ndarray (d,)
        theta*, with ||theta*|| <= 1.
    link : Link
        nu (identity for linear rewards).
    noise : RewardNoise
        Reward noise.
    bound : float
        Feature bound B.
    """

    family: Any
    feature_map: FeatureMap
    theta: np.ndarray
    link: Link
    noise: RewardNoise
    bound: float

    @property
    def n_arms(self) -> int:
        """K."""
        return self.feature_map.n_arms

    @property
    def dim(self) -> int:
        """d."""
        return self.feature_map.dim

    @property
    def predictor_bound(self) -> float:
        """sup |<phi, theta*>| over features of norm <= B."""
        return self.feature_map.predictor_bound(self.theta, self.bound)


def expected_rewards(instance: BanditInstance, contexts: np.ndarray) -> np.ndarray:
    """nu(<phi(x, a), theta*>) of every round and arm, shape (n, K)."""
    z = instance.feature_map.predictor(contexts, instance.theta)
    return z if instance.link.is_identity else np.asarray(instance.link(z), dtype=np.float64)


def _check_contexts(instance: BanditInstance, contexts: Any, n: int) -> np.ndarray:
    """Check a foreign family's output: shape, finiteness, norms <= B; returns a private float64 copy."""
    shape = (n, *instance.feature_map.context_shape)
    x = np.array(contexts, dtype=np.float64)
    if x.shape != shape:
        raise ValueError(f"family.sample({n}, rng) must return an array of shape {shape}, got {x.shape}")
    sq = np.einsum("...i,...i->...", x, x)
    if not np.all(sq <= (instance.bound * (1 + _NORM_SLACK)) ** 2):  # also catches NaN
        raise ValueError(f"family.sample returned features with norm > bound B = {instance.bound:g} (or NaN)")
    return np.clip(x, -instance.bound, instance.bound, out=x)


def _check_means(instance: BanditInstance, means: Any, n: int) -> np.ndarray:
    """Check a family's expected rewards: shape (n, K), values in [-1, 1]; returns a float64 array."""
    m = np.asarray(means, dtype=np.float64)
    if m.shape != (n, instance.n_arms):
        raise ValueError(f"family.sample_with_means({n}, rng) must return means of shape {(n, instance.n_arms)}, "
                         f"got {m.shape}")
    if not np.all(np.abs(m) <= 1.0):  # also catches NaN
        raise ValueError("family.sample_with_means returned expected rewards outside [-1, 1] (or NaN)")
    return m


def draw_block(instance: BanditInstance, n: int, rng: np.random.Generator) -> Block:
    """Draw n rounds: contexts first, then the rewards of all arms, from ``rng``.

    The six built-in families guarantee ||phi|| <= B (hence every coordinate in [-B, B]) by
    construction; any other family's output (subclasses included) is checked and clipped coordinate-wise.
    A family with a ``sample_with_means(n, rng) -> (contexts, means (n, K))`` method supplies the expected
    rewards itself (rewards that are not nu(<phi, theta*>), e.g. the class labels of ``PrivCBify-v0``).
    """
    with_means = getattr(instance.family, "sample_with_means", None)
    if with_means is None:
        contexts, means = instance.family.sample(n, rng), None
    else:
        contexts, means = with_means(n, rng)
    if type(instance.family) not in _BUILT_IN:
        contexts = _check_contexts(instance, contexts, n)
    feats = instance.feature_map.features(contexts)
    means = expected_rewards(instance, contexts) if means is None else _check_means(instance, means, n)
    rewards = instance.noise.sample(means, rng)
    opt = np.argmax(means, axis=-1)
    best = np.take_along_axis(means, opt[:, None], axis=1)[:, 0]
    return Block(feats, rewards, means, best, opt)


def check_action(action: Any, n_arms: int) -> int:
    """An action as an int in [0, K), or a clear error (TypeError for non-integers)."""
    if (isinstance(action, numbers.Integral) and not isinstance(action, (bool, np.bool_))
            or isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer)):
        a = int(action)
    else:
        raise TypeError(f"action must be an integer arm index in [0, {n_arms - 1}], got {action!r} "
                        f"({type(action).__name__})")
    if not 0 <= a < n_arms:
        raise ValueError(f"action must be an arm index in [0, {n_arms - 1}], got {a}")
    return a


class RoundStream:
    """Rounds of ``instance`` served from blocks of :data:`BLOCK_SIZE` rounds drawn one at a time from ``rng``
    (the env's ``np_random``; see the module docstring)."""

    def __init__(self, instance: BanditInstance, rng: np.random.Generator) -> None:
        self.instance = instance
        self.rng = rng
        self.block = draw_block(instance, BLOCK_SIZE, rng)
        self.pos = 0

    def _ensure(self) -> None:
        if self.pos >= BLOCK_SIZE:
            self.block = draw_block(self.instance, BLOCK_SIZE, self.rng)
            self.pos = 0

    def current_features(self) -> np.ndarray:
        """A copy of the current round's features (K, d)."""
        self._ensure()
        return self.block.features[self.pos].copy()

    def current_round(self) -> tuple[np.ndarray, int]:
        """The current round's expected rewards (K,) (a copy) and its optimal arm, without consuming it."""
        self._ensure()
        return self.block.expected_rewards[self.pos].copy(), int(self.block.optimal[self.pos])

    def play(self, action: int) -> tuple[float, np.ndarray, int, float]:
        """Consume the current round: (reward of action, expected rewards (K,), optimal action, regret)."""
        self._ensure()
        i, blk = self.pos, self.block
        means = blk.expected_rewards[i]
        out = (float(blk.rewards[i, action]), means.copy(), int(blk.optimal[i]), float(blk.best[i] - means[action]))
        self.pos = i + 1
        return out

    def skip(self) -> None:
        """Drop the current round."""
        self._ensure()
        self.pos += 1

    def take(self, n: int) -> RoundBatch:
        """Consume the next n rounds (starting with the current one) as copies."""
        inst = self.instance
        feats = np.empty((n, inst.n_arms, inst.dim))
        rewards = np.empty((n, inst.n_arms))
        means = np.empty((n, inst.n_arms))
        done = 0
        while done < n:
            self._ensure()
            m = min(n - done, BLOCK_SIZE - self.pos)
            sl = slice(self.pos, self.pos + m)
            feats[done:done + m] = self.block.features[sl]
            rewards[done:done + m] = self.block.rewards[sl]
            means[done:done + m] = self.block.expected_rewards[sl]
            done += m
            self.pos += m
        return RoundBatch(feats, rewards, means)


def _check_link(link: Link, zmax: float) -> None:
    """Check on a grid of predictors |z| <= zmax that nu maps into [-1, 1] with mu <= nu' <= L."""
    z = np.linspace(-zmax, zmax, 257)
    vals = np.asarray(link(z), dtype=float)
    der = np.asarray(link.derivative(z), dtype=float)
    if vals.shape != z.shape or der.shape != z.shape:
        raise ValueError("link.fn and link.derivative must be vectorised (same shape out as in)")
    if not np.all(np.isfinite(vals)) or np.any(np.abs(vals) > 1 + 1e-12):
        raise ValueError(f"link {link.name!r} must map the predictors |z| <= {zmax:g} into [-1, 1] "
                         f"(got values in [{np.nanmin(vals):g}, {np.nanmax(vals):g}]); shrink theta or the bound")
    tol = 1e-9
    if np.any(der < link.mu * (1 - tol)) or np.any(der > link.lipschitz * (1 + tol)):
        raise ValueError(f"link {link.name!r}: its derivative on |z| <= {zmax:g} ranges over "
                         f"[{der.min():g}, {der.max():g}], outside the declared [mu, lipschitz] = "
                         f"[{link.mu:g}, {link.lipschitz:g}]")


@dataclass(frozen=True, eq=False)
class InstanceOptions:
    """The keyword arguments that fix a bandit instance, shared by every env constructor and
    :func:`build_instance` (``## Arguments`` of the env cards of :class:`~privbandit.envs.PrivLinCBEnv` and, for the
    link, :class:`~privbandit.envs.PrivGLMCBEnv` describe each one).

    The scalars are checked here; the family, feature map, theta* and link are checked when
    :func:`build_instance` builds them, since each check needs the others (e.g. the link's range needs theta*).
    """

    n_arms: int = 10
    dim: int = 10
    family: Any = "heavy-tailed"
    conditioning: float | None = None
    family_kwargs: dict | None = None
    feature_map: Any = "shared"
    theta: Any = None
    instance_seed: int | None = 0
    bound: float = 1.0
    link: Any = "identity"
    link_kwargs: dict | None = None
    noise: Any = "rademacher"
    noise_scale: float = 0.5

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "n_arms", check_int("n_arms", self.n_arms, low=1))
        set_(self, "dim", check_int("dim", self.dim, low=1))
        set_(self, "bound", check_positive("bound", self.bound))
        set_(self, "noise_scale", check_positive("noise_scale", self.noise_scale))
        if self.theta is None and self.instance_seed is not None:
            set_(self, "instance_seed", check_int("instance_seed", self.instance_seed, low=0))
        for name in ("family_kwargs", "link_kwargs"):
            value = getattr(self, name)
            if not isinstance(value, (dict, type(None))):
                raise TypeError(f"{name} must be a dict or None, got {type(value).__name__}")

    @classmethod
    def from_kwargs(cls, owner: str, kwargs: dict[str, Any]) -> InstanceOptions:
        """The options of ``kwargs``, or a TypeError naming ``owner`` and the allowed keywords."""
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(set(kwargs) - set(allowed))
        if unknown:
            raise TypeError(f"{owner} got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
                            f"the instance's keywords are {', '.join(allowed)}")
        return cls(**kwargs)


def build_instance(options: InstanceOptions) -> BanditInstance:
    """Build the instance of ``options``.

    theta* is taken from ``theta`` (||theta|| <= 1) or drawn with ``numpy.random.default_rng(instance_seed)``
    in the family's suggested direction with norm min(1, 1/B). For the identity link theta* must satisfy
    sup |<phi, theta*>| <= 1 over ||phi|| <= B (B ||theta*|| <= 1 for shared features) so that mean rewards
    lie in [-1, 1]; any link is checked to map the predictor range into [-1, 1] with mu <= nu' <= L.

    Parameters
    ----------
    options : InstanceOptions
        The instance's keyword arguments (see its fields).
    """
    o = options
    fmap = make_feature_map(o.feature_map, n_arms=o.n_arms, dim=o.dim)
    fam = _context_family(o.family, o.conditioning, o.family_kwargs, fmap, o.bound)
    th = _theta_star(o.theta, o.instance_seed, fam, fmap, o.dim, o.bound)
    zmax = fmap.predictor_bound(th, o.bound)
    lk = _reward_link(o.link, o.link_kwargs, zmax, o.bound)
    return BanditInstance(fam, fmap, th, lk, make_noise(o.noise, scale=o.noise_scale), o.bound)


def _context_family(family: Any, conditioning: Any, family_kwargs: Any, fmap: FeatureMap, bound: float) -> Any:
    """The context family of :func:`build_instance`: a named family built with its dial and parameters,
    or a user's family object checked against the feature map's context shape and the bound B."""
    ctx_arms, ctx_dim = fmap.context_shape
    if isinstance(family, str):
        cls = family_class(family)                      # a registered name, an import path or an entry point
        params = {} if family_kwargs is None else dict(family_kwargs)
        names = {key: f"family_kwargs[{key!r}]" for key in params}
        if conditioning is not None:
            dial = cls.dial
            if dial is None:
                raise ValueError(f"family {family!r} has no conditioning parameter; pass conditioning=None")
            if dial in params:
                raise ValueError(f"pass the {family!r} dial {dial!r} either as conditioning or in family_kwargs, "
                                 "not both")
            params[dial] = conditioning
            names[dial] = f"conditioning (the {family!r} family's {dial})"
        if fmap.context_shape != (fmap.n_arms, fmap.dim):
            names["dim"] = f"dim / n_arms (the context dimension of the {fmap.name!r} feature map)"
        with _as_passed(names):
            return make_family(family, dim=ctx_dim, n_arms=ctx_arms, bound=bound, **params)
    if not callable(getattr(family, "sample", None)):
        raise TypeError(f"family must be a name in {tuple(FAMILIES)} or an object with sample(n, rng), "
                        f"got {type(family).__name__}")
    if conditioning is not None or family_kwargs:
        raise ValueError("conditioning and family_kwargs apply to named families only; configure the family "
                         "object itself")
    for attr, want in (("dim", ctx_dim), ("n_arms", ctx_arms)):
        have = getattr(family, attr, want)
        if have != want:
            raise ValueError(f"family.{attr} = {have} but the {fmap.name!r} feature map needs {want} "
                             f"(contexts of shape (n, {ctx_arms}, {ctx_dim}))")
    fam_bound = getattr(family, "bound", bound)
    if fam_bound > bound * (1 + _NORM_SLACK):
        raise ValueError(f"family.bound = {fam_bound:g} exceeds the env's feature bound B = {bound:g}")
    return family


@contextmanager
def _as_passed(names: dict[str, str]) -> Iterator[None]:
    """Re-raise a ValueError or TypeError whose message starts with an inner parameter name (the
    convention of :mod:`privbandit._validation`: ``"rho must be ..."``) under the name the env's caller
    wrote (``names``: inner -> outer, e.g. ``{"rho": "conditioning"}``); other errors pass unchanged."""
    try:
        yield
    except (ValueError, TypeError) as err:
        msg = str(err)
        for inner, outer in names.items():
            if type(err) in (ValueError, TypeError) and msg.startswith(f"{inner} ") and outer != inner:
                raise type(err)(outer + msg[len(inner):]) from err
        raise


def _theta_star(theta: Any, instance_seed: Any, fam: Any, fmap: FeatureMap, dim: int, bound: float) -> np.ndarray:
    """theta* of :func:`build_instance`: ``theta`` checked to lie in the unit ball, or drawn from
    ``instance_seed`` in the family's suggested direction (isotropic if it has none) with norm min(1, 1/B)."""
    if theta is None:
        ctx_arms, ctx_dim = fmap.context_shape
        source = fam if callable(getattr(fam, "theta_direction", None)) else Isotropic(ctx_dim, ctx_arms, bound)
        return fmap.draw_theta(source, np.random.default_rng(instance_seed), min(1.0, 1.0 / bound))
    th = check_array("theta", theta, shape=(dim,))
    if float(np.linalg.norm(th)) > 1 + 1e-12:
        raise ValueError(f"theta must lie in the unit ball (||theta|| <= 1), got norm {np.linalg.norm(th):g}")
    return th


def _reward_link(link: Any, link_kwargs: Any, zmax: float, bound: float) -> Link:
    """The link of :func:`build_instance`, checked to map the predictor range [-zmax, zmax] into [-1, 1]
    with its derivative bounds (:func:`_check_link`)."""
    if isinstance(link, Link):
        if link_kwargs:
            raise ValueError("link_kwargs apply to a named link only; configure the Link object itself")
        lk = link
    elif link == "identity":
        if link_kwargs:
            raise ValueError("the identity link takes no link_kwargs")
        lk = identity_link()
    elif link == "logistic":
        kw = {} if link_kwargs is None else dict(link_kwargs)
        names = {key: f"link_kwargs[{key!r}]" for key in kw}
        kw.setdefault("bound", max(zmax, 1e-9))
        with _as_passed(names):
            lk = make_link("logistic", **kw)
    else:
        raise ValueError(f"link must be 'identity', 'logistic' or a privbandit Link (a callable nu with its "
                         f"derivative and bounds mu, lipschitz), got {link!r}")
    if lk.is_identity and zmax > 1 + 1e-12:
        raise ValueError(f"with the identity link the mean reward <phi, theta> must stay in [-1, 1]: "
                         f"sup |<phi, theta>| = {zmax:g} > 1 (need B ||theta|| <= 1; B = {bound:g})")
    _check_link(lk, zmax)
    return lk

