"""The uniform-policy feature spectrum of real data (PrivCBify-v0) next to the synthetic families'.

For each env: d, the largest and smallest eigenvalues of Sigma = E[phi phi^T] (``feature_second_moment``),
how many eigenvalues are exactly 0, the condition number over the non-zero ones, and the paper's short-feature
ratio E||phi||^2 / (B E||phi||) (1 when every feature has norm B; small when most features are short, where
perturbing sufficient statistics calibrated to B wastes its noise). Digits is shown with all 64 pixels (d = 640)
and on its top 8 principal directions (d = 80, the benchmark's instance). Runs in a few seconds::

    python scripts/spectrum_real_data.py

References
----------
Source paper, `def:lmin`, `ssec:OLS`, `example:ill-condition-p`.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import privbandit  # noqa: F401  (registers the envs)

ENVS = [
    ("digits (64 pixels)", "PrivCBify-v0", dict(dataset="digits")),
    ("digits (8 PCs)", "PrivCBify-v0", dict(dataset="digits", n_components=8)),
    ("wine", "PrivCBify-v0", dict(dataset="wine")),
    ("heavy-tailed d=10", "PrivLinCB-v0", dict(family="heavy-tailed", dim=10, n_arms=10)),
    ("rare-direction d=10", "PrivLinCB-v0", dict(family="rare-direction", dim=10, n_arms=10)),
    ("spiky d=10", "PrivLinCB-v0", dict(family="spiky", dim=10, n_arms=10)),
    ("isotropic d=10", "PrivLinCB-v0", dict(family="isotropic", dim=10, n_arms=10)),
]


def row(label: str, env_id: str, kwargs: dict) -> str:
    env = gym.make(env_id, **kwargs).unwrapped
    eig = np.linalg.eigvalsh(env.feature_second_moment())
    zero = eig <= 1e-12 * eig[-1]
    nonzero = eig[~zero]
    x = env.uniform_policy_features(2 ** 12, rng=0)  # (rounds * K, d): the uniform policy's features
    norms = np.linalg.norm(x, axis=1)
    ratio = np.mean(norms ** 2) / (env.bound * np.mean(norms))
    return (f"| {label} | {env.dim} | {eig[-1]:.2e} | {nonzero[0]:.2e} | {int(zero.sum())} | "
            f"{eig[-1] / nonzero[0]:.1e} | {ratio:.2f} |")


def main() -> None:
    print("| env | d | lambda_max | smallest non-zero lambda | zero lambdas | condition (non-zero) | "
          "E||phi||^2 / (B E||phi||) |")
    print("|---|---|---|---|---|---|---|")
    for label, env_id, kwargs in ENVS:
        print(row(label, env_id, kwargs))


if __name__ == "__main__":
    main()
