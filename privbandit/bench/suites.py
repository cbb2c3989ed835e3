"""The named benchmark suites: ``quick`` (the README's main job, minutes on a laptop), ``paper`` and ``agents``.

A suite is a list of :class:`~privbandit.bench.grid.Grid` s (agents x envs x epsilons x seeds at one
horizon). The agents are plain data (tuples of :class:`~privbandit.bench.grid.AgentEntry`): to add an
agent to a suite, append an entry to :data:`JDP_AGENTS` or :data:`LDP_AGENTS`. Entries whose agent (or
oracle) is not registered in this install are left out when the suite's cells are built, and listed
in :meth:`Suite.missing`.

Each suite's ``description`` says what it runs, written once: a report's header and the results board quote it.
``paper`` and ``agents`` take hours on a laptop (use ``--jobs`` or a cluster).

References
----------
Source paper, `tab:comp`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`, `alg:square-cb`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..agents import agent_names
from ..agents.registry import preset, register_preset
from ..oracles import oracle_names
from .grid import DEFAULT_ENTROPY, AgentEntry, Cell, EnvEntry, Grid


def preset_entry(label: str, **kwargs) -> AgentEntry:
    """The entry of a preset label of the agent registry (:func:`privbandit.agents.registry.preset`): its agent
    with its keyword arguments, labelled ``label``; ``kwargs`` (``private``, ``reference``, ...) go to
    :class:`~privbandit.bench.grid.AgentEntry`. A suite names every configured agent this way (a label that is
    not a registered name is a preset), so the registry, the suites, the labels and the CLI share one name."""
    name, preset_kwargs = preset(label)
    return AgentEntry(name, preset_kwargs, label=label, **kwargs)


JDP_AGENTS: tuple[AgentEntry, ...] = (
    AgentEntry("uniform", private=False),
    AgentEntry("epsilon-greedy", private=False),
    AgentEntry("linucb", private=False),
    AgentEntry("elim-nonprivate", private=False),
    AgentEntry("elim-jdp", private=True, reference="elim-nonprivate"),
    AgentEntry("elim-ucb", private=False),
    AgentEntry("elim-jdp-ucb", private=True, reference="elim-ucb"),
    AgentEntry("elim-ssp", private=True, reference="elim-nonprivate"),
    AgentEntry("linucb-jdp", private=True, reference="linucb"),
    preset_entry("linucb-practical", private=False),
    preset_entry("linucb-jdp-practical", private=True, reference="linucb-practical"),
    AgentEntry("squarecb-nonprivate", private=False),
    AgentEntry("squarecb-dpsgd", private=True, reference="squarecb-nonprivate"),
    AgentEntry("squarecb-jdp-iw", private=True, reference="squarecb-nonprivate"),
    AgentEntry("elim-jdp-pooled", private=True, reference="elim-ucb", version=3),  # versions: the changelog
    AgentEntry("squarecb-jdp-iw-cal", private=True, reference="squarecb-nonprivate"),
)
"""Agents of the joint-DP blocks (and the non-private references); extend by appending. The LinUCB baselines
appear with both radii: the theorem's (their default) and ``radius="practical"`` (the registry's presets
``*-practical``)."""

LDP_AGENTS: tuple[AgentEntry, ...] = (
    AgentEntry("uniform", private=False),
    AgentEntry("elim-nonprivate", private=False),
    AgentEntry("elim-ldp", private=True, reference="elim-nonprivate"),
    AgentEntry("elim-ldp-greedy", private=True),  # no non-private agent plays greedy among the survivors
    AgentEntry("elim-ldp-ssp", private=True, reference="elim-nonprivate"),
    AgentEntry("ldp-ucb", private=True, reference="linucb"),
    preset_entry("ldp-ucb-practical", private=True, reference="linucb-practical"),
    AgentEntry("linucb", private=False),
    AgentEntry("squarecb-ldp-sgd", private=True, reference="squarecb-nonprivate"),
    AgentEntry("elim-ldp-pooled", private=True, reference="elim-ucb", version=2),
    AgentEntry("elim-ldp-vec", private=True, reference="elim-ucb"),
    preset_entry("linucb-practical", private=False),
)
"""Agents of the local-DP blocks; extend by appending. ``linucb-practical`` is the best non-private reference
(LinUCB with the practical radius), so a board shows the price of local privacy against it."""

GLM_JDP_AGENTS: tuple[AgentEntry, ...] = (
    AgentEntry("uniform", private=False),
    AgentEntry("elim-nonprivate", private=False),
    AgentEntry("elim-glm-jdp", private=True, reference="elim-nonprivate"),
    AgentEntry("elim-jdp", private=True, reference="elim-nonprivate"),
)
"""Agents of the GLM block."""


def lin_env(family: str, dim: int, n_arms: int, **kwargs) -> EnvEntry:
    """A ``PrivLinCB-v0`` entry labelled ``family-d{dim}k{n_arms}``."""
    return EnvEntry(f"{family}-d{dim}k{n_arms}", "PrivLinCB-v0", dict(family=family, dim=dim, n_arms=n_arms, **kwargs))


def glm_env(family: str, dim: int, n_arms: int, scale: float | None = None, **kwargs) -> EnvEntry:
    """A ``PrivGLMCB-v0`` entry labelled ``glm-family-d{dim}k{n_arms}`` (the logistic link at its default slope),
    or ``glm-family-d{dim}k{n_arms}-s{scale}`` with the logistic link's slope ``scale`` given."""
    link = {} if scale is None else {"link_kwargs": {"scale": scale}}
    return EnvEntry(f"glm-{family}-d{dim}k{n_arms}" + ("" if scale is None else f"-s{scale:g}"), "PrivGLMCB-v0",
                    dict(family=family, dim=dim, n_arms=n_arms, **link, **kwargs))


