"""Adapters to the bandit tools people already use (optional extras, imported on demand).

- :mod:`privbandit.integrations.coba`: privbandit envs as coba Environments and agents as coba Learners
  (``pip install "privbandit[coba]"``).

Open Bandit Pipeline needs no adapter: :func:`privbandit.sim.collect_feedback` returns logged bandit
feedback whose ``to_obp()`` is OBP's bandit-feedback dict.
"""
