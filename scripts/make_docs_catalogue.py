"""Write the documentation's generated pages: the agent and oracle catalogue, the env cards, the family spectra.

Everything here is read from the code, so the docs cannot drift from it:

- ``catalogue_agents.md`` / ``catalogue_oracles.md``: every registered agent and oracle with its privacy model,
  paper label, one-line description and every hyperparameter with its default and its allowed values (from
  the declared ``parameter_constraints``);
- ``envcards/<env id>.md``: each registered env's card (its class docstring);
- ``families/<family>.png`` and ``families.md``: the eigenvalues of each context family's second moment.

The registries are read through one function, :func:`registry_entries`; it is the only place that knows how
they are stored.

Usage: ``python scripts/make_docs_catalogue.py --out docs/_generated``
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import math
import numbers
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LABEL = re.compile(r"\b((?:alg|def|appdx|thm|lem|prop|ssec|sec|eq|eqn|example|tab):[A-Za-z0-9-]+)")


@dataclass(frozen=True)
class Entry:
    """One registered agent or oracle, as the catalogue needs it."""

    name: str
    kind: str                        # "agent" or "oracle"
    description: str
    cls: type                        # the class whose parameter_constraints apply
    defaults: dict[str, Any]         # argument -> the value this registered name uses by default
    privacy: str                     # "none", "jdp", "ldp" or several, comma-separated


def registry_entries(kind: str) -> list[Entry]:
    """Every registered agent (``kind="agent"``) or oracle (``kind="oracle"``), sorted by name.

    This is the catalogue's only contact with the registries.
    """
    if kind == "agent":
        from privbandit.agents import agent_descriptions, agent_is_private, make_agent

        out = []
        for name, description in agent_descriptions().items():
            agent = make_agent(name, **({"epsilon": 1.0} if agent_is_private(name) else {}))
            cls = type(agent)
            defaults = {**_signature_defaults(cls),
                        **{arg: getattr(agent, arg) for arg in _arguments(cls) if hasattr(agent, arg)}}
            if agent_is_private(name):     # the budget: epsilon is the caller's, delta has the factory's default
                defaults.setdefault("delta", agent.privacy.delta)
            out.append(Entry(name, kind, description, cls, defaults, agent.privacy.model))
        return sorted(out, key=lambda e: e.name)
    if kind == "oracle":
        from privbandit.oracles import oracle_class, oracle_names

        out = []
        for name in oracle_names():
            cls = oracle_class(name)
            defaults = {f.name: f.default for f in dataclasses.fields(cls)
                        if f.init and f.default is not dataclasses.MISSING}
            doc = inspect.getdoc(cls) or ""
            out.append(Entry(name, kind, doc.split("\n\n")[0].replace("\n", " "), cls, defaults,
                             ", ".join(cls.privacy_models)))
        return sorted(out, key=lambda e: e.name)
    raise ValueError(f"kind must be 'agent' or 'oracle', got {kind!r}")


def _arguments(cls: type) -> list[str]:
    """The keyword arguments of ``cls(...)``: dataclass fields, or ``__init__``'s, following ``**kwargs`` up."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    names: list[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = list(inspect.signature(vars(klass)["__init__"]).parameters.values())[1:]
        names += [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in names]
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            break
    return names