def agent_available(entry: AgentEntry) -> bool:
    """Whether the entry's agent (and the oracle its kwargs name) is registered in this install, and its
    registration or the entry says whether it is private. Read from the registries: no agent is built."""
    if entry.name not in agent_names():
        return False
    oracle = dict(entry.kwargs).get("oracle")
    if isinstance(oracle, str) and oracle not in oracle_names():
        return False
    try:
        entry.privacy_model()
    except ValueError:
        return False
    return True


def env_available(entry: EnvEntry) -> bool:
    """Whether the entry's env can be made in this install (False when it needs a missing optional extra,
    e.g. ``PrivCBify-v0`` on a scikit-learn dataset without ``privbandit[data]``)."""
    try:
        entry.make(1).close()
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Suite:
    """A named benchmark: grids of agents x envs x epsilons x seeds.

    Parameters
    ----------
    name : str
    description : str
    grids : tuple of Grid
    slope_window : (int, int) or (None, None)
        The window of the log-log slopes in the report (default [T/64, T]).
    results_version : int
        The version of the numbers its cells produce. Raise it whenever a change to the library changes a
        baseline's numbers (``tests/bench/test_reference.py`` re-runs one stored cell of every baseline and fails
        then), and regenerate the stored results with ``privbandit store-reference``. It enters
        :func:`privbandit.bench.stored.suite_version`. A change to one agent's numbers can instead raise that
        entry's ``version`` (:class:`~privbandit.bench.grid.AgentEntry`): only its cells get a new identity, and
        the command runs only them.
    """

    name: str
    description: str
    grids: tuple
    slope_window: tuple = (None, None)
    results_version: int = 1

    def available_grids(self) -> list[Grid]:
        """The grids with only the agents and envs this install can build (grids left empty are dropped)."""
        out = []
        for g in self.grids:
            agents = tuple(a for a in g.agents if agent_available(a))
            envs = tuple(e for e in g.envs if env_available(e))
            if agents and envs:
                out.append(replace(g, agents=agents, envs=envs))
        return out

    def missing(self) -> list[str]:
        """Labels of the suite's agents and envs this install cannot build (a missing oracle, or an env that
        needs an optional extra: ``privbandit[data]`` for the real-data envs)."""
        labels = {a.label for g in self.grids for a in g.agents if not agent_available(a)}
        labels |= {e.label for g in self.grids for e in g.envs if not env_available(e)}
        return sorted(labels)

    def left_out(self) -> str | None:
        """One line on what this install leaves out of the suite: how many cells, the envs that need an
        optional extra and the agents it cannot build (None when it leaves out nothing)."""
        envs = sorted({e.label for g in self.grids for e in g.envs if not env_available(e)})
        agents = sorted({a.label for g in self.grids for a in g.agents if not agent_available(a)})
        if not envs and not agents:
            return None
        why = [f"the real-data env {label} needs the data extra" for label in envs]
        why += [f"agent {label} is not registered in this install" for label in agents]
        if envs:
            why[len(envs) - 1] += ' (pip install -e ".[data]", or pip install "privbandit[data]")'
        countable = [replace(g, agents=tuple(a for a in g.agents if a.private is not None or a.label not in agents))
                     for g in self.grids]  # an agent not registered may not say whether it is private
        everything = {c.key for g in countable for c in g.cells()}
        return f"{len(everything) - len(self.cells())} of the suite's {len(everything)} cells left out: " + \
            "; ".join(why)

    def shrunk_from(self, full: Suite) -> str | None:
        """One line on how this suite's grids differ from ``full``'s (the suite as designed, the grids this install
        can build): the seeds, horizons, epsilons and deltas that ran instead of the suite's, and the suite's cells
        left out (agents, envs, epsilons or seeds that did not run). None when they are the same.

        ``privbandit bench --seeds 2 --horizon 4096`` runs ``replace(full, grids=...)``: its report's header says
        this line, so that it never describes the full suite as what ran.

        Parameters
        ----------
        full : Suite
            The suite as designed (``get_suite(name)``); its cells are those this install can build.

        Returns
        -------
        str or None
            ``"this command ran suite `NAME` with ..."``: "; "-joined changes, e.g. ``2 seeds (0, 1) per cell (the
            suite: 4 seeds (0-3) or 2 seeds (0, 1))``, ``T = 4096 (the suite: 2^16 or 2^14)``, ``96 of the suite's
            214 cells left out (seeds 2, 3)``.

        Examples
        --------
        >>> small = replace(QUICK, grids=tuple(replace(g, seeds=2, horizon=4096) for g in QUICK.available_grids()))
        >>> small.shrunk_from(QUICK).split(";")[0]
        'this command ran suite `quick` with 2 seeds (0, 1) per cell (the suite: 4 seeds (0-3) or 2 seeds (0, 1))'
        """
        mine, theirs = self.grids, full.available_grids()

        def seeds(s: tuple[int, ...]) -> str:
            run = len(s) > 2 and list(s) == list(range(s[0], s[-1] + 1))
            return f"{len(s)} seeds ({s[0]}-{s[-1]})" if run else \
                f"{len(s)} seed{'s' if len(s) > 1 else ''} ({', '.join(map(str, s))})"

        def horizon(t: int) -> str:
            return f"2^{t.bit_length() - 1}" if t & (t - 1) == 0 else str(t)

        said = []
        for what, get, show in (("seeds", lambda g: [tuple(g.seeds)], seeds), ("T", lambda g: [g.horizon], horizon),
                                ("epsilon", lambda g: list(g.epsilons), "{:g}".format),
                                ("delta", lambda g: [g.delta] if g.delta is not None else [], "{:g}".format)):
            order = (lambda v: (-len(v), v)) if what == "seeds" else (lambda v: -v) if what == "T" else (lambda v: v)
            ran = sorted({v for g in mine for v in get(g)}, key=order)
            designed = sorted({v for g in theirs for v in get(g)}, key=order)
            if set(ran) != set(designed):
                now = " or ".join(map(str if what == "T" else show, ran))
                was = " or ".join(map(show, designed))
                said.append(f"{now} per cell (the suite: {was})" if what == "seeds"
                            else f"{what} = {now} (the suite: {was})")
        designed_cells = {(c.agent.label, c.env.label, c.epsilon, c.seed) for c in full.cells()}
        ran_cells = {(c.agent.label, c.env.label, c.epsilon, c.seed) for c in self.cells()}
        left = designed_cells - ran_cells
        if left:
            parts = []
            for i, what in ((0, "agents"), (1, "envs"), (2, "epsilon"), (3, "seeds")):
                gone = {k[i] for k in left} - {k[i] for k in ran_cells}
                if gone:
                    shown = [f"{v:g}" if i == 2 else str(v) for v in sorted(v for v in gone if v is not None)]
                    parts.append(f"{what} {', '.join(shown)}")
            if not parts:
                parts.append("other combinations of its agents, envs, epsilons and seeds")
            said.append(f"{len(left)} of the suite's {len(designed_cells)} cells left out ({'; '.join(parts)})")
        added = sorted({c.env.label for c in self.cells()} - {c.env.label for c in full.cells()})
        if added:
            said.append(f"envs run with other arguments: {', '.join(added)}")
        if not said:
            return None
        return f"this command ran suite `{full.name}` with " + "; ".join(said)

    def header_notes(self, full: Suite | None = None) -> list[str]:
        """The lines a report's header says of the suite that ran: its description when it ran as designed (or
        ``full`` is None), else :meth:`shrunk_from`'s line first and the description marked as the full suite's.

        Parameters
        ----------
        full : Suite, optional
            The suite as designed, which this one may shrink (``privbandit bench`` passes ``get_suite(name)``).
        """
        line = f"suite `{self.name}`: {self.description}"
        change = self.shrunk_from(full) if full is not None else None
        if change is None:
            return [line]
        return [change, f"suite `{full.name}` as designed (not what ran): {full.description}"]

    def cells(self, entropy: int = DEFAULT_ENTROPY) -> list[Cell]:
        """The cells of the available grids, duplicates (same key) kept once."""
        seen, out = set(), []
        for g in self.available_grids():
            for c in g.cells(entropy):
                if c.key not in seen:
                    seen.add(c.key)
                    out.append(c)
        return out

    def references(self) -> dict[str, str]:
        """Agent label -> non-private reference label (for the price of privacy)."""
        return {a.label: a.reference for g in self.grids for a in g.agents if a.reference}


