"""Helpers shared by several test files: ``from conftest import build_oracle`` (pytest puts tests/ on the path).

The test folders mirror the package (``tests/agents/`` for ``privbandit/agents/``, ...; ``tests/house/`` for the checks
that span the house); a helper that files of two folders use lives here.

Each helper is one idea that several files had written for themselves: the dimension an oracle test uses,
the public sample of the distribution-specific oracles, an oracle or an agent built with the budget a
private one needs.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
import pytest

from privbandit.agents import UniformAgent, agent_is_private, make_agent
from privbandit.agents.registry import AGENT_REGISTRY
from privbandit.oracles import make_oracle, oracle_class
from privbandit.privacy import GaussianMechanism, LocalRandomizer, PrivacySpec

ONE_DIMENSIONAL = frozenset({"ldp-1d"})
"""Oracles that only fit d = 1."""

PUBLIC_FIELDS = ("features", "public_features")
"""Fields through which a distribution-specific oracle takes a public sample of the features."""

BUDGET = {"epsilon": 1.0, "delta": 1e-5}
"""The privacy level a test gives a private oracle or agent unless it says otherwise."""


@pytest.fixture(autouse=True)
def registrations_leave_with_their_test():
    """An agent a test registers (by ``register_agent`` or by loading an import path) is forgotten after it, so a
    later test that lists the registered agents (the API's, the catalogue's) sees the library's only."""
    before = set(AGENT_REGISTRY.view())
    yield
    for name in set(AGENT_REGISTRY.view()) - before:
        AGENT_REGISTRY.unregister(name)


def oracle_dim(name: str, dim: int) -> int:
    """The dimension a test of oracle ``name`` uses: ``dim``, or 1 for a one-dimensional oracle."""
    return 1 if name in ONE_DIMENSIONAL else dim


def public_sample(dim: int, n: int = 200, seed: int = 99) -> np.ndarray:
    """n Gaussian rows of dimension ``dim`` projected into the unit ball (a public sample of features)."""
    public = np.random.default_rng(seed).standard_normal((n, dim))
    public /= np.maximum(1.0, np.linalg.norm(public, axis=1, keepdims=True))
    return public


def build_oracle(name: str, public: np.ndarray | Callable[[], np.ndarray], **kwargs: Any):
    """``make_oracle(name, **kwargs)`` plus what a test's oracle needs besides its own arguments.

    A distribution-specific oracle gets ``public`` in each of its :data:`PUBLIC_FIELDS` (a callable is called
    only then, so that a test drawing it from its own rng draws nothing for the other oracles); a private
    oracle gets :data:`BUDGET` unless ``kwargs`` set it.
    """
    cls = oracle_class(name)
    fields = [f.name for f in dataclasses.fields(cls) if f.name in PUBLIC_FIELDS]
    if fields:
        sample = public() if callable(public) else public
        kwargs = {**dict.fromkeys(fields, sample), **kwargs}
    if cls.privacy_models != ("none",):
        kwargs = {**BUDGET, **kwargs}
    return make_oracle(name, **kwargs)


def build_agent(name: str, **kwargs: Any):
    """``make_agent(name, **kwargs)``, with :data:`BUDGET` if the agent is private."""
    return make_agent(name, **(BUDGET if agent_is_private(name) else {}), **kwargs)


@dataclasses.dataclass(frozen=True)
class Undernoised:
    """A planted leak: ``mechanism``'s release with its noise cut ``divide`` times, reporting ``mechanism``'s own
    (calibrated) sensitivity and ledger entry, so the ledger check passes and only an audit can find it."""

    mechanism: GaussianMechanism
    divide: float

    @property
    def sensitivity(self) -> float:
        return self.mechanism.sensitivity

    @property
    def sigma(self) -> float:
        return self.mechanism.sigma / self.divide

    def release(self, values, rng=None):
        return dataclasses.replace(self.mechanism, sigma=self.sigma).release(values, rng)

    def ledger_entry(self):
        return self.mechanism.ledger_entry()


def undernoised(divide: float, kinds: tuple[type, ...] = (GaussianMechanism,)) -> Callable[[Any], Any]:
    """An oracle's ``mechanism`` hook (the public seam) that plants :class:`Undernoised` on every mechanism whose
    type is one of ``kinds``: a central release's, or a local randomizer's channel."""

    def hook(mechanism):
        if isinstance(mechanism, LocalRandomizer):
            return dataclasses.replace(mechanism, channel=hook(mechanism.channel))
        return Undernoised(mechanism, divide) if type(mechanism) in kinds else mechanism

    return hook


class RecordedRandomizers:
    """A ``mechanism`` hook (an oracle's or an agent's) that records, in order, each local randomizer a fit or an agent
    builds (``randomizers``) and, for each, the rows its calls were handed (``inputs``: (features, rewards) pairs) and
    the arrays they returned (``outputs``): what the server aggregates, seen from outside. A central mechanism
    passes unchanged."""

    def __init__(self) -> None:
        self.randomizers: list[LocalRandomizer] = []
        self.inputs: list[list[tuple[np.ndarray, np.ndarray]]] = []
        self.outputs: list[list[np.ndarray]] = []

    def __call__(self, randomizer: Any) -> Any:
        if not isinstance(randomizer, LocalRandomizer):
            return randomizer
        self.randomizers.append(randomizer)
        self.inputs.append([])
        self.outputs.append([])
        return _Recording(randomizer, self.inputs[-1], self.outputs[-1])

    def returned(self, k: int = -1) -> np.ndarray:
        """Every output randomizer ``k`` returned, one row per record."""
        return np.concatenate(self.outputs[k])