def _signature_defaults(cls: type) -> dict[str, Any]:
    """Defaults of the keyword arguments of ``cls.__init__`` (and of the ``__init__``s its ``**kwargs`` reach)."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if "__init__" in vars(klass) and klass is not object:
            for p in list(inspect.signature(vars(klass)["__init__"]).parameters.values())[1:]:
                if p.default is not p.empty:
                    out[p.name] = p.default
    return out


def describe_constraint(constraint: Any) -> str:
    """A reader's wording of one declared constraint (``privbandit._validation``)."""
    if constraint is None:
        return "None"
    kind = type(constraint).__name__
    if kind == "Interval":
        if constraint.kind is numbers.Integral:
            hi = "inf)" if constraint.right is None else f"{constraint.right}]"
            return f"integer in [{constraint.left}, {hi}"
        lo_open = constraint.closed in ("right", "neither")
        hi_open = constraint.closed in ("left", "neither") or constraint.right is None
        lo = "-inf" if constraint.left is None else f"{constraint.left:g}"
        hi = "inf" if constraint.right is None else f"{constraint.right:g}"
        return f"real in {'(' if lo_open or constraint.left is None else '['}{lo}, {hi}{')' if hi_open else ']'}"
    if kind == "Options":
        return "one of " + ", ".join(f"`{o!r}`" for o in constraint.options)
    if kind == "Boolean":
        return "bool"
    if kind == "InstanceOf":
        return str(constraint.description)
    if kind == "IsCallable":
        return f"callable `{constraint.signature}`"
    if kind == "Array":
        return f"array (ndim {constraint.ndim})"
    return repr(constraint)


def _default(value: Any) -> str:
    if value is None or isinstance(value, (bool, str)):
        return f"`{value!r}`"
    if isinstance(value, numbers.Integral):
        return f"`{value}`"
    if isinstance(value, numbers.Real):
        return f"`{float(value):g}`"
    if hasattr(value, "name") and hasattr(value, "privacy"):       # an oracle instance: its name and budget
        return f"`{value.name}` ({value.privacy.label()})"
    if callable(value):
        return f"`{getattr(value, '__name__', type(value).__name__)}`"
    text = repr(value)
    return f"`{text}`" if len(text) <= 40 else f"{type(value).__name__}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def paper_labels(entry: Entry) -> list[str]:
    """Paper labels named by the description, then by the class docstring's References section."""
    labels = LABEL.findall(entry.description)
    if labels:
        return list(dict.fromkeys(labels))
    doc = inspect.getdoc(entry.cls) or ""
    refs = doc.split("References\n----------", 1)
    if len(refs) == 2:
        labels += [lab for lab in LABEL.findall(refs[1].split("\n\n\n")[0]) if lab not in labels]
    if entry.kind == "oracle" and not labels:
        labels = LABEL.findall(doc)[:3]
    return list(dict.fromkeys(labels))


