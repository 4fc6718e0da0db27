"""KOMD on Nyström features without the l × l kernel: the low-rank solve beside the explicit one.

The shipped accelerometer model (:data:`~stairsense.models.TRAIN_DEFAULTS`) is KOMD on the Nyström
kernel K̃ = ΦΦᵀ of 300 landmarks. Solving it on the explicit K̃ holds 8 l² bytes (13 GB at 40,000
windows); :func:`~stairsense.models.mkl._komd.solve_komd_low_rank` gives libsvm the features
[√(1 − Λ) Φ, √Λ I] with a linear kernel instead, the same ν-SVC on the same K′. Here both solve the
very same Φ: the shipped recipe fitted on simulated people (``simulated_people``, seed
``--seed``), its scaled and selected training windows mapped through its landmarks. Per size:
the two solves' times (the explicit one includes forming ΦΦᵀ; median of ``--repeats``,
alternating, one BLAS thread), their largest γ and θ differences, and how many training windows
they decide differently. The explicit solve is skipped where its kernel would take more than half
the memory available. The low-rank solve is cache-bound: it runs with the row cache it chooses
(:func:`~stairsense.models.mkl._komd.low_rank_cache_mb`) and, alternating with it, with a fixed
``--compare-cache-mb``.

Writes ``benchmarks/results/komd_low_rank.md``.

Run: ``.venv/bin/python benchmarks/bench_komd_low_rank.py``
"""
from __future__ import annotations

import os

from _common import ONE_THREAD_VARIABLES

for _name in ONE_THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import load_average, markdown_table, median_time, write_results  # noqa: E402

from stairsense._train import _available_bytes  # noqa: E402
from stairsense.export.energy import simulated_people  # noqa: E402
from stairsense.features import window_dataset  # noqa: E402
from stairsense.models import TRAIN_DEFAULTS  # noqa: E402
from stairsense.models.mkl import rbf_kernel_inplace  # noqa: E402
from stairsense.models.mkl._komd import low_rank_cache_mb, solve_komd_low_rank, solve_komd_precomputed  # noqa: E402
from stairsense.models.mkl._nystroem_komd import nystroem_projection  # noqa: E402

MEASURES = ("models/mkl/_komd.py", "models/mkl/_nystroem_komd.py")
RESULTS = Path(__file__).resolve().parent / "results" / "komd_low_rank.md"


def training_problem(n_people: int, seed: int):
    """Φ and labels of the shipped recipe's KOMD fitted on ``n_people`` simulated people."""
    ds = window_dataset(simulated_people(n_people, seed=seed), TRAIN_DEFAULTS.config)
    pipeline = TRAIN_DEFAULTS.pipeline(ds.feature_names).fit(ds.X, ds.y)
    komd = pipeline[-1]
    Z = komd.support_vectors_
    phi = rbf_kernel_inplace(pipeline[:-1].transform(ds.X), Z, komd.gamma_) @ nystroem_projection(Z, komd.gamma_,
                                                                                                   komd.rcond)
    return phi, np.where(ds.y == 1, 1.0, -1.0), komd


def compare(phi, y, komd, repeats: int, fixed_cache_mb: float) -> dict:
    lam, tol = float(komd.lam), komd.tol
    cache_mb = low_rank_cache_mb(len(y))
    low, fixed, explicit = [], [], []
    fits = 8 * phi.shape[0] ** 2 < 0.5 * _available_bytes()
    for _ in range(repeats):
        seconds, (gamma, theta) = median_time(lambda: solve_komd_low_rank(phi, y, lam, tol=tol, cache_mb=cache_mb), 1)
        low.append(seconds)
        seconds, (gamma_f, theta_f) = median_time(
            lambda: solve_komd_low_rank(phi, y, lam, tol=tol, cache_mb=fixed_cache_mb), 1)
        fixed.append(seconds)
        if fits:
            seconds, (gamma_x, theta_x) = median_time(lambda: solve_komd_precomputed(phi @ phi.T, y, lam, tol=tol), 1)
            explicit.append(seconds)
    row = {"windows": phi.shape[0], "rank": phi.shape[1], "cache_mb": cache_mb, "low_rank_s": statistics.median(low),
           "fixed_s": statistics.median(fixed), "explicit_gb": 8 * phi.shape[0] ** 2 / 1e9,
           "fit_matches": bool(np.array_equal(gamma, komd.gamma_dist_) and theta == komd.theta_
                               and np.array_equal(gamma, gamma_f) and theta == theta_f)}
    if fits:
        f = phi @ (phi.T @ (y * gamma)) - theta
        f_x = phi @ (phi.T @ (y * gamma_x)) - theta_x
        row.update(explicit_s=statistics.median(explicit), gamma_diff=float(np.abs(gamma - gamma_x).max()),
                   theta_diff=abs(theta - theta_x), decisions_differ=int(np.sum((f >= 0) != (f_x >= 0))))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, nargs="+", default=[48, 96, 192])
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compare-cache-mb", type=float, default=512.0,
                        help="a fixed row cache to time beside the chosen one (default 512 MB)")
    args = parser.parse_args()
    rows = []
    for n in args.people:
        phi, y, komd = training_problem(n, args.seed)
        rows.append({"people": n, **compare(phi, y, komd, args.repeats, args.compare_cache_mb)})
        print(rows[-1], flush=True)
    table = [(r["people"], f"{r['windows']:,}", r["rank"], f"{r['cache_mb']:,.0f}", f"{r['low_rank_s']:.2f}",
              f"{r['fixed_s']:.2f}",
              f"{r['explicit_s']:.2f}" if "explicit_s" in r else f"not run ({r['explicit_gb']:.1f} GB)",
              f"{r['explicit_s'] / r['low_rank_s']:.1f}×" if "explicit_s" in r else "–",
              f"{r['gamma_diff']:.1e}" if "gamma_diff" in r else "–",
              f"{r['theta_diff']:.1e}" if "theta_diff" in r else "–",
              r.get("decisions_differ", "–"), "yes" if r["fit_matches"] else "NO")
             for r in rows]
    lines = [
        "# KOMD on Nyström features: the low-rank solve beside the explicit kernel",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_komd_low_rank.py --people {' '.join(map(str, args.people))} "
        f"--seed {args.seed} --repeats {args.repeats} --compare-cache-mb {args.compare_cache_mb:g}` (one BLAS thread; "
        f"median of {args.repeats} alternating solves; load average {load_average()}).",
        "",
        f"The shipped recipe's KOMD (Λ = {TRAIN_DEFAULTS.lam}, {TRAIN_DEFAULTS.n_landmarks} landmarks) fitted on "
        "simulated people; both solvers get the same Nyström features Φ (rank = columns of Φ). The explicit "
        "time includes forming ΦΦᵀ; its memory is that l × l matrix, the low-rank solve's is Φ and libsvm's "
        "row cache: the size `low_rank_cache_mb` chooses (all of Q, 4 l² bytes, within a quarter of the memory "
        f"available), and beside it a fixed {args.compare_cache_mb:g} MB. Every low-rank solve of a size returns "
        "the same γ and θ, and the fitted estimator's are these.",
        "",
        *markdown_table(["people", "training windows", "rank", "row cache MB", "low-rank s",
                         f"low-rank s, {args.compare_cache_mb:g} MB cache", "explicit s", "explicit / low-rank",
                         "largest Δγ", "Δθ", "training decisions that differ",
                         "every low-rank solve and the fit agree"],
                        table, "rrrrrrrrrrrl"),
        "",
    ]
    write_results(RESULTS, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
