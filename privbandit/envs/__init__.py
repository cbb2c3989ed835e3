"""Gymnasium environments of private (generalized) linear contextual bandits.

``PrivLinCB-v0`` (linear rewards) and ``PrivGLMCB-v0`` (a link nu) over context families that make
private learning easy or hard; a numpy-native vector twin; a batch sampler (``env.unwrapped.sample_batch``)
that returns the same rounds as the step loop; diagnostics (uniform-policy second moment, lambda_min,
U*, W*). Importing this package registers the env ids.

References
----------
Source paper, `sec:intro-cb`, `example:ill-condition-p`, `prop:lower-perturbed-p`, `ssec:OLS`.
"""

from .bandit_env import DEFAULT_HORIZON, PrivBanditEnv, PrivGLMCBEnv, PrivLinCBEnv
from .contexts import (
    FAMILIES,
    ContextFamily,
    HeavyTailed,
    HeavyTailedDirection,
    Isotropic,
    LowRank,
    RareDirection,
    Spiky,
    family_names,
    make_family,
)
from .core import BLOCK_SIZE, BanditInstance, RoundBatch, build_instance
from .features import FEATURE_MAPS, DisjointFeatures, FeatureMap, SharedFeatures, make_feature_map
from .noise import NOISES, ClippedGaussianNoise, RademacherNoise, RewardNoise, make_noise
from .registration import ENV_IDS, register_envs
from .vector import PrivBanditVectorEnv, PrivGLMCBVectorEnv, PrivLinCBVectorEnv

register_envs()

__all__ = [
    "BLOCK_SIZE", "DEFAULT_HORIZON", "ENV_IDS", "FAMILIES", "FEATURE_MAPS", "NOISES", "BanditInstance",
    "ClippedGaussianNoise", "ContextFamily", "DisjointFeatures", "FeatureMap", "HeavyTailed", "HeavyTailedDirection",
    "Isotropic", "LowRank", "PrivBanditEnv", "PrivBanditVectorEnv", "PrivGLMCBEnv", "PrivGLMCBVectorEnv",
    "PrivLinCBEnv", "PrivLinCBVectorEnv", "RademacherNoise", "RareDirection", "RewardNoise", "RoundBatch",
    "SharedFeatures", "Spiky", "build_instance", "family_names", "make_family", "make_feature_map", "make_noise",
    "register_envs",
]