@dataclasses.dataclass(frozen=True)
class _Recording:
    randomizer: LocalRandomizer
    inputs: list
    calls: list

    def __call__(self, features, rewards, rng=None):
        self.inputs.append((np.array(features, dtype=float), np.array(rewards, dtype=float)))
        out = self.randomizer(features, rewards, rng)
        self.calls.append(out.copy())
        return out

    def ledger_entry(self):
        return self.randomizer.ledger_entry()


def planted_twin(name: str, hook: Callable[[Any], Any], **kwargs: Any):
    """Agent ``name`` built with ``kwargs`` that releases through ``hook``: given to the agent's own ``mechanism`` seam
    (an agent that builds its noise itself, e.g. ``linucb-jdp``, ``ldp-ucb``), else to its oracle's (its default one
    at that budget)."""
    agent = make_agent(name, **kwargs)
    if "mechanism" in type(agent).constructor_parameters():
        return make_agent(name, mechanism=hook, **kwargs)
    oracle = dataclasses.replace(agent.oracle, mechanism=hook)
    return make_agent(name, oracle=oracle, **{k: v for k, v in kwargs.items() if k not in ("epsilon", "delta")})


def twin_factory(name: str, divide: float) -> Callable[..., Any]:
    """An agent factory (for ``register_agent``: the audit takes agent names) of ``name``'s :func:`planted_twin`
    whose Gaussian releases carry 1/``divide`` of their noise."""

    def factory(*, epsilon, delta=1e-5, **kwargs):
        return planted_twin(name, undernoised(divide), epsilon=epsilon, delta=delta, **kwargs)

    return factory


ROOT = Path(__file__).resolve().parents[1]
"""The checkout: its README, docs, scripts and examples."""

ALLOWED_TAGS = ("python", "bash", "text")
"""The fence tags of the README (and, with ``pycon``, of the docs): anything else hides a block from the tests."""

BLOCK_TIMEOUT = 60.0
"""Seconds a documented block may run in :func:`run_block`."""


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line number of the opening fence, tag, body) of every ``` fenced block of a Markdown text.

    Raises
    ------
    ValueError
        If a fence is left open at the end of the text.
    """
    blocks: list[tuple[int, str, str]] = []
    start, tag, body = 0, "", []
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped.startswith("```"):
            if inside:
                body.append(line)
            continue
        if inside:
            if stripped != "```":
                raise ValueError(f"line {number}: a fence opens inside the block opened on line {start}")
            blocks.append((start, tag, "\n".join(body) + "\n"))
            inside = False
        else:
            start, tag, body, inside = number, stripped[3:].strip(), [], True
    if inside:
        raise ValueError(f"the block opened on line {start} is never closed")
    return blocks


def run_block(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter in ``cwd``, importing this checkout's ``privbandit``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=BLOCK_TIMEOUT)


class LeakyUniform(UniformAgent):
    """A uniform agent that claims (1, 1e-5)-JDP and records a release with too little noise."""

    name: ClassVar[str] = "leaky"
    noise_scale: ClassVar[float] = 0.5

    @property
    def privacy(self) -> PrivacySpec:
        return PrivacySpec("jdp", 1.0, 1e-5)

    def _observe(self, x, y):
        mech = GaussianMechanism.calibrated(1.0, 1e-5, sensitivity=2.0)
        entry = mech.ledger_entry()
        entry = dataclasses.replace(entry, parameter=entry.parameter * self.noise_scale)
        self.ledger.record(self.t, self.t + x.shape[0], entry, label="leak")


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module, importing its sibling modules (``demo_studies``, ``paper_rates``) as it
    does when run, from its own folder; the BLAS thread variables it sets on import are taken back (other tests'
    processes)."""
    folder = ROOT / "scripts"
    spec = importlib.util.spec_from_file_location(f"_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    environ = dict(os.environ)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
        os.environ.clear()
        os.environ.update(environ)
    return module


EXAMPLE_PLUGIN = ROOT / "examples" / "my_agent"
"""The example plugin package (its agent ``my-agent`` through the entry point of its pyproject.toml)."""


def install_example_plugin(site: Path) -> list[str]:
    """examples/my_agent as ``pip install`` would leave it, without installing: a dist-info in ``site`` holding
    its entry points. The folders to put on the import path (``site`` and the package's), in that order."""
    import tomllib

    eps = tomllib.loads((EXAMPLE_PLUGIN / "pyproject.toml").read_text())["project"]["entry-points"]
    info = site / "my_agent-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-agent\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
                                                   for group, points in eps.items()))
    return [str(site), str(EXAMPLE_PLUGIN)]
