"""``stairsense demo``: train on simulated people, count stair steps of a held-out one."""
from __future__ import annotations

import sys
from pathlib import Path

from stairsense.stream import PipelineConfig

from ._cli_common import emit
from ._cli_types import MAX_SIMULATED_MINUTES, positive, seed_arg


def cmd_demo(args) -> int:
    """Train on simulated people, replay a held-out simulated person, compare stair steps to the truth."""
    import numpy as np

    from stairsense.models import StairstepModel, make_stairstep_pipeline, save_model
    from stairsense.features import window_dataset
    from stairsense.pipeline import replay
    from stairsense.stream import STAIR_ACTIVITIES, resolve_orientation, simulate, write_log

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: is a file; the demo writes a model and a log into a folder")
    if args.people * args.minutes > MAX_SIMULATED_MINUTES:
        raise ValueError(f"--people {args.people} x --minutes {args.minutes:g} is {args.people * args.minutes:g} "
                         f"simulated minutes, more than {MAX_SIMULATED_MINUTES:g} (24 h, held in memory for "
                         "training); simulate fewer people or shorter recordings")
    out.mkdir(parents=True, exist_ok=True)
    config = PipelineConfig()
    say = (lambda *a: None) if args.json else print
    say(f"simulating {args.people} people x {args.minutes:g} min for training ...")
    logs = [simulate(minutes=args.minutes, seed=1000 + i) for i in range(args.people)]
    data = window_dataset(logs, config, progress=not args.json and sys.stderr.isatty())
    say(f"training on {len(data)} windows ({int(data.y.sum())} STAIR) ...")
    model = StairstepModel.train(make_stairstep_pipeline(), data.X, data.y, config=config,
                                 feature_names=data.feature_names, groups=data.groups, sources=["simulate"])
    # As `stairsense train` does: record what "auto" resolved to, so replay runs the same method.
    model.summary["orientation_methods"] = sorted({resolve_orientation(config, log) for log in logs})
    model_path = save_model(model, out / "stairs.model")
    held_out = simulate(minutes=args.minutes, seed=args.seed)
    log_path = write_log(held_out, out / "held_out.csv.gz")
    report = replay(log_path, config, model=model)
    truth = int(np.isin(held_out.steps.kind, [int(a) for a in STAIR_ACTIVITIES]).sum())
    payload = {"model": str(model_path), "held_out_log": str(log_path), "stair_steps": report.stair_steps,
               "truth_stair_steps": truth, "steps": report.kept, "truth_steps": report.truth_steps,
               "step_count_error": report.count_error}
    emit(args, payload,
          f"held-out person (seed {args.seed}, {held_out.duration_s / 60:.0f} min): {report.kept} steps detected "
          f"(truth {report.truth_steps}), {report.stair_steps} stair steps (truth {truth})\n"
          f"model: {model_path}\nlog:   {log_path}  (try: stairsense replay {log_path} --model {model_path})")
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense demo``."""
    p = subparsers.add_parser("demo", help="train on simulated people and count stair steps of a held-out one",
                       description="The main job on built-in synthetic data: simulate people, train the "
                                   "stair-step classifier, replay a held-out simulated log with it.")
    p.add_argument("--people", type=positive(int), default=6,
                   help="simulated training people (default 6; people x minutes at most 1440)")
    p.add_argument("--minutes", type=positive(float, MAX_SIMULATED_MINUTES), default=8.0,
                   help="minutes per simulated person (default 8)")
    p.add_argument("--seed", type=seed_arg, default=7, help="seed of the held-out person (default 7)")
    p.add_argument("--out", default="demo_out", help="folder for the model and the held-out log (default demo_out)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_demo)
