"""Plugins: agents, oracles and families from user code by import path and entry point, in every worker."""

from __future__ import annotations

import os
import textwrap

import gymnasium as gym
import pandas as pd
import pytest

from privbandit.agents import AGENT_REGISTRY, agent_is_private, agent_names, make_agent, register_agent
from privbandit.bench import AgentEntry, EnvEntry, Grid, sweep
from privbandit.envs import contexts, make_family
from privbandit.oracles import ORACLE_REGISTRY, make_oracle, oracle_names
from privbandit.registry import PluginError
from privbandit.sim import run

ENV = EnvEntry("rd", "PrivLinCB-v0", dict(family="rare-direction", dim=3, n_arms=3))

PLUGIN = '''
from typing import ClassVar

from privbandit.agents import make_agent, register_agent
from privbandit.envs.contexts import Isotropic
from privbandit.oracles import Ridge


def make_greedy(**kwargs):
    """Epsilon-greedy under a plugin's name."""
    return make_agent("epsilon-greedy", **kwargs)


make_greedy.private = False  # takes no budget (without this, a factory of **kwargs only leaves it open)


def make_private(*, epsilon, delta=1e-5, **kwargs):
    """Joint-DP elimination under a plugin's name."""
    return make_agent("elim-jdp", epsilon=epsilon, delta=delta, **kwargs)


class PlugRidge(Ridge):
    name: ClassVar[str] = "{mod}-ridge"


class PlugIso(Isotropic):
    name: ClassVar[str] = "{mod}-iso"


if {register}:
    register_agent("{mod}-greedy", make_greedy, private=False, description="registered on import")
'''


@pytest.fixture(autouse=True)
def _clean_registries():
    """Plugins register into the process-wide registries: restore them after each test."""
    registries = (AGENT_REGISTRY, ORACLE_REGISTRY, contexts.FAMILY_REGISTRY)
    saved = [set(r.view()) for r in registries]
    yield
    for registry, names in zip(registries, saved):
        for name in set(registry.view()) - names:
            registry.unregister(name)


def write_plugin(folder, mod: str, *, register: bool = False):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{mod}.py").write_text(PLUGIN.format(mod=mod, register=register))
    return folder