PER_ROUND_BASELINES: frozenset[str] = frozenset({"linucb", "linucb-jdp", "ldp-ucb", "linucb-practical",
                                                 "linucb-jdp-practical", "ldp-ucb-practical", "gloc-practical",
                                                 "ldp-glm-sgd"})
"""Baselines whose policy changes every round (no batch speed-up, ~0.3-1 ms per round): the quick suite runs
them at a shorter horizon, one epsilon, one env and two seeds."""


def _pick(agents: tuple[AgentEntry, ...], *, per_round: bool, private: bool | None = None) -> tuple[AgentEntry, ...]:
    return tuple(a for a in agents if (a.label in PER_ROUND_BASELINES) == per_round
                 and (private is None or a.private == private))


_QUICK_ENVS = (lin_env("rare-direction", 5, 5), lin_env("heavy-tailed", 5, 5))
_REAL_ENVS = (EnvEntry("cbify-digits-pca4", "PrivCBify-v0", dict(dataset="digits", n_components=4)),)
"""Real data: digits (K = 10 classes) on its top 4 principal directions (d = 40), the cbify label reward."""
_REAL_AGENTS = ("uniform", "elim-nonprivate", "elim-jdp", "elim-jdp-ucb", "elim-ldp")
QUICK = Suite(
    name="quick",
    description="d=5, K=5 on the rare-direction and heavy-tailed-norm families: the epoch-batched agents at "
                "T=2^16 with 4 seeds (joint DP at epsilon in {0.3, 1}, local DP at epsilon = 1); the per-round "
                "UCB baselines at T=2^14 with 2 seeds, epsilon = 1, rare-direction only; real data: digits "
                "(PrivCBify-v0, 4 principal directions, d=40, K=10) with 5 agents at T=2^14, 2 seeds, epsilon = 1",
    grids=(  # the slowest cells first, so that parallel workers finish together
        Grid(_pick(JDP_AGENTS, per_round=True) + _pick(LDP_AGENTS, per_round=True, private=True), _QUICK_ENVS[:1],
             epsilons=(1.0,), seeds=2, horizon=2 ** 14, delta=1e-5),
        Grid(_pick(JDP_AGENTS, per_round=False), _QUICK_ENVS, epsilons=(0.3, 1.0), seeds=4, horizon=2 ** 16,
             delta=1e-5),
        Grid(_pick(LDP_AGENTS, per_round=False, private=True), _QUICK_ENVS, epsilons=(1.0,), seeds=4,
             horizon=2 ** 16, delta=1e-5),
        Grid(tuple({a.label: a for a in JDP_AGENTS + LDP_AGENTS if a.label in _REAL_AGENTS}.values()), _REAL_ENVS,
             epsilons=(1.0,), seeds=2, horizon=2 ** 14, delta=1e-5),
    ),
)

