"""``import privbandit`` stays light; ``make_agent``, ``make_oracle`` and ``run`` are top-level, imported on first
use."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import privbandit
from privbandit.agents import make_agent
from privbandit.oracles import make_oracle
from privbandit.sim.runner import run

PACKAGE = Path(privbandit.__file__).resolve().parent

OPTIONAL = {"privbandit.integrations.coba": "coba"}
"""Modules that need an optional extra, and the package that extra installs."""

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


@pytest.mark.slow
def test_import_privbandit_loads_no_heavy_module():
    assert _loaded_after("import privbandit") == []


@pytest.mark.slow
def test_make_agent_make_oracle_and_run_are_top_level_and_imported_on_first_use():
    assert privbandit.make_agent is make_agent
    assert privbandit.make_oracle is make_oracle
    assert privbandit.run is run
    assert {"make_agent", "make_oracle", "run"} <= set(privbandit.__all__) & set(dir(privbandit))
    assert "privbandit.agents" in _loaded_after("import privbandit; privbandit.make_agent")
    with pytest.raises(AttributeError, match="no_such_name"):
        privbandit.no_such_name  # noqa: B018


def _module_names() -> list[str]:
    """Every module under privbandit/, as pytest's ``--doctest-modules`` finds them (by file)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_module_list_sees_every_subpackage():
    names = _module_names()
    assert {"privbandit", "privbandit.envs.instance", "privbandit.privacy.audit", "privbandit.bench.sweep"} \
        <= set(names)
    assert set(OPTIONAL) <= set(names)


@pytest.mark.parametrize("name", _module_names())
def test_every_module_imports_so_the_doctest_collection_skips_none(name):
    """``--doctest-ignore-import-errors`` skips a module that fails to import (coba.py without coba):
    this test fails instead, unless the module's optional extra is missing."""
    if name in OPTIONAL:
        pytest.importorskip(OPTIONAL[name])
    importlib.import_module(name)


def test_the_test_command_collects_the_docstring_examples(request):
    assert request.config.getoption("doctestmodules")
    assert "privbandit" in request.config.getini("testpaths")