def write_dist(folder, mod: str):
    """A tiny installed distribution: ``<dist>.dist-info`` with entry points of the three groups."""
    info = folder / f"{mod}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {mod}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(f"""\
        [privbandit.agents]
        {mod}-ep-greedy = {mod}:make_greedy
        {mod}-ep-private = {mod}:make_private
        [privbandit.oracles]
        {mod}-ep-ridge = {mod}:PlugRidge
        [privbandit.families]
        {mod}-ep-iso = {mod}:PlugIso
        """))


def test_import_paths_name_agents_oracles_and_families(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(write_plugin(tmp_path, "plug_paths")))
    greedy = make_agent("plug_paths:make_greedy")
    assert greedy.name == "epsilon-greedy" and agent_is_private("plug_paths:make_greedy") is False
    assert agent_is_private("plug_paths:make_private") is True  # an epsilon parameter: private
    assert make_agent("plug_paths:make_private", epsilon=0.5).privacy.epsilon == 0.5
    assert type(make_oracle("plug_paths:PlugRidge")).__name__ == "PlugRidge"
    assert type(make_family("plug_paths:PlugIso", dim=3)).__name__ == "PlugIso"
    env = gym.make("PrivLinCB-v0", family="plug_paths:PlugIso", dim=3, n_arms=2, horizon=8)
    assert type(env.unwrapped.instance.family).__name__ == "PlugIso"


def test_bad_import_paths_say_why(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(write_plugin(tmp_path, "plug_bad")))
    with pytest.raises(PluginError, match="cannot import 'no_such_module_xyz'.*PYTHONPATH"):
        make_agent("no_such_module_xyz:make")
    with pytest.raises(PluginError, match="has no attribute 'nope'"):
        make_oracle("plug_bad:nope")
    with pytest.raises(PluginError, match="must be a subclass of privbandit.envs.ContextFamily"):
        make_family("plug_bad:make_greedy", dim=3)
    with pytest.raises(ValueError, match="unknown agent 'not-an-agent'"):
        make_agent("not-an-agent")


def test_entry_points_are_found_by_name(tmp_path, monkeypatch):
    site = write_plugin(tmp_path / "site", "plug_ep")
    write_dist(site, "plug_ep")
    monkeypatch.syspath_prepend(str(site))
    assert "plug_ep-ep-greedy" in agent_names() and "plug_ep-ep-ridge" in oracle_names()
    assert "plug_ep-ep-iso" in contexts.family_names()
    assert make_agent("plug_ep-ep-greedy").name == "epsilon-greedy"
    assert make_agent("plug_ep-ep-private", epsilon=1.0).privacy.model == "jdp"
    with pytest.raises(ValueError, match="is private: choose a budget"):
        make_agent("plug_ep-ep-private")
    assert type(make_oracle("plug_ep-ep-ridge")).__name__ == "PlugRidge"
    assert type(make_family("plug_ep-ep-iso", dim=3)).__name__ == "PlugIso"


def test_grid_takes_explicit_seeds():
    agents = (AgentEntry("uniform", private=False),)
    picked = Grid(agents, (ENV,), seeds=(5, 2), horizon=8).cells()
    assert [c.seed for c in picked] == [5, 2]
    counted = {c.seed: c for c in Grid(agents, (ENV,), seeds=6, horizon=8).cells()}
    assert [c.key for c in picked] == [counted[5].key, counted[2].key]  # a seed names the same stream
    for bad, err, msg in (((1, 1), ValueError, "distinct"), ((), ValueError, "at least one"),
                          ((0, -1), ValueError, r"seeds\[i\] must be an integer in \[0"), (0, ValueError, "seeds"),
                          ("01", TypeError, "sequence of integers"), ((0.5,), TypeError, "integer")):
        with pytest.raises(err, match=msg):
            Grid(agents, (ENV,), seeds=bad)


def _backend(name: str) -> str:
    if name == "dask":
        pytest.importorskip("dask.distributed", reason="the dask backend needs dask[distributed]")
    if name == "ray":
        pytest.importorskip("ray", reason="the ray backend needs ray (in the test and dist extras); not installed here")
    return name


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["loky", "dask", "ray"])
def test_user_registered_agents_run_in_workers(tmp_path, monkeypatch, backend):
    """An agent registered by a user module (and one by import path, one from a test's own scope) runs in
    the workers of a parallel sweep exactly as in a serial one."""
    _backend(backend)
    mod = f"plug_workers_{backend}"
    folder = write_plugin(tmp_path / "plugins", mod, register=True)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]))
    __import__(mod)

    def local_factory(**kwargs):  # defined here: sent to the workers by value
        return make_agent("uniform", **kwargs)

    register_agent(f"{mod}-local", local_factory, private=False)
    grid = Grid((AgentEntry(f"{mod}-greedy"), AgentEntry(f"{mod}:make_private", label="imported"),
                 AgentEntry(f"{mod}-local")), (ENV,), epsilons=(1.0,), seeds=(0, 3), horizon=64)
    serial = sweep(grid.cells(), tmp_path / "serial")
    parallel = sweep(grid.cells(), tmp_path / backend, jobs=2, backend=backend)
    assert len(parallel.ran) == 6
    assert set(parallel.table["agent"]) == {f"{mod}-greedy", "imported", f"{mod}-local"}
    pd.testing.assert_frame_equal(serial.table, parallel.table, check_exact=True)


@pytest.mark.slow
def test_a_factory_workers_cannot_import_fails_before_any_cell(tmp_path, monkeypatch):
    mod = "plug_gone"
    folder = write_plugin(tmp_path / "plugins", mod, register=True)
    monkeypatch.syspath_prepend(str(folder))
    __import__(mod)
    (folder / f"{mod}.py").unlink()  # this process has it, a fresh worker cannot import it
    monkeypatch.delitem(__import__("sys").modules, mod)  # (and neither can a reused one)
    cells = Grid((AgentEntry(f"{mod}-greedy"),), (ENV,), seeds=2, horizon=64).cells()
    with pytest.raises(PluginError, match=rf"a loky worker cannot find what the sweep needs, so no cell was run: "
                                          rf"agent '{mod}-greedy' from {mod}:make_greedy: cannot import '{mod}'"):
        sweep(cells, tmp_path / "out", jobs=2)
    assert not list((tmp_path / "out" / "cells").glob("*.csv"))


def install_example(tmp_path, monkeypatch) -> None:
    """Make examples/my_agent findable as an installed package would be (its entry point in a dist-info)."""
    pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11")
    from conftest import install_example_plugin

    for folder in reversed(install_example_plugin(tmp_path / "site")):
        monkeypatch.syspath_prepend(folder)


def test_the_example_plugin_is_rebuilt_from_its_parameters(tmp_path, monkeypatch):
    """make_agent("my-agent", **agent.get_params()) and clone(agent) play the same table: get_params gives the
    class's arguments (an oracle instance), the plugin's factory takes a budget, and make_agent passes the
    instance's budget on."""
    from privbandit.agents import AGENT_REGISTRY, clone

    install_example(tmp_path, monkeypatch)
    agent = make_agent("my-agent", epsilon=0.5)
    assert AGENT_REGISTRY.get("my-agent").info["privacy"] == "jdp"       # declared by the factory
    again, copy = make_agent("my-agent", **agent.get_params()), clone(agent)
    assert repr(again) == repr(copy) == repr(agent) and again.name == copy.name == "my-agent"
    tables = [run(a, "PrivLinCB-v0", 64, seed=2, env_kwargs=ENV.kwargs) for a in (agent, again, copy)]
    pd.testing.assert_frame_equal(tables[0], tables[1], check_exact=True)
    pd.testing.assert_frame_equal(tables[0], tables[2], check_exact=True)


@pytest.mark.slow
def test_the_example_package_runs_by_entry_point(tmp_path, monkeypatch):
    """examples/my_agent, found as an installed package would be (its entry point in a dist-info), runs a tiny
    challenger run beside the quick suite's baselines and passes the audit."""
    from privbandit.agents.audit import audit_agent
    from privbandit.bench import challenge

    install_example(tmp_path, monkeypatch)
    assert "my-agent" in agent_names()
    res = challenge("quick", "my-agent", tmp_path / "out", reference="elim-jdp-ucb", seeds=2, horizon=16)
    assert {"my-agent", "elim-jdp-ucb", "uniform"} <= set(res.table["agent"])
    assert "ldp" not in set(res.table[res.table["agent"] == "my-agent"]["privacy_model"])
    assert not res.comparison().empty
    # short streams and 300 final runs, as for the registered agents: a false refutation is no likelier with fewer
    # runs, and the found entry point, schedule and ledger are what this test checks
    audit = audit_agent("my-agent", 1.0, max_horizon=48, watch=8, pilot_draws=16, n_draws=300)
    assert audit.designs and not audit.refuted and "within the claim" in audit.ledger_status