PAPER_UCB_BATCH = 64
"""Policy update period of the per-round UCB baselines in the paper suite (``batch_size``): at T = 2^20 they
would take 20-66 hours on 2 cores with a new policy every round. Batching changes neither their noise nor
their tree (the statistics still take every round); the policy is recomputed every 64 rounds."""


def batched(agents: tuple[AgentEntry, ...], batch: int) -> tuple[AgentEntry, ...]:
    """``agents`` with every :data:`PER_ROUND_BASELINES` entry updating its policy every ``batch`` rounds:
    kwargs ``batch_size=batch``, label ``LABEL-batchN`` (registered as a preset, so it runs again by its label
    everywhere), and a reference that is itself a per-round baseline relabelled the same way."""
    def tag(label: str | None) -> str | None:
        return f"{label}-batch{batch}" if label in PER_ROUND_BASELINES else label

    out = []
    for a in agents:
        if a.label in PER_ROUND_BASELINES:
            register_preset(tag(a.label), a.name, **{**dict(a.kwargs), "batch_size": batch})
            a = preset_entry(tag(a.label), private=a.private, reference=tag(a.reference))
        out.append(a)
    return tuple(out)


GLM_SCALES: tuple[float, ...] = (2.0, 6.0)
"""Slopes s of the logistic link nu(z) = tanh(s z / 2) on the paper suite's GLM boards: the default 2
(nu'(1) / nu'(0) = 0.42) and a steeper 6, which saturates (nu'(1) / nu'(0) = 0.01: a linear model is far off)."""

