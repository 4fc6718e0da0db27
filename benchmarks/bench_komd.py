"""KOMD (RBF) fit time beside scikit-learn's SVC on the same data (issue 3 target: KOMD ≤ 4× SVC).

Data: ``make_classification(5000 + 1000, 49, n_informative=10)``, the first 5,000 rows to train and
the rest to report test accuracy. Both use RBF with gamma="scale"; KOMD uses Λ = 0.1 and its
default libsvm tolerance 1e-8 (spec addendum §1.4), SVC its defaults (C = 1, tol = 1e-3). KOMD's
time includes building the 5,000² kernel; a second row splits that part out. One BLAS thread for
both (the machine is shared; timings are noisy).

The target is on the ratio KOMD / SVC, never on seconds: absolute times differ between machines of
the same kind, and even the ratio moved between invocations (1.56× in one, 1.85–1.92× in others).
So the comparison runs ``--runs`` times; each run alternates ``--repeats`` SVC and KOMD fits and
takes the ratio of their medians, and the page gives the median ratio over runs with its min–max.
The target (≤ 4×) is on that median; the fit times are information.
Writes ``benchmarks/results/komd.md``.

Run: ``.venv/bin/python benchmarks/bench_komd.py``
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from sklearn.datasets import make_classification
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from _common import markdown_table, median_time, write_results
from stairsense.models.mkl import KOMDClassifier, rbf_kernel_inplace, resolve_rbf_gamma

# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("models/mkl/_komd.py",)
RESULTS = Path(__file__).resolve().parent / "results" / "komd.md"
MAX_RATIO = 4.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed comparisons, each giving one KOMD / SVC ratio")
    parser.add_argument("--repeats", type=int, default=3, help="fits of each estimator per run (median)")
    parser.add_argument("--n-train", type=int, default=5000)
    args = parser.parse_args()
    X, y = make_classification(args.n_train + 1000, 49, n_informative=10, random_state=0)
    X_train, y_train, X_test, y_test = X[: args.n_train], y[: args.n_train], X[args.n_train :], y[args.n_train :]
    runs = []  # (SVC median s, KOMD median s) per run
    with threadpool_limits(1):
        for run in range(args.runs):
            # Alternating fits, so load that comes and goes falls on both estimators alike.
            fits = [(median_time(lambda: SVC(gamma="scale").fit(X_train, y_train), 1),
                     median_time(lambda: KOMDClassifier(lam=0.1).fit(X_train, y_train), 1))
                    for _ in range(args.repeats)]
            runs.append(tuple(statistics.median(f[i][0] for f in fits) for i in (0, 1)))
            print(f"run {run + 1}: SVC {runs[-1][0]:.3f} s, KOMD {runs[-1][1]:.3f} s, "
                  f"ratio {runs[-1][1] / runs[-1][0]:.2f}", flush=True)
        svc, komd = fits[-1][0][1], fits[-1][1][1]
        gamma = resolve_rbf_gamma("scale", X_train)
        kernel_time, _ = median_time(lambda: rbf_kernel_inplace(X_train, X_train, gamma), args.repeats)
    ratios = [komd_s / svc_s for svc_s, komd_s in runs]
    ratio = statistics.median(ratios)
    rows = [
        ("scikit-learn SVC (C=1, tol=1e-3)", statistics.median(r[0] for r in runs), 1.0, len(svc.support_),
         svc.score(X_test, y_test)),
        ("KOMDClassifier (Λ=0.1, tol=1e-8)", statistics.median(r[1] for r in runs), ratio, len(komd.support_),
         komd.score(X_test, y_test)),
    ]
    lines = [
        "# KOMD benchmark",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_komd.py` (runs={args.runs}, repeats={args.repeats}, one BLAS "
        "thread; medians; the 2-core machine is shared, so absolute times are noisy and the ratio is what counts).",
        "",
        f"Data: make_classification, {args.n_train} train x 49 features (10 informative), 1000 test; RBF, "
        'gamma="scale".',
        "",
        "Fit times: median over runs of each run's median; ratio to SVC: median over runs of each run's ratio.",
        "",
        *markdown_table(
            ["estimator", "median fit s", "ratio to SVC", "support size", "test accuracy"],
            [(name, f"{seconds:.3f}", f"{run_ratio:.2f}", support, f"{accuracy:.3f}")
             for name, seconds, run_ratio, support, accuracy in rows],
        ),
        "",
        f"Per run ({args.repeats} alternating fits of each, medians):",
        "",
        *markdown_table(["run", "SVC fit s", "KOMD fit s", "KOMD / SVC"],
                        [(i + 1, f"{svc_s:.3f}", f"{komd_s:.3f}", f"{komd_s / svc_s:.2f}")
                         for i, (svc_s, komd_s) in enumerate(runs)], align="lrrr"),
        "",
        f"Of KOMD's fit, building the {args.n_train}² RBF kernel takes {kernel_time:.3f} s (median); the rest is "
        "libsvm's ν-SVC on the precomputed K′ = (1−Λ)K + ΛI (spec addendum §1.4).",
        "",
        f"Target (issue 3): KOMD fit ≤ {MAX_RATIO:g}× SVC fit in the same run, on the median over runs. Measured: "
        f"{ratio:.2f}× (min–max {min(ratios):.2f}–{max(ratios):.2f} over {args.runs} runs): "
        f"**{'met' if ratio <= MAX_RATIO else 'MISSED'}**; the fit times are information.",
        "",
    ]
    write_results(RESULTS, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
