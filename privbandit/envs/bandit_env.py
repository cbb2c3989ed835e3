"""The Gymnasium environments PrivLinCB-v0 and PrivGLMCB-v0: (generalized) linear contextual bandits
over context families chosen to make private learning easy or hard.

References
----------
Source paper, `sec:intro-cb`, `def:GLM`, `example:ill-condition-p`, `prop:lower-perturbed-p`, `ssec:OLS`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded, UnsupportedMode

from .. import infomatrix
from .._validation import as_generator, check_int
from ..bandit_spec import BanditSpec
from .data import CBifySource, cbify_source
from .instance import BanditInstance, InstanceOptions, RoundBatch, RoundStream, build_instance, check_action
from .render import RENDER_FPS, RENDER_MODES, RegretTrace, RoundView, render_ansi, render_rgb

__all__ = ["DEFAULT_HORIZON", "PrivBanditEnv", "PrivCBifyEnv", "PrivGLMCBEnv", "PrivLinCBEnv"]

DEFAULT_HORIZON = 2 ** 16
"""Default horizon T."""


class PrivBanditEnv(gym.Env[np.ndarray, np.int64]):
    """Shared machinery of :class:`PrivLinCBEnv`, :class:`PrivGLMCBEnv` and :class:`PrivCBifyEnv` (read their env card).

    Arguments: ``horizon``, ``render_mode`` and the instance's keywords ``**options``, the fields of
    :class:`~privbandit.envs.InstanceOptions` (an unknown keyword is a TypeError).
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}

    def __init__(self, *, horizon: int = DEFAULT_HORIZON, render_mode: str | None = None, **options: Any) -> None:
        if render_mode is not None and not (isinstance(render_mode, str) and render_mode in RENDER_MODES):
            # Gymnasium's error for a mode an env lacks (gym.make has already warned about it)
            raise UnsupportedMode(f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}")
        self.render_mode = render_mode
        self.horizon = check_int("horizon", horizon, low=1)
        self.instance: BanditInstance = build_instance(InstanceOptions.from_kwargs(type(self).__name__, options))
        k, d, b = self.instance.n_arms, self.instance.dim, self.instance.bound
        self.observation_space = spaces.Box(-b, b, shape=(k, d), dtype=np.float64)
        self.action_space = spaces.Discrete(k)
        self._stream: RoundStream | None = None
        self._t = 0
        self._last: tuple[np.ndarray, int, int, float, float] | None = None  # kept only while rendering
        self._trace = RegretTrace()

    # -- the instance ----------------------------------------------------------------------------
    @property
    def n_arms(self) -> int:
        """K."""
        return self.instance.n_arms

    @property
    def dim(self) -> int:
        """d."""
        return self.instance.dim

    @property
    def bound(self) -> float:
        """Feature bound B."""
        return self.instance.bound

    @property
    def theta(self) -> np.ndarray:
        """theta* (a copy)."""
        return self.instance.theta.copy()

    def bandit_spec(self) -> BanditSpec:
        """What an agent may know before it starts: K, d, horizon T, bound B, link (a BanditSpec)."""
        return BanditSpec(self.n_arms, self.dim, self.horizon, self.bound, self.instance.link)

    # -- Gymnasium API ---------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode; observation = the first round's features (K, d).

        ``seed`` reseeds ``np_random`` and restarts the stream of rounds; without a seed the stream
        continues, dropping the round that was shown but not played.
        """
        super().reset(seed=seed)
        if seed is not None or self._stream is None:
            self._stream = RoundStream(self.instance, self.np_random)
        else:
            self._stream.skip()
        self._t = 0
        if self.render_mode is not None:
            self._last, self._trace = None, RegretTrace()
        return self._stream.current_features(), {"t": 0}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play ``action`` in the current round; observation = the next round's features."""
        if self._stream is None:
            raise ResetNeeded("call reset() before step()")
        if self._t >= self.horizon:
            raise ResetNeeded(f"the episode ended at the horizon T = {self.horizon}; call reset()")
        a = check_action(action, self.instance.n_arms)
        reward, means, best_arm, regret = self._stream.play(a)
        self._t += 1
        if self.render_mode is not None:
            self._last = (means, best_arm, a, reward, regret)
            self._trace.add(regret)
        info = {"expected_reward": means, "optimal_action": best_arm, "regret": regret, "t": self._t}
        return self._stream.current_features(), reward, False, self._t >= self.horizon, info

    def render(self) -> str | np.ndarray | None:
        """The round last played, drawn in ``render_mode`` (:mod:`privbandit.envs.render`: ``"ansi"`` a text block,
        ``"rgb_array"`` a (240, max(320, 4 K), 3) uint8 image); before the first step, or after :meth:`sample_batch`
        (whose rounds are not drawn), the round to come, with no action. With ``render_mode=None`` it warns, as
        Gymnasium's own envs do, and returns None, and ``step`` keeps nothing for it.

        Raises
        ------
        gymnasium.error.ResetNeeded
            Before the first ``reset``.
        """
        if self.render_mode is None:
            gym.logger.warn("You are calling render method without specifying any render mode. You can specify "
                            "the render_mode at initialization, e.g. gym.make(\"privbandit:PrivLinCB-v0\", "
                            "render_mode=\"rgb_array\")")
            return None
        if self._stream is None:
            raise ResetNeeded("call reset() before render()")
        shown = self._last or (*self._stream.current_round(), None, None, None)
        view = RoundView(self._t, self.horizon, *shown, self._trace.array())
        return render_ansi(view) if self.render_mode == "ansi" else render_rgb(view)

    # -- fast path -------------------------------------------------------------------------------
    def sample_batch(self, n: int) -> RoundBatch:
        """The next n rounds exactly as n ``step`` calls would see them, advancing the env by n rounds.

        The first round is the one whose features the last ``reset``/``step`` returned. Rewards are
        given for all arms (the agent's choice does not change the draws), so an agent can play the
        batch with ``RoundBatch.rewards_of(actions)`` and ``RoundBatch.regret(actions)``.

        Parameters
        ----------
        n : int
            Rounds, in [0, horizon - t].
        """
        if self._stream is None:
            raise ResetNeeded("call reset() before sample_batch()")
        left = self.horizon - self._t
        n = check_int("n", n, low=0)
        if n > left:
            raise ValueError(f"n must be at most the {left} rounds left before the horizon T = {self.horizon}, "
                             f"got {n}")
        batch = self._stream.take(n)
        self._t += n
        if self.render_mode is not None and n:
            self._last = None
        return batch

    # -- diagnostics -----------------------------------------------------------------------------
    def uniform_policy_features(self, n_rounds: int = 2 ** 14, rng: Any = 0) -> np.ndarray:
        """Features of every arm over ``n_rounds`` fresh rounds, shape (n_rounds * K, d).

        Equal weights on these rows are the feature distribution under the uniform policy. Uses its own
        ``rng`` (never ``np_random``), so diagnostics do not disturb the episode.
        """
        n_rounds = check_int("n_rounds", n_rounds, low=1)
        inst = self.instance
        contexts = np.asarray(inst.family.sample(n_rounds, as_generator(rng)), dtype=np.float64)
        return inst.feature_map.features(contexts).reshape(-1, inst.dim)

    def uniform_policy_atoms(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Exact (atoms (m, d), probabilities (m,)) of the uniform-policy feature law, if it is discrete."""
        atoms = getattr(self.instance.family, "atoms", None)
        got = atoms() if callable(atoms) else None
        return None if got is None else self.instance.feature_map.atoms(*got)

    def feature_second_moment(self, n_rounds: int | None = None, rng: Any = 0) -> np.ndarray:
        """E[phi phi^T] under the uniform policy (d, d): exact when the family knows it and ``n_rounds``
        is None, else an average over ``n_rounds`` (default 2^14) sampled rounds."""
        moment = getattr(self.instance.family, "second_moment", None)
        if n_rounds is None and callable(moment):
            return self.instance.feature_map.second_moment(moment())
        x = self.uniform_policy_features(2 ** 14 if n_rounds is None else n_rounds, rng)
        return infomatrix.second_moment(x)

    def feature_lambda_min(self, n_rounds: int | None = None, rng: Any = 0) -> float:
        """lambda_min of :meth:`feature_second_moment` (the explorability of the uniform policy)."""
        return float(np.linalg.eigvalsh(self.feature_second_moment(n_rounds, rng))[0])

    def _law(self, n_rounds: int | None, rng: Any) -> tuple[np.ndarray, np.ndarray | None]:
        atoms = self.uniform_policy_atoms() if n_rounds is None else None
        if atoms is not None:
            return atoms
        return self.uniform_policy_features(2 ** 14 if n_rounds is None else n_rounds, rng), None

    def u_star(self, lam: float, *, n_rounds: int | None = None, rng: Any = 0,
               **kwargs: Any) -> infomatrix.SpectralResult:
        """U* (F_LDP(U*) = I) of the uniform-policy feature law, via :func:`privbandit.infomatrix.u_star`.

        Exact on the atoms of a discrete family; otherwise on ``n_rounds`` (default 2^14) sampled rounds
        (all K arms each). ``kwargs`` go to ``u_star`` (tol, max_iter).

        References
        ----------
        Source paper, `def:FLDP`, `eqn:U-spectral-exact`.
        """
        x, w = self._law(n_rounds, rng)
        return infomatrix.u_star(x, w, lam=lam, **kwargs)

    def w_star(self, gamma: float, lam: float, *, n_rounds: int | None = None, rng: Any = 0,
               **kwargs: Any) -> infomatrix.SpectralResult:
        """W* (F_DP(W*) = I) of the uniform-policy feature law, via :func:`privbandit.infomatrix.w_star`.

        References
        ----------
        Source paper, `def:FJDP`, `eqn:W-spectral-exact`.
        """
        x, w = self._law(n_rounds, rng)
        return infomatrix.w_star(x, w, gamma=gamma, lam=lam, **kwargs)


class PrivLinCBEnv(PrivBanditEnv):
    """Linear contextual bandit over an ill-conditioned context family (``PrivLinCB-v0``).

    Each round t the context family draws the features Phi_t = (phi(x_t, a))_a of the K arms; the
    agent picks an arm a_t and receives r_t in [-1, 1] with E[r_t | x_t, a_t] = <phi(x_t, a_t), theta*>.
    The rewards of all arms are drawn every round (common random numbers), and ``info`` reports the
    expected rewards, the optimal arm and the pseudo-regret. The families set how hard private
    learning is: covariance alone does not decide it (see ``privbandit.envs.contexts``).

    ## Action Space
    ``Discrete(K)``: the index of the arm to play.

    ## Observation Space
    ``Box(-B, B, (K, d), float64)``: row a is the feature vector phi(x_t, a), with ||phi|| <= B.
    For a 1-D observation (Stable-Baselines3's ``check_env`` warns on this shape), wrap the env in
    Gymnasium's ``FlattenObservation``: a ``Box`` of shape (K d,), row-major, that an agent reshapes back.

    ## Rewards
    The chosen arm's drawn reward, a float in [-1, 1] with mean m_a = <phi(x_t, a), theta*>:
    ``noise="rademacher"`` gives r in {-1, 1} (P(r = 1) = (1 + m) / 2, as in the paper);
    ``noise="gaussian"`` gives m + sigma z clipped symmetrically to [m - (1 - |m|), m + (1 - |m|)],
    which keeps the mean exactly m. ``info`` = {``expected_reward`` (K,), ``optimal_action``,
    ``regret`` (max_a m_a - m_{a_t}), ``t`` (rounds played, 1..T)}; reset info = {``t``: 0}.

    ## Starting State
    ``reset(seed=...)`` seeds ``np_random``, the only source of randomness; the observation is the
    first round's features. Randomness is drawn in blocks of 1024 rounds, so ``step`` and
    :meth:`sample_batch` see identical rounds for a seed.

    ## Episode End
    No termination; truncation after ``horizon`` rounds, the episode length whatever its value (the id is
    registered without ``max_episode_steps``, so ``gym.make`` adds no ``TimeLimit`` unless given one).

    ## Arguments
    - ``n_arms`` (K, default 10), ``dim`` (d, default 10), ``horizon`` (T, default 2^16).
    - ``family`` (default ``"heavy-tailed"``): ``"isotropic"``, ``"spiky"``, ``"rare-direction"``,
      ``"heavy-tailed"``, ``"heavy-tailed-direction"``, ``"low-rank"``, or an object with
      ``sample(n, rng) -> (n, K, d)`` (e.g. a :class:`~privbandit.envs.ContextFamily`).
    - ``conditioning`` (default None = the family's default): the family's dial -- spiky
      ``condition``, rare-direction ``rho``, heavy-tailed(-direction) ``scale``, low-rank
      ``noise_level``. ``family_kwargs``: the family's other parameters.
    - ``feature_map`` (default ``"shared"``): ``"shared"`` (one theta*, per-arm features) or
      ``"disjoint"`` (phi(x, a) = e_a (x) x with x in R^{d/K}; d must be a multiple of K).
    - ``theta`` (default None): theta* in the unit ball with B ||theta*|| <= 1; when None it is drawn
      from ``instance_seed`` (default 0) with norm min(1, 1/B): a uniform direction, or half its
      squared norm on the rare/short direction e of ``rare-direction`` and ``heavy-tailed-direction``.
    - ``bound`` (B, default 1.0), ``noise`` (default ``"rademacher"``), ``noise_scale`` (sigma of the
      ``"gaussian"`` noise, default 0.5).
    - ``render_mode`` (default None): ``"ansi"`` (a text block) or ``"rgb_array"`` (a uint8 image) of the
      round last played: every arm's expected reward, the optimal and the chosen arm, the cumulative regret
      (:meth:`render`, :mod:`privbandit.envs.render`); ``metadata["render_fps"]`` = 4. Any other mode is
      refused with :class:`gymnasium.error.UnsupportedMode`.

    Defaults: ``gym.make("PrivLinCB-v0")`` is d = K = 10, B = 1, T = 2^16 on the heavy-tailed family
    (tail 2, scale 0.05): E||phi||^2 = 0.0175 against B E||phi|| = 0.0975, lambda_min(Sigma) = 0.00175,
    so privacy noise calibrated to B is wasteful; ``sample_batch`` draws all 2^16 rounds in well under a
    second, so a learner's run is bounded by the learner.

    ## Version History
    - v0: initial version.

    References
    ----------
    Source paper, `sec:intro-cb`, `example:ill-condition-p`, `prop:lower-perturbed-p`, `ssec:OLS`, `def:lmin`.

    Examples
    --------
    >>> import gymnasium as gym
    >>> import privbandit  # registers the envs
    >>> env = gym.make("PrivLinCB-v0", n_arms=4, dim=3, horizon=100,
    ...                family="rare-direction", conditioning=0.01)
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, info
    ((4, 3), {'t': 0})
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> sorted(info), info["expected_reward"].shape
    (['expected_reward', 'optimal_action', 'regret', 't'], (4,))
    >>> float(reward) in (-1.0, 1.0), terminated, truncated
    (True, False, False)
    >>> # the next 64 rounds, exactly as 64 steps would see them
    >>> batch = env.unwrapped.sample_batch(64)
    >>> batch.features.shape, batch.rewards.shape
    ((64, 4, 3), (64, 4))
    >>> env.unwrapped.bandit_spec()              # what an agent is told
    BanditSpec(n_arms=4, dim=3, horizon=100, bound=1.0, link=...)
    >>> shown = gym.make("PrivLinCB-v0", n_arms=4, dim=3,
    ...                  render_mode="rgb_array")
    >>> _ = shown.reset(seed=0)
    >>> frame = shown.render()  # the arms' expected rewards as bars
    >>> frame.shape, frame.dtype
    ((240, 320, 3), dtype('uint8'))
    """

    def __init__(self, *, horizon: int = DEFAULT_HORIZON, render_mode: str | None = None, **options: Any) -> None:
        given = sorted({"link", "link_kwargs"} & set(options))
        if given:
            raise TypeError(f"PrivLinCB-v0 (and its vector env) has the identity link and takes no "
                            f"{' or '.join(given)}; use PrivGLMCB-v0 for another link")
        super().__init__(horizon=horizon, render_mode=render_mode, **options)


class PrivGLMCBEnv(PrivBanditEnv):
    """Generalized linear contextual bandit over an ill-conditioned context family (``PrivGLMCB-v0``).

    As :class:`PrivLinCBEnv`, but the mean reward of arm a is nu(<phi(x_t, a), theta*>) for a link nu
    with mu_nu <= nu' <= L_nu on the predictor range |z| <= B ||theta*||.

    ## Action Space
    ``Discrete(K)``.

    ## Observation Space
    ``Box(-B, B, (K, d), float64)``: the K feature vectors of the round (``FlattenObservation`` makes it
    1-D, as for ``PrivLinCB-v0``).

    ## Rewards
    The chosen arm's reward in [-1, 1] with mean nu(<phi(x_t, a_t), theta*>) (Rademacher or
    symmetrically clipped Gaussian noise); ``info`` as in :class:`PrivLinCBEnv`.

    ## Starting State
    ``reset(seed=...)`` seeds ``np_random``; the observation is the first round's features.

    ## Episode End
    Truncation after ``horizon`` rounds, as in :class:`PrivLinCBEnv`.

    ## Arguments
    All arguments of :class:`PrivLinCBEnv`, plus
    - ``link`` (default ``"logistic"``): ``"logistic"`` (nu(z) = 2 sigmoid(s z) - 1 = tanh(s z / 2),
      slope ``link_kwargs={"scale": s}``, default s = 2), ``"identity"``, or any
      :class:`privbandit.Link` (a user callable nu with its derivative and the bounds mu, lipschitz;
      checked on the predictor range to map into [-1, 1] with mu <= nu' <= lipschitz).
    - ``link_kwargs``: parameters of a named link.

    Defaults: as ``PrivLinCB-v0`` with the logistic link of slope 2 (mu = 1 - tanh(1)^2 ~ 0.42).

    ## Version History
    - v0: initial version.

    References
    ----------
    Source paper, `def:GLM`, `appdx:proof-JDP-gen-linear`, `sec:intro-cb`.

    Examples
    --------
    >>> import numpy as np
    >>> from privbandit.envs import PrivGLMCBEnv
    >>> env = PrivGLMCBEnv(n_arms=3, dim=2, horizon=50,
    ...                    link_kwargs={"scale": 4.0})
    >>> obs, info = env.reset(seed=1)
    >>> obs.shape, env.bandit_spec().link.name
    ((3, 2), 'logistic')
    >>> # nu(<phi(x, a), theta*>) of each arm
    >>> means = env.step(0)[-1]["expected_reward"]
    >>> means.shape, bool(np.all(np.abs(means) <= 1))
    ((3,), True)
    """

    def __init__(self, *, horizon: int = DEFAULT_HORIZON, link: Any = "logistic", render_mode: str | None = None,
                 **options: Any) -> None:
        super().__init__(horizon=horizon, link=link, render_mode=render_mode, **options)


class PrivCBifyEnv(PrivBanditEnv):
    """A contextual bandit over real classification data, the arms being the classes (``PrivCBify-v0``).

    The cbify construction (Vowpal Wabbit's ``--cbify``, coba's classification sources): each round
    draws one row x of a dataset (X, y) uniformly with replacement (so any horizon works), the agent
    picks a class a and is rewarded for the true one (:func:`~privbandit.envs.cbify_source` prepares the data).

    ## Action Space
    ``Discrete(K)``: K = the number of classes.

    ## Observation Space
    ``Box(-B, B, (K, d), float64)`` with d = K p: row a is phi(x, a) = e_a (x) x, ||phi|| = ||x|| <= B
    (``FlattenObservation`` makes it 1-D, as for ``PrivLinCB-v0``).

    Features: the columns of X are standardised (centred, divided by their standard deviation; a
    constant column becomes 0) with statistics of the whole dataset computed once before the run,
    optionally projected onto the top ``n_components`` principal directions, then scaled by the public
    clipping rule: every row is multiplied by B / r_q, r_q the ``clip_quantile``-quantile of the row
    norms, and the rows still longer than B are projected onto the ball of radius B. With the default
    ``clip_quantile=1`` no row is clipped and the spread of the norms is kept. ``env.data`` holds the
    statistics (``center``, ``spread``, ``components``, ``factor``) and ``n_clipped``.

    ## Rewards
    theta* (``env.theta``) is a ridge fit (``ridge`` = lambda) of the signed one-hot labels
    2 1{y = a} - 1 on the scaled rows, made once in the constructor, divided by
    max(1, ||fit||, sup_{||phi|| <= B} |<phi, fit>|) (``env.data.fit_scale``) so that it lies in the
    model's range; no mean is ever clipped.

    - ``reward="label"`` (default): the cbify reward, r = +1 for the drawn row's true class and -1
      otherwise (deterministic given the row); ``regret`` is against the true label: 2 for a wrong class,
      0 for the right one. **Misspecified for linear agents**: E[r | x, a] is not <phi(x, a), theta*>
      for any theta*, so their guarantees do not apply; theta* is then only the best ridge approximation.
    - ``reward="linear-fit"``: semi-synthetic. r in [-1, 1] with mean <phi(x, a), theta*> exactly
      (Rademacher, or the symmetrically clipped Gaussian of ``noise="gaussian"``), so the linear model
      is exact and the pseudo-regret is exact.

    ``info`` as in :class:`PrivLinCBEnv`: {``expected_reward`` (K,), ``optimal_action``, ``regret``, ``t``}.

    ## Starting State
    ``reset(seed=...)`` seeds ``np_random``, the only source of randomness (the rows drawn, then the
    rewards, in blocks of 1024 rounds): ``step`` and :meth:`sample_batch` see identical rounds for a seed.

    ## Episode End
    No termination; truncation after ``horizon`` rounds, as in :class:`PrivLinCBEnv`.

    ## Arguments
    - ``dataset``: ``"digits"`` (the default: 1797 rows, p = 64 pixels, K = 10), ``"wine"`` (178, 13, 3),
      ``"breast_cancer"`` (569, 30, 2) or ``"iris"`` (150, 4, 3): the copies that ship inside
      scikit-learn, which needs the optional extra ``pip install "privbandit[data]"``.
    - ``X``, ``y``: a user dataset instead (X (n, p) finite, y (n,) labels with at least 2 classes;
      the classes are ``np.unique(y)`` in sorted order). Needs no extra.
    - ``feature_map``: ``"disjoint"`` (default; the context is x in R^p and phi(x, a) = e_a (x) x) or
      ``"shared"`` (the context source serves the K vectors e_a (x) x, one theta* in R^{Kp}: the same
      features, but the shared map's range check sup |<phi, theta*>| <= B ||theta*|| is stricter, so
      theta* is scaled down more; it is there so that agents written for per-arm features see cbify data).
    - ``reward``: ``"label"`` or ``"linear-fit"``; ``horizon`` (T, default 2^16); ``bound`` (B, default 1).
    - ``standardize`` (default True), ``n_components`` (default None: no projection),
      ``clip_quantile`` (q in (0, 1], default 1), ``ridge`` (default 1.0).
    - ``noise``, ``noise_scale``: as :class:`PrivLinCBEnv` (no effect under ``reward="label"``, whose
      means are +-1).
    - ``render_mode``: None, ``"ansi"`` or ``"rgb_array"``, as :class:`PrivLinCBEnv` (the arms are the classes).

    Diagnostics: :meth:`feature_second_moment` is exact (the rows' second moment), and ``u_star`` /
    ``w_star`` solve on the exact atoms (all n rows, weight 1/n each); on digits with p = 64 that is
    K n = 17970 atoms of dimension 640, so pass ``n_components`` for a fast solve.

    ## Version History
    - v0: initial version.

    References
    ----------
    Source paper, `sec:intro-cb`, `def:linear-model`, `example:ill-condition-p`, `def:lmin`.

    Examples
    --------
    A user dataset needs no extra (``dataset="digits"`` needs scikit-learn):

    >>> import numpy as np
    >>> from privbandit.envs import PrivCBifyEnv
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.standard_normal((60, 4)), np.arange(60) % 3
    >>> env = PrivCBifyEnv(X=X, y=y, horizon=20)
    >>> # K = 3 classes, d = K p = 12
    >>> env.action_space, env.observation_space.shape
    (Discrete(3), (3, 12))
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> # the label reward
    >>> float(reward) in (-1.0, 1.0), float(info["regret"]) in (0.0, 2.0)
    (True, True)
    """

    def __init__(self, *, dataset: str | None = None, X: Any = None, y: Any = None, feature_map: str = "disjoint",
                 reward: str = "label", horizon: int = DEFAULT_HORIZON, bound: float = 1.0, standardize: bool = True,
                 n_components: int | None = None, clip_quantile: float = 1.0, ridge: float = 1.0,
                 noise: Any = "rademacher", noise_scale: float = 0.5, render_mode: str | None = None) -> None:
        self.data: CBifySource = cbify_source(
            dataset=dataset, X=X, y=y, feature_map=feature_map, reward=reward, bound=bound, standardize=standardize,
            n_components=n_components, clip_quantile=clip_quantile, ridge=ridge)
        super().__init__(n_arms=self.data.family.n_classes, dim=self.data.theta.size, horizon=horizon,
                         family=self.data.family, feature_map=feature_map, theta=self.data.theta, instance_seed=None,
                         bound=bound, link="identity", noise=noise, noise_scale=noise_scale, render_mode=render_mode)
