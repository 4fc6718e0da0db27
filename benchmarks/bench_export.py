"""Size, speed and accuracy of the exported ONNX stair-step model, beside the Python model.

On UCI HAPT RawData (virtual rotation vector from ``bench_table_12_2``'s cached fusion, 30 Hz,
data-driven windows), one leave-subjects-out split: every third subject (sorted) is held out,
the model (scale → EasyMKL top-49 → RBF KOMD, default Λ and γ) is trained on at most
``--max-train`` windows of the others (a seeded, stratified subsample: KOMD's fit holds an l×l
kernel), and exported at fp32, fp16 and int8, and with fewer support vectors.

For every variant, in one process and on the same held-out windows:

* file size (kB) and F1 of STAIR on all held-out windows, run through ONNX Runtime one window at
  a time (the phone's path), against the uncompressed Python model's F1;
* median time per window of ``InferenceSession.run`` (``intra_op_num_threads = 1``), against the
  scikit-learn pipeline's ``predict`` on that window's feature row, and against
  ``window_features`` + ``predict`` (what ONNX replaces on the phone).

Times are medians over every call of ``--repeats`` passes over ``--timed`` windows, on a shared
2-core machine (noisy: medians, not means). Writes ``benchmarks/results/export.md`` and
``export.png`` (size versus F1).

Run: ``.venv/bin/python benchmarks/bench_export.py`` (targets: fp32/fp16/int8 within 0.01 F1 of
Python, default export ≤ 32 kB, ≤ 30 µs per window, ≥ 10× faster than the pipeline per window).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from sklearn.metrics import f1_score  # noqa: E402

from _common import cached_windows, data_dir, fused_uci_logs, write_results  # noqa: E402
from stairsense import PipelineConfig  # noqa: E402
from stairsense.export import OnnxStairModel, export_model, session_options  # noqa: E402
from stairsense.export._graph import GraphBuilder  # noqa: E402
from stairsense.models import StairstepModel, make_stairstep_pipeline  # noqa: E402
from stairsense.features import AMBIGUOUS, WindowRowStage, feature_names_for, window_features  # noqa: E402
from stairsense.stream import run_front_end  # noqa: E402

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("stream/", ":!stream/io/", "features/", "models/mkl/", "models/stairstep/", "export/", ":!export/energy/",
            "stairsense/pipeline.py")
RESULTS = ROOT / "results"


def held_out_windows(logs, config, subjects):
    """Samples, offsets, step-context rows (None without step context) and labels of the kept,
    unambiguous windows of the held-out subjects. Every kept window enters its log's step context
    (the phone does not know the labels); the ambiguous ones are dropped after."""
    parts, offsets, labels, contexts = [], [0], [], []
    for log in logs:
        if log.meta.get("subject") not in subjects:
            continue
        result = run_front_end(log, config)
        rows = WindowRowStage(config, result.log.rate_hz, labelled=True).process(result)
        good = np.flatnonzero(rows.label != AMBIGUOUS)
        if rows.step_context is not None:
            contexts.append(rows.step_context[good])
        for w in good:
            window = rows.samples[rows.offsets[w]:rows.offsets[w + 1]]
            parts.append(window)
            offsets.append(offsets[-1] + len(window))
            labels.append(rows.label[w])
    context = np.vstack(contexts) if contexts else None
    return np.concatenate(parts).astype(np.float32), np.asarray(offsets), context, np.asarray(labels)


def stratified_subsample(y, size, seed=0):
    rng = np.random.default_rng(seed)
    if y.size <= size:
        return np.arange(y.size)
    keep = [rng.choice(np.flatnonzero(y == c), round(size * np.mean(y == c)), replace=False) for c in np.unique(y)]
    return np.sort(np.concatenate(keep))


def per_call_median(fn, items, repeats):
    times = []
    for _ in range(repeats):
        for item in items:
            t0 = time.perf_counter()
            fn(item)
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


def train_on_other_subjects(X, y, groups, config, max_train):
    """The stair-step model on a stratified subsample of two thirds of the subjects; held-out subjects."""
    subjects = np.unique(groups)
    test_subjects = set(subjects[::3].tolist())
    train = np.flatnonzero(~np.isin(groups, list(test_subjects)))
    train = train[stratified_subsample(y[train], max_train)]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EasyMKL's max_iter note; the ranking is still used
        model = StairstepModel.train(make_stairstep_pipeline(k=49, random_state=0), X[train], y[train],
                                     config=config, feature_names=feature_names_for(config), groups=groups[train])
    return model, train, time.perf_counter() - t0, subjects, test_subjects


def feeds(samples, offsets, context, windows):
    """The ONNX inputs of each of ``windows``: its samples, and its step-context row if the model has one."""
    return [{"samples": samples[offsets[w]:offsets[w + 1]]}
            | ({} if context is None else {"step_context": context[w:w + 1].astype(np.float32)}) for w in windows]


def measure_exports(model, config, samples, offsets, context, y_test, one_window, repeats, f1_python):
    """Export each precision / support-set variant; its size, F1, parity and median time per window."""
    n_sv = model.pipeline[-1].dual_coef_.size
    variants = [("fp32", None), ("fp16", None), ("int8", None)]
    variants += [("int8", max(2, n_sv // d)) for d in (2, 4, 8)]
    rows, points = [], []
    with tempfile.TemporaryDirectory() as folder:
        for precision, max_sv in variants:
            path = Path(folder) / f"stairs_{precision}_{max_sv}.onnx"
            reduced = max_sv is not None
            # min_agreement=0: these rows measure what truncation costs; `stairsense export` refuses them
            # below 99.5 % agreement (issue 9).
            report = export_model(model, path, precision=precision, validation=(samples, offsets, context),
                                  max_support_vectors=max_sv, min_agreement=0.0 if reduced else None)
            onnx_model = OnnxStairModel(path, config=config)
            f1 = f1_score(y_test, onnx_model.predict_windows(samples, offsets, context))
            session = onnx_model._session
            seconds = per_call_median(lambda feed: session.run(["score"], feed), one_window, repeats)
            label = precision + (f", {report.n_support_vectors} SV" if reduced else "")
            rows.append((label, report.size_bytes / 1024, report.n_support_vectors, f1, f1 - f1_python,
                         report.parity["decision_agreement"], seconds))
            points.append((report.size_bytes / 1024, f1, label))
    return rows, points


def binding_floor(one_window, repeats):
    """The Python → ONNX Runtime call itself (a one-node graph): part of every figure above, absent
    on a phone, where the Java/C API calls the session directly."""
    g = GraphBuilder()
    g.rename(g.op("Abs", g.input("samples", np.float32, ["n", 3])), "score")
    floor_session = ort.InferenceSession(g.model({"score": (np.float32, ["n", 3])}).SerializeToString(),
                                         session_options(1), providers=["CPUExecutionProvider"])
    return per_call_median(lambda feed: floor_session.run(["score"], {"samples": feed["samples"]}), one_window, repeats)


def report_lines(args, split, fit_s, f1_python, n_sv, rows, python_row, python_window, binding):
    train, subjects, test_subjects, offsets, y_test = split
    lines = [
        "# ONNX export: size, speed and F1 against the Python model",
        "",
        f"Command: `.venv/bin/python benchmarks/bench_export.py --max-train {args.max_train} --timed {args.timed} "
        f"--repeats {args.repeats}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs; onnxruntime {ort.__version__}, "
        "`intra_op_num_threads = 1`. Times are medians over every call.",
        "",
        f"Data: UCI HAPT RawData at 30 Hz, data-driven windows. Leave-subjects-out split: {len(test_subjects)} held-out "
        f"subjects ({offsets.size - 1} windows, {int(y_test.sum())} STAIR), trained on a stratified subsample of "
        f"{train.size} windows of the other {subjects.size - len(test_subjects)} (KOMD fit {fit_s:.0f} s). "
        f"Python model (float64): F1 = {f1_python:.4f}, {n_sv} support vectors × 49 features.",
        "",
        "| variant | size (kB) | support vectors | F1 (ONNX Runtime) | ΔF1 vs Python | same decision as Python | median µs / window | pipeline.predict(row) / ONNX | window_features + predict / ONNX |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, kb, sv, f1, df1, agree, sec in rows:
        lines.append(f"| {label} | {kb:.1f} | {sv} | {f1:.4f} | {df1:+.4f} | {agree:.2%} | {sec * 1e6:.1f} | "
                     f"{python_row / sec:.1f}× | {python_window / sec:.1f}× |")
    lines += [
        "",
        f"Python, per window (median): `pipeline.predict` on one feature row {python_row * 1e6:.0f} µs; "
        f"`window_features` + `pipeline.predict` {python_window * 1e6:.0f} µs.",
        "",
        f"Python binding floor (a one-node graph through the same `session.run`): {binding * 1e6:.1f} µs per call, "
        "included in every ONNX figure above; a phone calls the C/Java API without it.",
        "",
        "Reduced support sets keep the largest γ (both classes) with coefficients refitted by least squares to the "
        "full model on its support vectors (`export._compact.reduce_support`); this benchmark exports them with "
        "`min_agreement=0` to show their cost, while `stairsense export` refuses any export below 99.5 % agreement "
        "(issue 9; the compact model is trained under the budget instead: `bench_robustness.py`). fp16/int8 rows use "
        "the full support set with refitted coefficients.",
        "",
        "![size versus F1](export.png)",
    ]
    return lines


def plot_size_vs_f1(points, f1_python, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.axhline(f1_python, color="gray", linestyle="--", label=f"Python float64 (F1 {f1_python:.3f})")
    ax.axhspan(f1_python - 0.01, f1_python + 0.01, color="gray", alpha=0.15, label="±0.01")
    for kb, f1, label in points:
        ax.scatter(kb, f1)
        ax.annotate(label, (kb, f1), fontsize=8, xytext=(3, 3), textcoords="offset points")
    ax.axvline(32, color="red", linestyle=":", label="32 kB target")
    ax.set_xlabel("ONNX file size (kB)")
    ax.set_ylabel("F1 (STAIR), held-out subjects")
    ax.set_title("UCI HAPT, leave-subjects-out: size versus F1")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-train", type=int, default=2000)
    parser.add_argument("--timed", type=int, default=300, help="windows per timing pass")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    config = PipelineConfig(rate_hz=30)
    logs = fused_uci_logs(data_dir("uci-hapt", "RawData"))
    X, y, groups = cached_windows(logs, config)
    model, train, fit_s, subjects, test_subjects = train_on_other_subjects(X, y, groups, config, args.max_train)
    samples, offsets, context, y_test = held_out_windows(logs, config, test_subjects)
    X_test = window_features(samples.astype(np.float64), offsets)
    if context is not None:
        X_test = np.hstack([X_test, context])
    f1_python = f1_score(y_test, model.predict(X_test))
    n_sv = model.pipeline[-1].dual_coef_.size

    timed = np.linspace(0, offsets.size - 2, min(args.timed, offsets.size - 1)).astype(int)
    one_window = feeds(samples, offsets, context, timed)
    rows, points = measure_exports(model, config, samples, offsets, context, y_test, one_window, args.repeats,
                                   f1_python)
    binding = binding_floor(one_window, args.repeats)
    python_row = per_call_median(lambda w: model.pipeline.predict(X_test[w:w + 1]), timed, args.repeats)
    # The step-context row is an input of both (the host computes it), so only the Table 12.1 part is timed here.
    python_window = per_call_median(
        lambda w: model.pipeline.predict(np.hstack(
            [window_features(samples[offsets[w]:offsets[w + 1]], [0, offsets[w + 1] - offsets[w]])]
            + ([] if context is None else [context[w:w + 1]]))),
        timed, args.repeats)

    lines = report_lines(args, (train, subjects, test_subjects, offsets, y_test), fit_s, f1_python, n_sv, rows,
                         python_row, python_window, binding)
    write_results(RESULTS / "export.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
    plot_size_vs_f1(points, f1_python, RESULTS / "export.png")


if __name__ == "__main__":
    main()
