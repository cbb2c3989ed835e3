"""Teaching demo: the information matrices U* and W* of an ill-conditioned distribution.

The distribution is the paper's "simple distribution" p_{Sigma,B} (`example:ill-condition-p`): the feature
is B e_j with probability rho_j / B^2 and 0 otherwise, so Sigma = E[phi phi^T] = diag(rho). With rho
spanning several orders of magnitude it is badly conditioned, and rare directions are seen seldom but with
the full norm B: exactly where privacy hurts.

The demo prints, for that distribution:

- Sigma and its condition number;
- U* (`def:FLDP`), the local-DP information matrix, solved by the exact spectral iteration
  (`eqn:U-spectral-exact`), with the iteration counts to reach F in [1/2, 2] and the residual;
- W* (`def:FJDP`) at gamma = 1/(epsilon sqrt(T)), lambda = 1/sqrt(T), compared with Sigma^{-1/2};
- kappa(p) (`def:kappa-p`) and the price of privacy tr(Sigma W*^2)/d (`eq:PoP`) for a range of T.

Run ``python scripts/demo_infomatrix.py --help`` for the options.

References
----------
Source paper, `example:ill-condition-p`, `def:FLDP`, `def:FJDP`, `eqn:U-spectral-exact`, `eqn:W-spectral-exact`,
`lem:spec-fast-converge`, `def:kappa-p`, `eq:PoP`.
"""

from __future__ import annotations

import argparse

import numpy as np

from privbandit import infomatrix as im


def simple_distribution(rho: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """Atoms and probabilities of p_{Sigma,B}: B e_j with probability rho_j / B^2, else 0."""
    d = rho.size
    probs = rho / bound ** 2
    if probs.sum() > 1:
        raise ValueError(f"sum(rho) / B^2 must be <= 1, got {probs.sum():g}")
    atoms = np.vstack([bound * np.eye(d), np.zeros((1, d))])
    return atoms, np.append(probs, 1.0 - probs.sum())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dim", type=int, default=3, help="dimension d")
    parser.add_argument("--rho-min", type=float, default=1e-4, help="smallest eigenvalue of Sigma (largest is 0.5)")
    parser.add_argument("--bound", type=float, default=1.0, help="feature norm bound B")
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy level epsilon")
    parser.add_argument("--horizon", type=int, default=10_000, help="sample size T for W*")
    args = parser.parse_args(argv)
    np.set_printoptions(precision=4, suppress=False, linewidth=110)

    rho = 0.5 * np.geomspace(1.0, args.rho_min / 0.5, args.dim)
    atoms, probs = simple_distribution(rho, args.bound)
    sigma = im.second_moment(atoms, probs)
    print(f"p_(Sigma,B): d={args.dim}, B={args.bound:g}, rho={rho}")
    print(f"Sigma = diag({np.diag(sigma)}), condition number {rho.max() / rho.min():.3g}\n")

    print("U* (local DP) by the exact spectral iteration from U_0 = I:")
    for lam in (1e-2, 1e-4, 1e-6):
        res = im.u_star(atoms, probs, lam=lam, tol=1e-12)
        print(f"  lambda={lam:g}: F in [1/2, 2] after {res.iterations_to_band} steps, residual 1e-10 after "
              f"{res.iterations_to(1e-10)} steps (final {res.residual:.1e}); diag(U*) = {np.diag(res.matrix)}")
    print("  closed form for this p: U*_jj = 1 / (E|<phi, e_j>| + lambda) = 1 / (rho_j / B + lambda),")
    print(f"  e.g. at lambda=1e-6: {1 / (rho / args.bound + 1e-6)}: an L1 (not L2) covariance\n")

    t = args.horizon
    gamma, lam = 1.0 / (args.epsilon * np.sqrt(t)), 1.0 / np.sqrt(t)
    res = im.w_star(atoms, probs, gamma=gamma, lam=lam, tol=1e-12)
    print(f"W* (joint DP) at T={t}, epsilon={args.epsilon:g}: gamma={gamma:.3g}, lambda={lam:.3g}")
    print(f"  iterations: band {res.iterations_to_band}, residual 1e-10 after {res.iterations_to(1e-10)}")
    print(f"  diag(W*)          = {np.diag(res.matrix)}")
    print(f"  diag(Sigma^-1/2)  = {1 / np.sqrt(rho)}  (W* -> Sigma^-1/2 as gamma, lambda -> 0)\n")

    kap = im.kappa(atoms, probs)
    closed = args.bound / np.sqrt(rho.min())
    same = "equal to" if np.isclose(kap, closed, rtol=1e-6) else "not equal to"
    print(f"kappa(p) = {kap:.4g}, {same} the closed form B / sqrt(min rho) = {closed:.4g}")
    print(f"PoP = O(1) once T >~ kappa^2 / epsilon^2 = {kap ** 2 / args.epsilon ** 2:.3g} (times log(1/delta))\n")

    print("price of privacy tr(Sigma W*^2) / d (eq:PoP, up to constants):")
    for horizon in (10 ** 2, 10 ** 4, 10 ** 6, 10 ** 8, 10 ** 10):
        pop = im.price_of_privacy(atoms, probs, epsilon=args.epsilon, n_samples=horizon)
        print(f"  T={horizon:>14,d}: {pop:8.4f}")


if __name__ == "__main__":
    main()