GLM_FAMILIES: tuple[str, ...] = ("heavy-tailed", "rare-direction")
"""The context families of the GLM boards (the spiky family is left out of tuning and of the boards)."""

GLM_UCB_BATCH = 4096
"""Refit period of ``glm-ucb`` on the GLM boards: each refit reads every past row (the maximum-likelihood fit),
so a run costs O(T^2 d / batch); at 4096 a run of T = 2^20 takes seconds, at 64 a quarter of an hour."""

register_preset(f"glm-ucb-practical-batch{GLM_UCB_BATCH}", "glm-ucb", radius="practical", batch_size=GLM_UCB_BATCH)


def entries(labels: tuple[str, ...], *pools: tuple[AgentEntry, ...]) -> tuple[AgentEntry, ...]:
    """The entries of ``pools`` with these labels, in the order of ``labels`` (the first pool's entry wins)."""
    by_label: dict[str, AgentEntry] = {}
    for pool in pools:
        for entry in pool:
            by_label.setdefault(entry.label, entry)
    missing = [label for label in labels if label not in by_label]
    if missing:
        raise ValueError(f"no suite entry labelled {missing}")
    return tuple(by_label[label] for label in labels)


def glm_board_agents(private: tuple[AgentEntry, ...]) -> tuple[AgentEntry, ...]:
    """The agents of a GLM board: uniform play, the non-private linear references (elimination, LinUCB with the
    practical radius) and GLM references (GLM-UCB refitted every :data:`GLM_UCB_BATCH` rounds and GLOC, both
    with the practical radius; their theorems' radii stay at uniform play's regret on these boards, see the
    agents guide), then the board's private agents ``private`` (linear and GLM)."""
    return (
        AgentEntry("uniform", private=False), AgentEntry("elim-nonprivate", private=False),
        AgentEntry("elim-ucb", private=False), preset_entry("linucb-practical", private=False),
        preset_entry(f"glm-ucb-practical-batch{GLM_UCB_BATCH}", private=False),
        preset_entry("gloc-practical", private=False),
    ) + private


GLM_JDP_BOARD: tuple[AgentEntry, ...] = glm_board_agents(
    entries(("elim-jdp-pooled", "linucb-jdp-practical"), JDP_AGENTS) + (
    AgentEntry("elim-glm-jdp", private=True, reference="elim-nonprivate"),
    AgentEntry("elim-glm-jdp-pooled", private=True, reference=f"glm-ucb-practical-batch{GLM_UCB_BATCH}"),
))
"""Agents of the joint-DP GLM boards (d = 10, K = 10)."""

