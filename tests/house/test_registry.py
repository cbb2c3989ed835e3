"""One Registry for agents, oracles and context families; agents that give back their constructor arguments."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pandas as pd
import pytest
from conftest import BUDGET, build_agent

from privbandit.agents import AGENT_REGISTRY, agent_is_private, agent_names, clone, make_agent, register_agent
from privbandit.envs import FAMILIES, FAMILY_REGISTRY, Isotropic, family_names, make_family, register_family
from privbandit.oracles import ORACLE_REGISTRY, Ridge, make_oracle, oracle_names, register_oracle
from privbandit.privacy import MODELS
from privbandit.registry import PluginError, Registry, paper_labels
from privbandit.sim import run

ENV = dict(family="rare-direction", dim=3, n_arms=3)


@pytest.fixture
def registry():
    def check(name, obj, info):
        if not isinstance(obj, int):
            raise TypeError(f"{name} must be an int, got {type(obj).__name__}")
        return {"doubled": 2 * obj, **info}

    return Registry("number", "privbandit.test-numbers", check)


def test_register_get_names_and_a_duplicate(registry):
    assert registry.register("one", 1) == 1
    registry.register("one", 1)                           # the same registration again: a no-op
    assert registry.get("one").info == {"doubled": 2} and "one" in registry and registry.names() == ("one",)
    with pytest.raises(ValueError, match="a number named 'one' is already registered"):
        registry.register("one", 2)
    with pytest.raises(TypeError, match="must be an int"):
        registry.register("half", 0.5)
    with pytest.raises(ValueError, match="unknown number 'two'; choose one of \\('one',\\)"):
        registry.get("two")
    assert dict(registry.view()) == {"one": 1}
    registry.unregister("one")
    assert registry.names() == () and len(registry.view()) == 0


def test_an_import_path_goes_through_the_checks_of_register(registry):
    import errno

    assert registry.get("errno:ENOENT").info == {"doubled": 2 * errno.ENOENT}
    assert "errno:ENOENT" in registry.names()
    with pytest.raises(PluginError, match="number plugin 'math:pi': math:pi must be an int, got float"):
        registry.get("math:pi")
    assert "math:pi" not in registry
    with pytest.raises(PluginError, match="has no attribute 'nope'"):
        registry.get("math:nope")


def test_an_oracle_by_import_path_is_checked_like_register_oracle():
    with pytest.raises(PluginError, match="must be a subclass of privbandit.oracles.Oracle"):
        make_oracle("privbandit.envs:Isotropic")
    with pytest.raises(ValueError, match="has no name"):
        register_oracle(type("Nameless", (Ridge,), {"name": ""}))

    @dataclasses.dataclass(frozen=True)
    class Other(Ridge):
        name: ClassVar[str] = "ridge"

    with pytest.raises(ValueError, match="an oracle named 'ridge' is already registered"):
        register_oracle(Other)
    assert ORACLE_REGISTRY.get("ridge").obj is Ridge


def test_families_are_read_only_and_register_family_adds_one():
    with pytest.raises(TypeError):
        FAMILIES["mine"] = Isotropic  # type: ignore[index]

    @dataclasses.dataclass(frozen=True, eq=False)
    class Mine(Isotropic):
        name: ClassVar[str] = "test-mine"

    register_family(Mine)
    try:
        assert FAMILIES["test-mine"] is Mine and "test-mine" in family_names()
        assert type(make_family("test-mine", dim=3)) is Mine
        with pytest.raises(TypeError, match="must be a subclass of privbandit.envs.ContextFamily"):
            FAMILY_REGISTRY.register("bad", Ridge)
    finally:
        FAMILY_REGISTRY.unregister("test-mine")
    assert "test-mine" not in FAMILIES


@pytest.mark.parametrize("name", agent_names())
def test_every_agent_describes_itself_for_the_catalogue(name):
    facts = AGENT_REGISTRY.describe(name)
    assert facts["name"] == name and facts["kind"] == "agent" and facts["description"]
    assert facts["privacy_model"] in MODELS and facts["private"] == (facts["privacy_model"] != "none")
    agent = build_agent(name)
    module, _, qualname = facts["agent_class"].partition(":")
    assert (module, qualname) == (type(agent).__module__, type(agent).__qualname__)
    # every argument make_agent passes on, in the constructor's order; a non-private name takes no budget, and the
    # audit seam (mechanism) is not a hyperparameter
    arguments = [a for a in type(agent).constructor_parameters()
                 if (facts["private"] or a not in ("epsilon", "delta")) and a != "mechanism"]
    params = {k: v for k, v in agent.get_params().items() if k != "mechanism"}
    assert list(facts["hyperparameters"]) == arguments and set(params) <= set(arguments)
    assert facts["required"] == (("epsilon",) if facts["private"] else ())
    for param, fact in facts["hyperparameters"].items():
        assert fact["allowed"], f"{name}: {param} has no declared constraint"
    # the defaults of what the agent keeps are values make_agent takes (an oracle by its name) and build it again
    kept = {k: facts["hyperparameters"][k]["default"] for k in params if k not in facts["required"]}
    budget = {k: v for k, v in BUDGET.items() if k not in kept} if facts["private"] else {}
    assert repr(make_agent(name, **budget, **kept)) == repr(agent)


@pytest.mark.parametrize("name", oracle_names())
def test_every_oracle_describes_itself_for_the_catalogue(name):
    facts = ORACLE_REGISTRY.describe(name)
    cls = ORACLE_REGISTRY.get(name).obj
    assert facts["privacy_models"] == cls.privacy_models
    assert facts["paper_labels"] or cls.privacy_models == ("none",)      # every private oracle cites the paper
    init = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in ("privacy", "mechanism")]
    assert list(facts["hyperparameters"]) == init
    assert all(fact["allowed"] for fact in facts["hyperparameters"].values())
    assert facts["required"] == (("epsilon",) if cls.privacy_models[0] != "none" else ())
    budget = BUDGET if facts["required"] else {}
    assert make_oracle(name, **budget, **{k: v["default"] for k, v in facts["hyperparameters"].items()}) == \
        make_oracle(name, **budget)                                       # the defaults are the class's


def test_describe_says_the_declared_range():
    facts = ORACLE_REGISTRY.describe("iw-regression-ldp")
    assert facts["hyperparameters"]["u_fraction"] == {"default": 0.5, "allowed": "real in (0.0, 1.0)"}
    assert "alg:LDP-linear-regression" in facts["paper_labels"]
    assert ORACLE_REGISTRY.describe("iw-fixed-p-dp")["hyperparameters"]["features"]["allowed"] == \
        "a finite 2-D float array, not empty"
    agent = AGENT_REGISTRY.describe("elim-jdp-ucb")
    assert agent["hyperparameters"]["play"]["default"] == "ucb" and agent["oracle"] == "iw-regression-dp"
    assert agent["hyperparameters"]["first_epoch"]["allowed"] == "int in [1, inf)"
    assert agent["hyperparameters"]["oracle"]["default"] == "iw-regression-dp"    # the name, not the instance
    assert agent["hyperparameters"]["epsilon"] == {"default": None, "allowed": "None or real in (0.0, inf)"}
    assert agent["required"] == ("epsilon",) and agent["paper_labels"] == ("alg:batch-cb-JDP",)
    assert "epsilon" not in AGENT_REGISTRY.describe("elim-nonprivate")["hyperparameters"]


def test_describe_falls_back_on_the_kinds_paper_labels():
    # linucb's description names no label: the labels of its class docstring (its References) stand in
    assert AGENT_REGISTRY.describe("linucb")["paper_labels"] == ("tab:comp",)
    assert AGENT_REGISTRY.describe("epsilon-greedy")["paper_labels"] == ()
    assert paper_labels("ridge (ssec:OLS, tab:comp); see ssec:OLS") == ("ssec:OLS", "tab:comp")


@pytest.mark.parametrize("name", agent_names())
def test_get_params_rebuilds_an_agent_that_plays_the_same(name):
    agent = build_agent(name)
    params = agent.get_params()
    again = make_agent(name, **params)
    assert type(again) is type(agent) and again.get_params().keys() == params.keys()
    assert repr(again) == repr(agent) and repr(agent).startswith(f"{type(agent).__name__}(")
    first = run(agent, "PrivLinCB-v0", 96, seed=5, env_kwargs=ENV)
    second = run(again, "PrivLinCB-v0", 96, seed=5, env_kwargs=ENV)
    pd.testing.assert_frame_equal(first, second, check_exact=True)
    rebuilt = type(agent)(**params)
    assert rebuilt.get_params().keys() == params.keys()


@pytest.mark.parametrize("name", agent_names())
def test_clone_and_set_params_rebuild_an_agent_that_plays_the_same(name):
    agent = build_agent(name)
    params = agent.get_params()
    copy = clone(agent)
    assert type(copy) is type(agent) and copy is not agent and repr(copy) == repr(agent) and copy.name == agent.name
    first = run(agent, "PrivLinCB-v0", 64, seed=3, env_kwargs=ENV)
    pd.testing.assert_frame_equal(first, run(copy, "PrivLinCB-v0", 64, seed=3, env_kwargs=ENV), check_exact=True)
    # set_params with the same values rebuilds the same agent, in place; an unknown name is refused
    assert agent.set_params(**params) is agent and repr(agent) == repr(copy) and agent.name == copy.name
    pd.testing.assert_frame_equal(first, run(agent, "PrivLinCB-v0", 64, seed=3, env_kwargs=ENV), check_exact=True)
    with pytest.raises(ValueError, match=r"has no parameter\(s\) \['no_such_parameter'\]"):
        agent.set_params(no_such_parameter=1)


def test_set_params_changes_a_parameter_and_checks_it():
    agent = make_agent("elim-jdp", epsilon=0.5)
    assert agent.set_params(play="ucb").play == "ucb" and agent.privacy.epsilon == 0.5
    assert agent.name == "elim-jdp" and clone(agent, width_cap=1.0).width_cap == 1.0
    with pytest.raises(ValueError, match="play must be one of"):
        agent.set_params(play="best")
    assert agent.play == "ucb"                                # a refused change leaves the agent as it was


def test_privacy_is_declared_at_registration_or_on_the_factory():
    def factory(**kwargs):
        """A factory of **kwargs, whose signature says nothing of privacy."""
        return make_agent("elim-jdp", **kwargs)

    try:
        register_agent("test-declared", factory, privacy="jdp")
        assert AGENT_REGISTRY.get("test-declared").info["private"] is True
        assert AGENT_REGISTRY.get("test-declared").info["privacy"] == "jdp"
        with pytest.raises(ValueError, match="test-declared is private: choose a budget"):
            make_agent("test-declared")
        factory.privacy_model = "jdp"
        register_agent("test-attribute", factory)
        assert AGENT_REGISTRY.get("test-attribute").info["private"] is True
        with pytest.raises(ValueError, match="privacy must be one of"):
            register_agent("test-bad", factory, privacy="central")
        with pytest.raises(ValueError, match="private=False contradicts privacy='jdp'"):
            register_agent("test-both", factory, privacy="jdp", private=False)
    finally:
        for name in ("test-declared", "test-attribute", "test-bad", "test-both"):
            AGENT_REGISTRY.unregister(name)


def test_repr_shows_the_name_the_budget_and_the_arguments_off_their_defaults():
    agent = make_agent("linucb", lam=2.0, radius="practical")
    assert repr(agent) == "LinUCBAgent(name='linucb', lam=2.0, radius='practical')"
    assert agent.get_params()["c_width"] is None          # as given, not the practical width it stands for
    assert repr(make_agent("elim-ucb")) == ("EliminationAgent(name='elim-ucb', oracle=Ridge(), play='ucb', "
                                            "pooling='ridge')")
    jdp = make_agent("elim-jdp", epsilon=0.5)
    assert repr(jdp) == "EliminationAgent(name='elim-jdp', epsilon=0.5, delta=1e-05, oracle=IWRegressionDP())"
    # the budget shows at its defaults too (scikit-learn hides defaults; a budget is never hidden)
    assert repr(make_agent("elim-jdp", epsilon=1.0, delta=1e-5)).startswith(
        "EliminationAgent(name='elim-jdp', epsilon=1.0, delta=1e-05, ")
    assert make_agent("elim-jdp", **jdp.get_params()).privacy == jdp.privacy


def test_a_preset_label_means_its_agent_with_its_kwargs_in_make_agent_and_in_the_suites(monkeypatch):
    from privbandit.agents import registry
    from privbandit.agents.registry import PRESETS, agent_is_private, preset, register_preset
    from privbandit.bench.labels import resolve_label
    from privbandit.bench.suites import SUITES

    assert preset("linucb-practical") == ("linucb", {"radius": "practical"})
    assert make_agent("linucb-practical").radius == "practical"
    assert make_agent("linucb-practical", radius="theory").radius == "theory"        # given kwargs win
    assert make_agent("ldp-ucb-practical", epsilon=1.0).privacy.label() == "ldp(eps=1, delta=1e-05)"
    assert agent_is_private("linucb-jdp-practical") and not agent_is_private("linucb-practical")
    glm = make_agent("elim-glm-jdp-ucb", epsilon=1.0)
    assert (glm.play, glm.name) == ("ucb", "elim-glm-jdp")
    entries = [e for s in SUITES.values() for g in s.grids for e in g.agents if e.label in PRESETS]
    named = {e.label for s in SUITES.values() for g in s.grids for e in g.agents if e.label != e.name}
    assert named == {e.label for e in entries} and "linucb-jdp-batch64" in named   # one way to name a configuration
    for e in entries:
        assert (e.name, dict(e.kwargs)) == preset(e.label) == resolve_label(e.label)
    # every preset is in a suite, as the registry says: by its label, or batched (label-batchN, its kwargs and
    # batch_size; the GLM boards refit glm-ucb every 4096 rounds)
    batched = [e for s in SUITES.values() for g in s.grids for e in g.agents if "-batch" in e.label]
    for label in PRESETS:
        name, kwargs = preset(label)
        assert label in {e.label for e in entries} or any(
            e.label.startswith(f"{label}-batch") and e.name == name and dict(e.kwargs) == {
                **kwargs, "batch_size": int(e.label.rsplit("-batch", 1)[1])} for e in batched), label
    with pytest.raises(ValueError, match="registered agent's name"):
        register_preset("linucb", "linucb", radius="practical")
    with pytest.raises(ValueError, match="already the preset"):
        register_preset("linucb-practical", "linucb", radius="theory")
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        preset("nope")
    monkeypatch.setattr(registry, "PRESETS", dict(PRESETS))
    register_preset("linucb-practical", "linucb", radius="practical")   # the same preset again is fine


def test_no_code_path_builds_an_agent_to_learn_its_privacy_model(monkeypatch, capsys):
    """Every registered factory counts its calls while the registry, the grids, the suites, the challenger and
    ``privbandit list`` ask for privacy: none is called (the model is the registration's)."""
    import functools

    from privbandit import cli
    from privbandit.agents.registry import PRESETS, agent_privacy
    from privbandit.bench.challenger import agent_model, challenger_entry, challenger_suite
    from privbandit.bench.grid import AgentEntry
    from privbandit.bench.labels import resolve_label, suite_variants
    from privbandit.bench.suites import SUITES

    calls: list[str] = []
    originals = {name: AGENT_REGISTRY.get(name) for name in agent_names()}

    def counting(name, factory):
        @functools.wraps(factory)
        def make(*args, **kwargs):
            calls.append(name)
            return factory(*args, **kwargs)
        return make

    def register(entries):
        for name, entry in entries.items():
            AGENT_REGISTRY.unregister(name)
            info = {k: entry.info[k] for k in ("description", "private", "privacy", "counterpart")}
            AGENT_REGISTRY.register(name, entry.obj, **info)

    try:
        register({name: type(e)(name, counting(name, e.obj), e.info) for name, e in originals.items()})
        assert {AGENT_REGISTRY.get(n).info["budget"] for n in agent_names()} == {(), ("epsilon", "delta")}
        models = {name: agent_privacy(name) for name in (*agent_names(), *PRESETS)}
        assert set(models.values()) == {"none", "jdp", "ldp"} and models["linucb-jdp-practical"] == "jdp"
        assert all(agent_is_private(n) == (m != "none") for n, m in models.items())
        assert agent_privacy("elim-jdp", {"oracle": "ridge"}) == "none"          # the oracle decides, unbuilt
        for suite in SUITES.values():
            suite.left_out(), suite.cells()           # every entry's privacy, and whether it is available
            for entry in {a for g in suite.grids for a in g.agents}:
                assert agent_model(entry) == agent_privacy(entry.name, dict(entry.kwargs))
        for name in agent_names():
            entry = challenger_entry(name, label=f"mine-{name}")
            assert entry.privacy_model() == models[name] == AgentEntry(name).privacy_model()
            if name in ("elim-jdp", "elim-ldp", "linucb"):
                challenger_suite("quick", entry, seeds=1, horizon=8).cells()
        suite_variants(), resolve_label("linucb-practical")
        assert cli.main(["list", "agents"]) == 0
        assert calls == []
        make_agent("elim-jdp", epsilon=1.0)
        assert calls == ["elim-jdp"]                                           # the count counts
    finally:
        register(originals)
    capsys.readouterr()


def test_a_registration_without_a_model_is_asked_for_it_not_built(tmp_path):
    from privbandit.bench.challenger import challenger_entry
    from privbandit.bench.grid import AgentEntry
    from privbandit.bench.workflow import BenchError, run_agent

    def private(*, epsilon, delta=1e-5):
        return make_agent("elim-jdp", epsilon=epsilon, delta=delta)

    def silent(**kwargs):
        return make_agent("elim-jdp", **kwargs)

    def pure(*, epsilon):
        return make_agent("elim-jdp", epsilon=epsilon)

    try:
        register_agent("test-private", private, private=True)
        register_agent("test-silent", silent)
        register_agent("test-pure", pure)
        assert AGENT_REGISTRY.get("test-private").info["privacy"] == "any"
        assert AGENT_REGISTRY.get("test-pure").info["budget"] == ("epsilon",)
        with pytest.raises(ValueError, match=r"takes the budget keyword\(s\) \['epsilon'\] only, got delta"):
            make_agent("test-pure", epsilon=1.0, delta=1e-5)
        assert AgentEntry("test-private").is_private() and AgentEntry("test-private").privacy_model() == "any"
        with pytest.raises(ValueError, match="does not declare its privacy model"):
            challenger_entry("test-private")
        assert challenger_entry("test-private", private="jdp").privacy_model() == "jdp"   # the claim names it
        with pytest.raises(ValueError, match="does not say whether it takes a privacy budget"):
            AgentEntry("test-silent").is_private()
        assert not AgentEntry("test-silent", private=False).is_private()
        with pytest.raises(BenchError, match="test-silent.* is private: choose a budget"):
            run_agent("PrivLinCB-v0", "test-silent", out=tmp_path / "r", horizon=8, seeds=1)
    finally:
        for name in ("test-private", "test-silent", "test-pure"):
            AGENT_REGISTRY.unregister(name)
