"""Stable-Baselines3's PPO on ``PrivLinCB-v0``, built by SB3's own ``make_vec_env`` (which asks for ``rgb_array``).

Stable-Baselines3 is not a privbandit dependency (it needs torch), so the test suite reproduces
``make_vec_env``'s builder instead (``tests/envs/test_render.py``) and runs this script only where SB3 is installed.
Usage (with stable-baselines3 installed): ``python scripts/demo_sb3_ppo.py``
"""

from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

import privbandit  # noqa: F401  (registers the envs)

vec = make_vec_env("privbandit:PrivLinCB-v0", n_envs=4, seed=0,
                   env_kwargs={"n_arms": 5, "dim": 5, "family": "isotropic", "horizon": 256})
model = PPO("MlpPolicy", vec, n_steps=128, seed=0).learn(4096)
frame = vec.render()        # DummyVecEnv tiles the 4 sub-envs' rgb_array frames into one image
assert frame.shape == (480, 640, 3) and frame.dtype == "uint8"
print("tiled frame", frame.shape)
