"""Gymnasium environments of private (generalized) linear contextual bandits.

``PrivLinCB-v0`` (linear rewards) and ``PrivGLMCB-v0`` (a link nu) over context families that make
private learning easy or hard; ``PrivCBify-v0`` over real classification data (arms = classes); a
numpy-native vector twin; a batch sampler (``env.unwrapped.sample_batch``) that returns the same rounds
as the step loop; diagnostics (uniform-policy second moment, lambda_min,
U*, W*). Importing this package registers the env ids.

References
----------
Source paper, `sec:intro-cb`, `example:ill-condition-p`, `prop:lower-perturbed-p`, `ssec:OLS`.
"""

from .bandit_env import DEFAULT_HORIZON, PrivBanditEnv, PrivCBifyEnv, PrivGLMCBEnv, PrivLinCBEnv
from .contexts import (
    FAMILIES,
    FAMILY_REGISTRY,
    ContextFamily,
    HeavyTailed,
    HeavyTailedDirection,
    Isotropic,
    LowRank,
    RareDirection,
    Spiky,
    family_class,
    family_names,
    make_family,
    register_family,
)
from .data import DATASETS, DataContexts, LabelContexts, cbify_source, load_dataset
from .features import FEATURE_MAPS, DisjointFeatures, FeatureMap, SharedFeatures, make_feature_map
from .instance import BLOCK_SIZE, BanditInstance, InstanceOptions, RoundBatch, build_instance
from .noise import NOISES, ClippedGaussianNoise, RademacherNoise, RewardNoise, make_noise
from .registration import ENV_IDS, register_envs
from .vector import PrivBanditVectorEnv, PrivCBifyVectorEnv, PrivGLMCBVectorEnv, PrivLinCBVectorEnv

register_envs()

__all__ = [
    "BLOCK_SIZE", "DATASETS", "DEFAULT_HORIZON", "ENV_IDS", "FAMILIES", "FAMILY_REGISTRY", "FEATURE_MAPS", "NOISES",
    "BanditInstance", "ClippedGaussianNoise", "ContextFamily", "DataContexts", "DisjointFeatures", "FeatureMap",
    "HeavyTailed", "HeavyTailedDirection", "InstanceOptions", "Isotropic", "LabelContexts", "LowRank", "PrivBanditEnv",
    "PrivBanditVectorEnv", "PrivCBifyEnv", "PrivCBifyVectorEnv", "PrivGLMCBEnv", "PrivGLMCBVectorEnv", "PrivLinCBEnv",
    "PrivLinCBVectorEnv", "RademacherNoise", "RareDirection", "RewardNoise", "RoundBatch", "SharedFeatures", "Spiky",
    "build_instance", "cbify_source", "family_class", "family_names", "load_dataset", "make_family",
    "make_feature_map", "make_noise", "register_envs", "register_family",
]
