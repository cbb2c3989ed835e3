"""Helpers that several test modules of ``tests/agents/`` share (``from agent_helpers import ...``: pytest puts this
folder on the path), so that no test module imports another.

- the per-user audit of a local randomizer (:func:`audit_user`) and its planted twin (:func:`under_noised`);
- the rows the pooled oracles' tests fit (:func:`pooled_data`), the replay test of a pooled agent
  (:func:`released_values_only`) and its planted raw read (:func:`leaky_pooling`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np

from privbandit.agents.checks import play_batch, synthetic_stream
from privbandit.agents.pooled import PooledReleases
from privbandit.privacy import L2BallChannel, LocalRandomizer, SymmetricGaussianMechanism, audit_delta
from privbandit.privacy.replay import ReleaseTape

EPS, DELTA, DIM = 1.0, 1e-5, 3
"""The budget and the feature dimension of the per-user audits."""
N_DRAWS = 20_000
"""Draws per record of a per-user audit."""
PLANT = 10.0
"""The planted twin's noise cut."""


def candidate_records(bound: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Records spanning the input domain: features 0, +-B e_i and B times 200 random unit vectors, rewards -1, 0, 1."""
    u = np.random.default_rng(seed).standard_normal((200, DIM))
    dirs = np.concatenate([np.zeros((1, DIM)), np.eye(DIM), -np.eye(DIM), u / np.linalg.norm(u, axis=1, keepdims=True)])
    feats = np.repeat(bound * dirs, 3, axis=0)
    rewards = np.tile([-1.0, 0.0, 1.0], dirs.shape[0])
    return feats, rewards


def extreme_pair(r: LocalRandomizer) -> tuple[tuple[np.ndarray, float], tuple[np.ndarray, float], float]:
    """The two candidate records whose statistics are farthest apart, and that distance."""
    x, y = candidate_records(r.feature_bound)
    stats = np.asarray(r.statistic(x, y), dtype=float).reshape(x.shape[0], -1)
    sq = np.einsum("ij,ij->i", stats, stats)
    dist2 = sq[:, None] + sq[None, :] - 2 * stats @ stats.T
    i, j = np.unravel_index(int(np.argmax(dist2)), dist2.shape)
    return (x[i], float(y[i])), (x[j], float(y[j])), float(np.linalg.norm(stats[i] - stats[j]))


def _projection(r: LocalRandomizer, rec, rec2):
    s1 = np.asarray(r.statistic(rec[0][None], np.array([rec[1]])), dtype=float)[0]
    s2 = np.asarray(r.statistic(rec2[0][None], np.array([rec2[1]])), dtype=float)[0]
    diff = s1 - s2
    if isinstance(r.channel, L2BallChannel):    # its density depends on the hemispheres only: the signs on s, s'
        return lambda out: (np.sign(np.asarray(out).reshape(out.shape[0], -1) @ s1.ravel())
                            - np.sign(np.asarray(out).reshape(out.shape[0], -1) @ s2.ravel()))
    if isinstance(r.channel, SymmetricGaussianMechanism):  # the noise lives on the upper triangle
        iu = np.triu_indices(diff.shape[0])
        return lambda out: np.asarray(out)[:, iu[0], iu[1]] @ diff[iu]
    return lambda out: np.asarray(out).reshape(out.shape[0], -1) @ diff.ravel()


def channel_diameter(r: LocalRandomizer) -> float:
    """The channel's declared sensitivity: a Gaussian's own, an L2-ball channel's diameter 2 r."""
    return 2.0 * r.channel.radius if isinstance(r.channel, L2BallChannel) else r.channel.sensitivity


def under_noised(r: LocalRandomizer, divide: float) -> LocalRandomizer:
    """The planted twin: the same randomizer with its channel's noise cut ``divide`` times (a Gaussian's sigma /
    ``divide``, an L2-ball channel's epsilon x ``divide``), its ledger claim unchanged."""
    if isinstance(r.channel, L2BallChannel):
        return replace(r, channel=replace(r.channel, epsilon=r.channel.epsilon * divide))
    return replace(r, channel=replace(r.channel, sigma=r.channel.sigma / divide))


def audit_user(r: LocalRandomizer, seed: int, divide: float = 1.0):
    """Audit one user's view through ``r`` (its channel's noise cut ``divide`` times: :func:`under_noised`)."""
    if divide != 1.0:
        r = under_noised(r, divide)
    rec, rec2, dist = extreme_pair(r)
    assert dist <= channel_diameter(r) * (1 + 1e-9)  # the declared sensitivity covers the domain

    def sampler(record):
        return lambda n, g: r(np.broadcast_to(record[0], (n, DIM)), np.full(n, record[1]), rng=g)

    cached = {}

    def at(eps):
        if not cached:
            res = audit_delta(sampler(rec), sampler(rec2), eps, n_draws=N_DRAWS, rng=seed,
                              project=_projection(r, rec, rec2))
            g = np.random.default_rng(seed).spawn(2)
            cached["p"], cached["q"] = sampler(rec)(N_DRAWS, g[0]), sampler(rec2)(N_DRAWS, g[1])
            return res
        return audit_delta(lambda n, g: cached["p"], lambda n, g: cached["q"], eps, n_draws=N_DRAWS, rng=seed,
                           project=_projection(r, rec, rec2))

    at_spec = at(EPS)
    grid = np.round(np.arange(0.1, 6.0001, 0.1), 2)
    eps_lower = max((float(e) for e in grid if at(float(e)).violates(DELTA)), default=0.0)
    return at_spec, eps_lower, dist / channel_diameter(r)



def pooled_data(n=600, d=4, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, d)) / 2.0
    y = np.clip(x @ [0.5, -0.5, 0.2, 0.0] + 0.3 * rng.standard_normal(n), -1, 1)
    return x, y


def estimates_on(agent_factory, stream, tape=None):
    x, r = stream
    agent = agent_factory()
    with ReleaseTape(replay=tape) as rec:
        play_batch(agent, x, r, 5)
    return agent, rec


def released_values_only(factory) -> bool:
    """Whether replaying one run's releases on a stream with entirely different users gives the same estimates
    and the same final policy, bit for bit."""
    first, tape = estimates_on(factory, synthetic_stream(4, 3, 240, 1))
    second, _ = estimates_on(factory, synthetic_stream(4, 3, 240, 2), tape)
    assert len(first.estimates) == len(second.estimates) == 4
    probe = synthetic_stream(4, 3, 50, 9)[0]
    same = all(np.array_equal(a.theta, b.theta) and np.array_equal(a.width_matrix, b.width_matrix)
               for a, b in zip(first.estimates, second.estimates))
    return same and np.array_equal(first.action_probabilities(probe), second.action_probabilities(probe))


class LeakyPooling(PooledReleases):
    """A planted bug in the pooled learner (the public piece a pooled agent is composed of): it also reads the raw
    rows it is given, whose running sum of x y nudges every release."""

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "raw", [])

    def add(self, state, fit, x, y):
        self.raw.append(x.T @ y)
        super().add(state, fit, x, y)

    def epoch_estimate(self, state, fit):
        est = super().epoch_estimate(state, fit)
        return dataclasses.replace(est, theta=est.theta + 1e-3 * np.sum(self.raw, axis=0))


def leaky_pooling(agent):
    """``agent`` (a pooled one) built again on a :class:`LeakyPooling` with its own learner's constants."""
    learner = agent.learner
    leaky = LeakyPooling(**{f.name: getattr(learner, f.name) for f in dataclasses.fields(learner)})
    return type(agent)(**{**agent.get_params(), "pooling": leaky})