def catalogue_page(entries: list[Entry]) -> str:
    kind = entries[0].kind
    factory = "make_agent" if kind == "agent" else "make_oracle"
    lines = [f"<!-- generated by scripts/make_docs_catalogue.py from the {kind} registry: do not edit -->", "",
             f"{len(entries)} registered {kind}s, each built with `{factory}(name, ...)`.", "",
             "| name | privacy | paper label | description |", "|---|---|---|---|"]
    for e in entries:
        labels = ", ".join(f"`{lab}`" for lab in paper_labels(e)) or "-"
        lines.append(f"| [`{e.name}`](#{kind}-{e.name}) | {e.privacy} | {labels} | {_cell(e.description)} |")
    lines.append("")
    for e in entries:
        lines += [f"({kind}-{e.name})=", f"### `{e.name}`", "",
                  f"{_cell(e.description)}", "",
                  f"- class: {{py:class}}`~{e.cls.__module__.rsplit('.', 1)[0]}.{e.cls.__name__}`"
                  if _public(e.cls) else f"- class: `{e.cls.__name__}`",
                  f"- privacy model: {e.privacy}",
                  f"- paper label: {', '.join(f'`{lab}`' for lab in paper_labels(e)) or '-'}", ""]
        constraints = e.cls.parameter_constraints
        rows = [a for a in _arguments(e.cls) if a in constraints]
        if rows:
            lines += ["| hyperparameter | default | allowed |", "|---|---|---|"]
            for arg in rows:
                default = _default(e.defaults[arg]) if arg in e.defaults else "required"
                if arg == "epsilon" and e.kind == "agent" and e.privacy != "none":
                    default = "required (the privacy budget)"
                allowed = "; or ".join(describe_constraint(c) for c in constraints[arg])
                lines.append(f"| `{arg}` | {_cell(default)} | {_cell(allowed)} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def _public(cls: type) -> bool:
    """Whether ``cls`` is exported by its subpackage (so the API reference has a page for it)."""
    import importlib

    package = importlib.import_module(cls.__module__.rsplit(".", 1)[0])
    return cls.__name__ in getattr(package, "__all__", ())


def docstring_markdown(doc: str) -> str:
    """A numpy-style class docstring whose sections are Markdown (an env card) as MyST Markdown: level-3
    headings, roles as code, the Examples as a ``pycon`` block."""
    body = re.sub(r"^## ", "### ", doc, flags=re.MULTILINE)
    body = re.sub(r"^(\w[\w ]*)\n-+$", r"### \1", body, flags=re.MULTILINE)
    body = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", body).replace("``", "`")
    head, sep, examples = body.partition("### Examples\n")
    return head + (f"### Examples\n\n```pycon\n{examples.strip()}\n```\n" if sep else "")


def env_cards(out: Path) -> list[str]:
    """One Markdown file per registered env id: its class docstring (the Gymnasium env card)."""
    import importlib

    from privbandit.envs import ENV_IDS

    out.mkdir(parents=True, exist_ok=True)
    for env_id, (entry_point, _) in ENV_IDS.items():
        module, name = entry_point.split(":")
        doc = inspect.getdoc(getattr(importlib.import_module(module), name)) or ""
        body = docstring_markdown(doc)
        (out / f"{env_id}.md").write_text(f"<!-- generated from {module}.{name}'s docstring: do not edit -->\n\n"
                                          + body + "\n")
    return list(ENV_IDS)


def family_pictures(out: Path, dim: int = 10) -> None:
    """A picture of the eigenvalues of each context family's second moment Sigma = E[phi phi^T], and a table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privbandit.envs import FAMILIES, make_family

    out.mkdir(parents=True, exist_ok=True)
    grid, panels = plt.subplots(2, 3, figsize=(12.0, 6.0), dpi=110, sharex=True)
    rows = ["<!-- generated by scripts/make_docs_catalogue.py: do not edit -->", "",
            f"Eigenvalues of Sigma = E[phi phi^T] at d = {dim}, B = 1, each family at its default dial "
            "(computed exactly by `family.second_moment()`).", "",
            "| family | default parameters | lambda_max | lambda_min | condition number |", "|---|---|---|---|---|"]
    for name in FAMILIES:
        family = make_family(name, dim=dim)
        eig = np.sort(np.linalg.eigvalsh(family.second_moment()))[::-1]
        fig, ax = plt.subplots(figsize=(5.0, 3.0), dpi=110)
        for axis in (ax, panels.flat[len(rows) - 6]):
            axis.semilogy(np.arange(1, dim + 1), np.maximum(eig, 1e-12), "o-", color="C0")
            axis.set_xlabel("eigenvalue index (largest first)")
            axis.set_ylabel("eigenvalue of Sigma")
            axis.set_title(f"{name}, d = {dim}")
            axis.set_xticks(range(1, dim + 1))
            axis.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / f"{name}.png")
        plt.close(fig)
        params = {f.name: getattr(family, f.name) for f in dataclasses.fields(family)
                  if f.name not in ("dim", "n_arms", "bound") and isinstance(getattr(family, f.name), (int, float))}
        shown = ", ".join(f"{k} = {v:g}" for k, v in params.items()) or "-"
        cond = eig[0] / eig[-1] if eig[-1] > 0 else math.inf
        rows.append(f"| `{name}` | {shown} | {eig[0]:.3g} | {eig[-1]:.3g} | {cond:.3g} |")
    grid.tight_layout()
    grid.savefig(out / "families.png")
    plt.close(grid)
    (out / "families.md").write_text("\n".join(rows) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder of the generated pages")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in ("agent", "oracle"):
        (args.out / f"catalogue_{kind}s.md").write_text(catalogue_page(registry_entries(kind)))
    env_cards(args.out / "envcards")
    family_pictures(args.out / "families")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
