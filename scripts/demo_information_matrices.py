"""Teaching demo: what U* and W* look like next to Sigma, as ellipses in two dimensions.

For each context family (d = 2) the script draws the image of the unit circle under

- Sigma^{1/2}, the covariance ellipse (what OLS and sufficient-statistics perturbation see);
- U*^{-1}, where F_LDP(U*) = I (`def:FLDP`): ||U*^{-1} theta|| is within sqrt(d)+1 of the L1 covariance
  E|<phi, theta>| (`lem:U-L1-covariance`), the information left under local privacy;
- W*^{-1}, where F_DP(W*) = I (`def:FJDP`): between the two, close to Sigma^{1/2} when gamma is small
  (large epsilon sqrt(T)) and close to a scaled U*^{-1} when gamma is large.

On the spiky family p_{Sigma,B} (phi = B e_j with probability rho_j / B^2), E|<phi, theta>| = sum_j rho_j |theta_j| / B,
so U*^{-1} stretches like Sigma (axis ratio = the condition number), not like Sigma^{1/2} (its square root):
rarely seen directions lose far more information under privacy than the covariance says. On the
rare-direction family the rare axis shrinks the same way.

Writes ``information_matrices.png``, prints the semi-axes of every ellipse and, computed from their axis
ratios (:func:`conclusions`), what this run shows.

Run: ``python scripts/demo_information_matrices.py [--gamma 0.3] [--lam 1e-4] [--out DIR]``

References
----------
Source paper, `def:FLDP`, `def:FJDP`, `eqn:U-spectral-exact`, `lem:U-L1-covariance`, `lem:Wstar-Ustar`,
`example:ill-condition-p`, `prop:lower-perturbed-p`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit.envs import make_family  # noqa: E402
from privbandit.report import figures as plots  # noqa: E402

from demo_studies import axis_ratio  # noqa: E402
from demo_studies import information_conclusions as conclusions  # noqa: E402
from demo_studies import information_matrices as matrices  # noqa: E402

FAMILIES = {
    "spiky (condition 10)": dict(name="spiky", condition=10.0),
    "rare-direction (rho 0.05)": dict(name="rare-direction", rho=0.05),
    "heavy-tailed-direction": dict(name="heavy-tailed-direction"),
}


def law(spec: dict, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """Atoms and probabilities of the family when it is discrete, else n sampled rows (d = 2)."""
    params = {k: v for k, v in spec.items() if k != "name"}
    family = make_family(spec["name"], dim=2, n_arms=1, **params)
    atoms = family.atoms() if callable(getattr(family, "atoms", None)) else None
    if atoms is not None:
        return atoms
    return family.sample(n, rng)[:, 0, :], None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gamma", type=float, default=0.3, help="gamma of F_DP (default 0.3)")
    p.add_argument("--lam", type=float, default=1e-4, help="lambda of F_LDP and F_DP (default 1e-4)")
    p.add_argument("--samples", type=int, default=20000, help="rows drawn for continuous families")
    p.add_argument("--out", type=Path, default=Path("results/demos"), help="output folder")
    args = p.parse_args(argv)
    if args.gamma < 0 or args.lam <= 0 or args.samples < 100:
        p.error("need gamma >= 0, lam > 0, samples >= 100")

    rng = np.random.default_rng(0)
    fig, axes = plt.subplots(1, len(FAMILIES), figsize=(4.2 * len(FAMILIES), 4.2))
    print("Semi-axes (largest, smallest) and their ratio of each ellipse:")
    ratios: dict[str, dict[str, float]] = {}
    for ax, (title, spec) in zip(axes, FAMILIES.items()):
        x, w = law(spec, args.samples, rng)
        mats = matrices(x, w, args.gamma, args.lam)
        plots.information_ellipses(mats, ax=ax, title=title)
        print(f"  {title}")
        ratios[title] = {}
        for label, m in mats.items():
            ev = np.sort(np.abs(np.linalg.eigvalsh((m + m.T) / 2)))[::-1]
            ratios[title][label] = axis_ratio(m)
            print(f"    {label:22s} {ev[0]:.4f}  {ev[1]:.4f}   ratio {ratios[title][label]:7.2f}")
    fig.tight_layout()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "information_matrices.png"
    fig.savefig(path, dpi=90)
    spiky = next(k for k, v in FAMILIES.items() if v["name"] == "spiky")
    print("What this run shows (axis ratio = largest / smallest semi-axis):")
    for line in conclusions(ratios, spiky, FAMILIES[spiky]["condition"]):
        print(f"- {line}")
    print(f"Figure: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