GLM_LDP_BOARD: tuple[AgentEntry, ...] = glm_board_agents(
    entries(("elim-ldp-pooled", "ldp-ucb-practical"), LDP_AGENTS) + (
    AgentEntry("elim-glm-ldp", private=True, reference="elim-nonprivate"),
    AgentEntry("ldp-glm-sgd", private=True, reference=f"glm-ucb-practical-batch{GLM_UCB_BATCH}"),
    AgentEntry("elim-glm-ldp-pooled", private=True, reference=f"glm-ucb-practical-batch{GLM_UCB_BATCH}"),
    AgentEntry("elim-ldp-vec", private=True, reference="elim-ucb"),
    AgentEntry("elim-glm-ldp-vec", private=True, reference=f"glm-ucb-practical-batch{GLM_UCB_BATCH}"),
))
"""Agents of the local-DP GLM boards (d = 5, K = 5), with Han et al.'s LDP-SGD (``ldp-glm-sgd``, the local-DP GLM
baseline of `tab:comp`)."""


_PAPER_T = 2 ** 20
_PAPER_FAMILIES = ("heavy-tailed", "rare-direction", "spiky")
PAPER = Suite(
    name="paper",
    description="the agent issue's suite: joint DP d=10, K=10 and local DP d=5, K=5; heavy-tailed-norm, "
                "rare-direction and spiky, epsilon in {0.1, 0.3, 1}; GLM boards for both privacy models (logistic link "
                "at slopes 2 and 6, heavy-tailed and rare-direction, epsilon 1, delta 1e-5); T=2^20; 10 seeds; the "
                "LinUCB baselines update their policy every 64 rounds (labels *-batch64)",
    grids=(
        Grid(batched(JDP_AGENTS, PAPER_UCB_BATCH), tuple(lin_env(f, 10, 10) for f in _PAPER_FAMILIES),
             epsilons=(0.1, 0.3, 1.0), seeds=10, horizon=_PAPER_T, delta=1e-6),
        Grid(batched(GLM_JDP_BOARD, PAPER_UCB_BATCH),
             tuple(glm_env(f, 10, 10, scale=s) for f in GLM_FAMILIES for s in GLM_SCALES),
             epsilons=(1.0,), seeds=10, horizon=_PAPER_T, delta=1e-5),
        Grid(batched(LDP_AGENTS, PAPER_UCB_BATCH), tuple(lin_env(f, 5, 5) for f in _PAPER_FAMILIES),
             epsilons=(0.1, 0.3, 1.0), seeds=10, horizon=_PAPER_T, delta=1e-6),
        Grid(batched(GLM_LDP_BOARD, PAPER_UCB_BATCH),
             tuple(glm_env(f, 5, 5, scale=s) for f in GLM_FAMILIES for s in GLM_SCALES),
             epsilons=(1.0,), seeds=10, horizon=_PAPER_T, delta=1e-5),
    ),
    slope_window=(2 ** 14, 2 ** 20),
)

AGENTS_UCB_BATCH = 64
"""Policy update period of the per-round UCB baselines in the agents suite, as in the paper suite."""

GLM_UCB = preset_entry("elim-glm-jdp-ucb", private=True, reference="elim-ucb")
"""GLM elimination with UCB play and ``elim-jdp-ucb``'s first epoch (a preset of the agent registry)."""


_POOL = (JDP_AGENTS, LDP_AGENTS, GLM_JDP_AGENTS, GLM_JDP_BOARD, GLM_LDP_BOARD,
         (GLM_UCB, AgentEntry("elim-glm-ldp", private=True, reference="elim-nonprivate")))
_AGENTS_JDP = ("uniform", "epsilon-greedy", "linucb", "linucb-practical", "elim-nonprivate", "elim-ucb",
               "squarecb-nonprivate", "elim-jdp", "elim-jdp-ucb", "elim-ssp", "linucb-jdp", "linucb-jdp-practical",
               "squarecb-dpsgd", "squarecb-jdp-iw")
