"""``import privbandit`` stays light; ``make_agent``, ``make_oracle`` and ``run`` are top-level, imported on first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import privbandit
from privbandit.agents import make_agent
from privbandit.oracles import make_oracle
from privbandit.sim.runner import run

HEAVY = ("scipy.stats", "scipy.optimize", "pandas", "matplotlib", "dp_accounting")
"""Modules that cost most of a second each and that ``import privbandit`` alone never needs."""


def _loaded_after(code: str) -> list[str]:
    """Which of HEAVY (and the lazy subpackages) a fresh interpreter has loaded after running ``code``."""
    probe = textwrap.dedent(f"""
        import sys
        {code}
        names = {HEAVY!r} + ("privbandit.agents", "privbandit.oracles", "privbandit.sim")
        print(",".join(m for m in names if m in sys.modules))
    """)
    root = Path(privbandit.__file__).resolve().parent.parent          # this checkout's privbandit, not another
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root)
    return [m for m in out.stdout.strip().split(",") if m]


def test_import_privbandit_loads_no_heavy_module():
    assert _loaded_after("import privbandit") == []


def test_make_agent_make_oracle_and_run_are_top_level_and_imported_on_first_use():
    assert privbandit.make_agent is make_agent
    assert privbandit.make_oracle is make_oracle
    assert privbandit.run is run
    assert {"make_agent", "make_oracle", "run"} <= set(privbandit.__all__) & set(dir(privbandit))
    assert "privbandit.agents" in _loaded_after("import privbandit; privbandit.make_agent")
    with pytest.raises(AttributeError, match="no_such_name"):
        privbandit.no_such_name  # noqa: B018
