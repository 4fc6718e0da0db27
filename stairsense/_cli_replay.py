"""``stairsense replay``: run a log through the front end (optionally a model) and report."""
from __future__ import annotations

import sys
from pathlib import Path

from ._cli_common import (add_config_args, add_read_args, check_files, config_for_model, config_from_args, emit,
                          repair_summary)
from ._cli_types import positive


def _load_model(args):
    """A model for replay (any file :func:`stairsense.export.load_stair_model` reads) and the
    configuration to replay with: the model's own, plus what the user set."""
    from stairsense.export import load_stair_model

    model = load_stair_model(args.model)
    return model, config_for_model(args, model.config, args.model)


def cmd_replay(args) -> int:
    from stairsense.pipeline import replay

    check_files({"--plot": args.plot}, {"LOG": args.log, "--model": args.model, "--config": args.config})
    if args.model:
        model, config = _load_model(args)
    else:
        model, config = None, config_from_args(args)
    plot = _ReplayPlot(args.plot_seconds) if args.plot else None
    from stairsense.stream import load_placement_recording, placement_recordings

    source, repair = args.log, tuple(args.repair)
    if placement_recordings(args.log) == [Path(args.log)]:
        # A dataset's own file: its loader repairs and labels it, and like `train` replay splits it at
        # the gaps this front end cannot bridge (the segments are counted in the output).
        source, repair = load_placement_recording(args.log), (*repair, "split-gaps")
    report = replay(source, config, model=model, repair=repair, units=args.units,
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
    if report.model is not None:
        lines.append(f"model: {report.model}")
        lines += climb_lines(report)
    lines += repair_summary(report.read)
    emit(args, report.to_dict(), "\n".join(lines))
    return 0


def climb_lines(report) -> list[str]:
    """The stair steps of a replay with a model: up and down, metres and floors with a barometer model;
    the total alone, and why, with an accelerometer-only one."""
    truth = f" (truth {report.truth_stair_steps})" if report.truth_stair_steps is not None else ""
    if report.stair_steps_up is None:
        return [f"stair steps: {report.stair_steps}{truth}; up/down, metres and floors need a model with barometer"]
    truth_split = (f" (truth {report.truth_stair_steps_up} up, {report.truth_stair_steps_down} down)"
                   if report.truth_stair_steps_up is not None else "")
    return [f"stair steps: {report.stair_steps}{truth}: {report.stair_steps_up} up, {report.stair_steps_down} "
            f"down{truth_split}",
            f"climbed {report.metres_climbed:.1f} m ({report.floors_ascended} floors), descended "
            f"{report.metres_descended:.1f} m ({report.floors_descended} floors); a floor is 3 m"]


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

        from stairsense.stream import atomic_write

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
        if report.model is not None:  # what the model counted over the whole log, under the figure
            fig.text(0.01, 0.005, f"model {report.model}: " + "; ".join(climb_lines(report)), fontsize=8, va="bottom")
        fig.tight_layout(rect=(0, 0.03 if report.model is not None else 0, 1, 1))
        with atomic_write(path) as tmp:
            fig.savefig(tmp, dpi=110)
        plt.close(fig)


def add_parser(subparsers) -> None:
    """Register ``stairsense replay``."""
    p = subparsers.add_parser("replay", help="run a log through the front end and report windows and steps",
                       description="Stream a canonical log (.csv/.csv.gz) through smoothing, standardization and "
                                   "segmentation exactly as the phone does; with --model, count stair steps (with a "
                                   "barometer model also up and down, metres and floors).")
    p.add_argument("log", metavar="LOG", help="canonical sensor log (.csv, .csv.gz or .parquet), or one recording "
                   "file of MobiFall, WEDA-FALL, GeoTecINIT or IPIN 2023 track 3 (split at the gaps the front end cannot "
                   "bridge, as `train` splits it)")
    add_config_args(p)
    p.add_argument("--model", metavar="MODEL", help="a model from `stairsense train` (or an exported .onnx)")
    add_read_args(p)
    p.add_argument("--plot", metavar="PNG", help="save a plot of the vertical signal, windows and durations")
    p.add_argument("--plot-seconds", type=positive(float, 3600, " (an hour of signal already fills the plot)"),
                   default=30.0, help="seconds of signal in the plot, at most 3600 (default 30)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_replay)