_AGENTS_LDP = ("uniform", "elim-nonprivate", "elim-ucb", "linucb", "linucb-practical", "elim-ldp", "elim-ldp-greedy",
               "elim-ldp-ssp", "ldp-ucb", "ldp-ucb-practical", "squarecb-ldp-sgd", "elim-ldp-pooled", "elim-ldp-vec")
_GLM_REFERENCES = (f"glm-ucb-practical-batch{GLM_UCB_BATCH}", "gloc-practical")
_AGENTS_GLM_JDP = ("elim-nonprivate", "elim-ucb", "elim-jdp", "elim-jdp-ucb", "elim-glm-jdp", "elim-glm-jdp-ucb",
                   "elim-glm-jdp-pooled") + _GLM_REFERENCES
_AGENTS_GLM_LDP = ("elim-ldp", "elim-ldp-greedy", "elim-glm-ldp", "elim-glm-ldp-pooled", "ldp-glm-sgd", "elim-ldp-vec",
                   "elim-glm-ldp-vec")
_AGENTS_REAL_JDP = ("uniform", "elim-nonprivate", "elim-ucb", "linucb-practical", "elim-jdp", "elim-jdp-ucb",
                    "linucb-jdp-practical")
_AGENTS_REAL_LDP = ("elim-nonprivate", "elim-ucb", "elim-ldp", "elim-ldp-greedy", "ldp-ucb-practical")
_AGENTS_REAL_ENVS = (EnvEntry("cbify-digits-pca8", "PrivCBify-v0", dict(dataset="digits", n_components=8)),
                     EnvEntry("cbify-wine", "PrivCBify-v0", dict(dataset="wine")))
"""Real data: digits on its top 8 principal directions (d = 80, K = 10) and wine (d = 39, K = 3), label reward."""


def _agents_grid(labels: tuple[str, ...], envs: tuple[EnvEntry, ...], **kwargs) -> Grid:
    return Grid(batched(entries(labels, *_POOL), AGENTS_UCB_BATCH), envs, delta=1e-5, **kwargs)


_FULL = dict(epsilons=(0.1, 0.3, 1.0), seeds=10, horizon=_PAPER_T)
AGENTS = Suite(
    name="agents",
    description="every bandit agent (the agent benchmark): joint DP d=10, K=10 and local DP d=5, K=5 on the "
                "heavy-tailed-norm, rare-direction and spiky families and a GLM instance (logistic link), the LinUCB "
                "baselines with both radii, epsilon in {0.1, 0.3, 1}, delta=1e-5, T=2^20, 10 seeds; real data "
                "(PrivCBify-v0 on digits, 8 principal directions, and wine) at epsilon in {0.3, 1}, T=2^18, 5 seeds; "
                "the LinUCB baselines update their policy every 64 rounds (labels *-batch64)",
    grids=(  # the costliest cells first, so that parallel workers finish together
        _agents_grid(_AGENTS_JDP, tuple(lin_env(f, 10, 10) for f in _PAPER_FAMILIES), **_FULL),
        _agents_grid(_AGENTS_GLM_JDP, (glm_env("heavy-tailed", 10, 10),), **_FULL),
        _agents_grid(_AGENTS_REAL_JDP, _AGENTS_REAL_ENVS, epsilons=(0.3, 1.0), seeds=5, horizon=2 ** 18),
        _agents_grid(_AGENTS_REAL_LDP, _AGENTS_REAL_ENVS, epsilons=(0.3, 1.0), seeds=5, horizon=2 ** 18),
        _agents_grid(_AGENTS_LDP, tuple(lin_env(f, 5, 5) for f in _PAPER_FAMILIES), **_FULL),
        _agents_grid(_AGENTS_GLM_LDP, (glm_env("heavy-tailed", 5, 5),), **_FULL),
    ),
    slope_window=(2 ** 14, 2 ** 20),
)

SUITES: dict[str, Suite] = {s.name: s for s in (QUICK, PAPER, AGENTS)}
"""The named suites."""


def get_suite(name: str) -> Suite:
    """A suite by name (``"quick"``, ``"paper"`` or ``"agents"``).

    Parameters
    ----------
    name : str
        ``"quick"``, ``"paper"`` or ``"agents"``.
    """
    if name not in SUITES:
        raise ValueError(f"suite must be one of {sorted(SUITES)}, got {name!r}")
    return SUITES[name]
