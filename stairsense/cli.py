"""The ``stairsense`` command: simulate, replay, train, evaluate, export, demo.

Each subcommand is a thin shell over :mod:`stairsense.pipeline` and the subpackages; ``--json``
prints one JSON object on stdout for scripts, and errors go to stderr as one line naming the
file and the fix, with exit status 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from stairsense import __version__
from stairsense._cli_serve import add_parser as add_serve_parser
from stairsense.config import PipelineConfig

__all__ = ["main", "build_parser"]


def _config(args) -> PipelineConfig:
    config = PipelineConfig.from_file(args.config) if getattr(args, "config", None) else PipelineConfig()
    overrides = {k: v for k, v in (("rate_hz", getattr(args, "rate", None)),
                                   ("orientation", getattr(args, "orientation", None)),
                                   ("segmentation", getattr(args, "segmentation", None))) if v is not None}
    return config.replace(**overrides) if overrides else config


def _emit(args, payload: dict, text: str) -> None:
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


# --- simulate ------------------------------------------------------------------------------------
def cmd_simulate(args) -> int:
    from collections import Counter

    from stairsense.stream._csvio import write_log
    from stairsense.stream._log import Activity
    from stairsense.stream._simulate import simulate

    log = simulate(minutes=args.minutes, rate_hz=args.rate, seed=args.seed)
    path = write_log(log, args.out)
    steps = {Activity(k).name.lower(): n for k, n in sorted(Counter(log.steps.kind.tolist()).items())}
    payload = {"out": str(path), "samples": len(log), "duration_s": log.duration_s, "rate_hz": args.rate,
               "seed": args.seed, "steps": steps}
    _emit(args, payload, f"wrote {path}: {len(log)} samples, {log.duration_s / 60:.1f} min at {args.rate:g} Hz, "
                         f"steps {steps}")
    return 0


# --- replay --------------------------------------------------------------------------------------
def _load_model(path, config: PipelineConfig):
    """A model for replay and the configuration to replay with: ``.onnx``/``.ort`` files run through
    ONNX Runtime (the phone's path), other files are ``stairsense train`` models."""
    if Path(path).suffix in (".onnx", ".ort"):
        from stairsense.export._runtime import OnnxStairModel

        model = OnnxStairModel(path, config=config)
        return model, model.config
    from stairsense.models._stairstep import load_model

    model = load_model(path)
    return model, model.check_config(config)


def cmd_replay(args) -> int:
    from stairsense.pipeline import replay

    config = _config(args)
    model = None
    if args.model:
        model, config = _load_model(args.model, config)
    plot = _ReplayPlot(args.plot_seconds) if args.plot else None
    report = replay(args.log, config, model=model, repair=tuple(args.repair or ()),
                    progress=not args.json and sys.stderr.isatty(), on_windows=plot)
    if plot is not None:
        plot.save(args.plot, report, config)
    lines = [
        f"{report.source}: {report.samples} samples, {report.duration_s:.1f} s, {report.segments} segment(s), "
        f"orientation {report.method}",
        f"windows: {report.windows} candidates, {report.kept} kept, rejected {report.rejected}",
        f"candidate steps per minute: {report.steps_per_minute:.1f}",
    ]
    if report.truth_steps is not None:
        lines.append(f"ground truth: {report.truth_steps} steps; matched {report.matched}, precision "
                     f"{report.precision:.3f}, recall {report.recall:.3f}, count error {100 * report.count_error:.2f}%")
    if report.stair_steps is not None:
        truth = f" (truth {report.truth_stair_steps})" if report.truth_stair_steps is not None else ""
        lines.append(f"stair steps: {report.stair_steps}{truth}")
    _emit(args, report.to_dict(), "\n".join(lines))
    return 0


class _ReplayPlot:
    """Collects the first seconds of the vertical signal and every window for ``--plot``."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.t, self.z, self.windows, self.durations, self.status = [], [], [], [], []
        self.t0 = None

    def __call__(self, result, chunk):
        import numpy as np

        std, windows = result.standardized, result.windows
        if self.t0 is None and len(std.t_ns):
            self.t0 = int(std.t_ns[0])
        self.durations.append(windows.duration_s)
        self.status.append(windows.status)
        if self.t0 is None:
            return
        limit = self.t0 + int(self.seconds * 1e9)
        keep = std.t_ns < limit
        self.t.append((std.t_ns[keep] - self.t0) / 1e9)
        self.z.append(std.vertical[keep])
        early = windows.t_start_ns < limit
        self.windows.append(np.c_[(windows.t_start_ns[early] - self.t0) / 1e9, (windows.t_end_ns[early] - self.t0) / 1e9,
                                  windows.status[early]])

    def save(self, path, report, config):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6.5), gridspec_kw={"height_ratios": [2, 1]})
        if self.t:
            top.plot(np.concatenate(self.t), np.concatenate(self.z), lw=0.8, color="0.2")
            for start, end, status in np.concatenate(self.windows):
                color = "tab:green" if status == 0 else "tab:red"
                top.axvspan(start, end, color=color, alpha=0.15, lw=0)
                top.axvline(start, color=color, lw=0.6, alpha=0.6)
        top.set(xlabel="seconds", ylabel="vertical dynamic acc. (m/s²)",
                title=f"{Path(report.source).name}: first {self.seconds:g} s; kept windows green, rejected red")
        durations = np.concatenate(self.durations) if self.durations else np.zeros(0)
        bottom.hist(durations[durations < 4], bins=80, color="tab:blue")
        for bound in (config.min_step_s, config.max_step_s):
            bottom.axvline(bound, color="tab:red", ls="--")
        bottom.set(xlabel="window duration (s); dashed: duration filter", ylabel="windows")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)


# --- train / evaluate ---------------------------------------------------------------------------
def cmd_train(args) -> int:
    from stairsense._train import train
    from stairsense.models._stairstep import save_model

    model = train(args.data, _config(args), k=args.k, lam=args.lam, gamma=args.gamma,
                  progress=not args.json and sys.stderr.isatty())
    path = save_model(model, args.out)
    summary = model.summary
    _emit(args, {"out": str(path), **summary},
          f"wrote {path}: trained on {summary['n_windows']} windows {summary['class_counts']} "
          f"(1 = STAIR) from {len(args.data)} source(s)")
    return 0


def cmd_evaluate(args) -> int:
    from stairsense._train import evaluate

    result = evaluate(args.data, _config(args), protocol=args.protocol, classifier=args.classifier, k=args.k,
                      n_outer=args.folds, random_state=args.seed, progress=not args.json and sys.stderr.isatty())
    text = (f"{args.classifier} {args.protocol}: {result['n_windows']} windows ({result['n_stair']} STAIR); STAIR "
            f"precision {result['precision_mean']:.3f}±{result['precision_std']:.3f}, recall "
            f"{result['recall_mean']:.3f}±{result['recall_std']:.3f}, F1 {result['f1_mean']:.3f}±{result['f1_std']:.3f} "
            f"(F1 of mean P,R: {result['f1_of_means']:.3f})")
    _emit(args, result, text)
    return 0


# --- export --------------------------------------------------------------------------------------
_METADATA_HEADROOM = 2048  # bytes of metadata (configuration, feature names, training summary)


def cmd_export(args) -> int:
    from stairsense.export._export import export_model
    from stairsense.export._runtime import inspect_model

    if args.inspect:
        info = inspect_model(args.model)
        _emit(args, info, json.dumps(info, indent=2, default=str))
        return 0
    if not args.out:
        raise ValueError("export needs --out FILE.onnx (or --inspect to read an exported model)")
    validation = None
    if args.validation:
        from stairsense.stream._csvio import read_log

        validation = [read_log(p) for p in args.validation]
    from stairsense.export._export import support_budget
    from stairsense.models._stairstep import load_model

    model = load_model(args.model)
    budget = int(args.max_kb * 1024)
    headroom = _METADATA_HEADROOM
    for _ in range(2):
        support = args.max_support_vectors
        if support is None and budget:
            support = support_budget(model, budget - headroom, args.precision)
        report = export_model(model, args.out, precision=args.precision, ort=args.ort, validation=validation,
                              max_support_vectors=support)
        if not budget or args.max_support_vectors is not None or report.size_bytes <= budget:
            break
        # The metadata took more than the headroom: budget the graph by what it really took.
        headroom += report.size_bytes - budget + 256
    if budget and report.size_bytes > budget:
        raise ValueError(f"{report.path} is {report.size_bytes} bytes, over --max-kb {args.max_kb:g}; "
                         "pass a smaller --max-support-vectors or a larger --max-kb")
    parity = report.parity
    _emit(args, report.to_dict(),
          f"wrote {report.path}: {report.size_bytes / 1024:.1f} KB, {report.precision}, {report.n_features} features, "
          f"{report.n_support_vectors}/{report.n_support_vectors_trained} support vectors; parity {parity}"
          + (f"\nwrote {report.ort_path}: {report.ort_size_bytes / 1024:.1f} KB (ORT format)" if report.ort_path else ""))
    return 0


# --- demo ----------------------------------------------------------------------------------------
def cmd_demo(args) -> int:
    """Train on simulated people, replay a held-out simulated person, compare stair steps to the truth."""
    import numpy as np

    from stairsense.models._stairstep import StairstepModel, make_stairstep_pipeline, save_model
    from stairsense.pipeline import replay, window_dataset
    from stairsense.stream._csvio import write_log
    from stairsense.stream._log import STAIR_ACTIVITIES
    from stairsense.stream._simulate import simulate

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = PipelineConfig()
    say = (lambda *a: None) if args.json else print
    say(f"simulating {args.people} people x {args.minutes:g} min for training ...")
    logs = [simulate(minutes=args.minutes, seed=1000 + i) for i in range(args.people)]
    data = window_dataset(logs, config, progress=not args.json and sys.stderr.isatty())
    say(f"training on {len(data)} windows ({int(data.y.sum())} STAIR) ...")
    model = StairstepModel.train(make_stairstep_pipeline(), data.X, data.y, config=config,
                                 feature_names=data.feature_names, groups=data.groups, sources=["simulate"])
    model_path = save_model(model, out / "stairs.model")
    held_out = simulate(minutes=args.minutes, seed=args.seed)
    log_path = write_log(held_out, out / "held_out.csv.gz")
    report = replay(log_path, config, model=model)
    truth = int(np.isin(held_out.steps.kind, [int(a) for a in STAIR_ACTIVITIES]).sum())
    payload = {"model": str(model_path), "held_out_log": str(log_path), "stair_steps": report.stair_steps,
               "truth_stair_steps": truth, "steps": report.kept, "truth_steps": report.truth_steps,
               "step_count_error": report.count_error}
    _emit(args, payload,
          f"held-out person (seed {args.seed}, {held_out.duration_s / 60:.0f} min): {report.kept} steps detected "
          f"(truth {report.truth_steps}), {report.stair_steps} stair steps (truth {truth})\n"
          f"model: {model_path}\nlog:   {log_path}  (try: stairsense replay {log_path} --model {model_path})")
    return 0


# --- parser --------------------------------------------------------------------------------------
def _add_config_args(p, rate=True):
    p.add_argument("--config", metavar="FILE", help="JSON PipelineConfig (see stairsense.PipelineConfig)")
    if rate:
        p.add_argument("--rate", type=float, metavar="HZ", help="resample to this rate before the front end")
    p.add_argument("--orientation", choices=["auto", "rotvec", "ahrs", "vertical", "linear", "mizell"],
                   help="how to reach the Earth frame (default from the config: auto)")
    p.add_argument("--segmentation", choices=["pattern", "sliding"], help="step windows or the sliding baseline")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stairsense",
        description="Replay phone sensor logs through the on-device pipeline, train and export the stair-step "
                    "classifier.",
    )
    parser.add_argument("--version", action="version", version=f"stairsense {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("simulate", help="write a synthetic sensor log with ground truth",
                       description="Simulate a phone carried by a person (walking, stairs up/down, standing) "
                                   "and write a canonical log plus a .steps.csv ground-truth sidecar.")
    p.add_argument("--minutes", type=float, default=10.0, help="length of the random activity schedule (default 10)")
    p.add_argument("--rate", type=float, default=50.0, metavar="HZ", help="sampling rate, 20-200 Hz (default 50)")
    p.add_argument("--seed", type=int, default=0, help="random seed; the same seed gives the same log (default 0)")
    p.add_argument("--out", required=True, metavar="LOG", help="output .csv or .csv.gz")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("replay", help="run a log through the front end and report windows and steps",
                       description="Stream a canonical log (.csv/.csv.gz) through smoothing, standardization and "
                                   "segmentation exactly as the phone does; with --model, count stair steps.")
    p.add_argument("log", metavar="LOG", help="canonical sensor log (.csv or .csv.gz)")
    _add_config_args(p)
    p.add_argument("--model", metavar="MODEL", help="a model from `stairsense train` (or an exported .onnx)")
    p.add_argument("--repair", nargs="+", choices=["drop-nan", "split-gaps"], metavar="REPAIR",
                   help="fix instead of failing: drop-nan, split-gaps (restart the front end after each gap)")
    p.add_argument("--plot", metavar="PNG", help="save a plot of the vertical signal, windows and durations")
    p.add_argument("--plot-seconds", type=float, default=30.0, help="seconds of signal in the plot (default 30)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("export", help="export a trained model to ONNX for the phone (or --inspect one)",
                       description="Write one ONNX graph: a window's standardized samples [n, 3] -> the selected "
                                   "features, [-1, 1] scaling and the KOMD RBF decision -> score and STAIR flag. "
                                   "Every export is checked against the Python model and refused if it disagrees.")
    p.add_argument("model", metavar="MODEL", help="a model from `stairsense train` (with --inspect: an .onnx file)")
    p.add_argument("--out", metavar="ONNX", help="output .onnx file")
    p.add_argument("--precision", choices=["fp32", "fp16", "int8"], default="int8",
                   help="storage of the support vectors (default int8)")
    p.add_argument("--max-kb", type=float, default=32.0,
                   help="size budget: keep as many support vectors as fit (default 32; 0 = keep all)")
    p.add_argument("--max-support-vectors", type=int, metavar="N",
                   help="keep the N support vectors with the largest weight (coefficients refitted): smaller "
                        "model, accuracy cost reported; overrides --max-kb")
    p.add_argument("--ort", action="store_true", help="also write the ORT-format twin for mobile minimal builds")
    p.add_argument("--validation", nargs="+", metavar="LOG", help="logs whose windows check parity "
                   "(default: a simulated 4-minute log)")
    p.add_argument("--inspect", action="store_true", help="print an exported model's metadata instead")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_export)

    data_help = "labelled canonical logs (.csv/.csv.gz with a label column) or a UCI HAPT RawData folder"
    p = sub.add_parser("train", help="train the stair-step classifier on labelled recordings",
                       description="Cut windows with the front end, extract the 79 features and fit scaler -> "
                                   "EasyMKL top-k -> RBF KOMD; the model file keeps the pipeline configuration.")
    p.add_argument("data", nargs="+", metavar="DATA", help=data_help)
    _add_config_args(p)
    p.add_argument("--out", required=True, metavar="MODEL", help="output model file")
    p.add_argument("--k", type=int, default=49, help="features EasyMKL keeps (default 49)")
    # Defaults: the (Λ, γ) that grouped inner CV picked in most folds of the Table 12.2 rebuild on
    # UCI HAPT (benchmarks/results/table_12_2.md).
    p.add_argument("--lam", type=float, default=0.01, help="KOMD's Λ in [0, 1] (default 0.01)")
    p.add_argument("--gamma", default=2.0**-5, type=lambda v: v if v == "scale" else float(v),
                   help="RBF γ on the [-1, 1]-scaled features, or 'scale' (default 2^-5)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("evaluate", help="cross-validate a classifier on labelled recordings",
                       description="Nested evaluation of the thesis's classifiers: leave-subjects-out (honest) or "
                                   "nested stratified 10-fold CV; STAIR precision, recall and F1 as mean ± std.")
    p.add_argument("data", nargs="+", metavar="DATA", help=data_help)
    _add_config_args(p)
    p.add_argument("--protocol", choices=["loso", "nested-cv"], default="loso", help="default loso")
    p.add_argument("--classifier", choices=["komd", "knn", "dt"], default="komd", help="default komd")
    p.add_argument("--k", type=int, default=49, help="features EasyMKL keeps for KOMD (default 49)")
    p.add_argument("--folds", type=int, help="outer folds (default: one per subject for loso, 10 for nested-cv)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("demo", help="train on simulated people and count stair steps of a held-out one",
                       description="The main job on built-in synthetic data: simulate people, train the "
                                   "stair-step classifier, replay a held-out simulated log with it.")
    p.add_argument("--people", type=int, default=6, help="simulated training people (default 6)")
    p.add_argument("--minutes", type=float, default=8.0, help="minutes per simulated person (default 8)")
    p.add_argument("--seed", type=int, default=7, help="seed of the held-out person (default 7)")
    p.add_argument("--out", default="demo_out", help="folder for the model and the held-out log (default demo_out)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_demo)

    add_serve_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:
        print(f"stairsense {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
