"""``stairsense energy``: what a configuration costs in battery, its profiles and the
budget optimiser.

Shape: ``stairsense energy [estimate options]`` prices one configuration (for example
``stairsense energy --model stairs.onnx --log walk.csv.gz --profile nexus-2012 --plot e.png``);
``stairsense energy profiles`` lists the device profiles; ``stairsense energy optimise`` searches
configurations under a battery budget. The estimate's options belong to ``energy`` itself, so
they come before any action word.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ._cli_common import bounded_config, check_files
from ._cli_types import between, landmarks_arg, n_jobs_arg, positive, rate_arg, seed_arg

__all__ = ["add_parser"]

#: Rates ``energy profiles`` lists sensor currents at: the thesis's 30 Hz, a barometer's usual 10 Hz.
_LISTED_HZ = {"barometer": 10.0}
_COMPARE = (("sliding 500 ms/50 %", {"segmentation": "sliding"}), ("no smoothing", {"smoothing": "none"}),
            ("Mizell (acc only)", {"orientation": "mizell"}), ("Linear (linacc + rotvec)", {"orientation": "linear"}))


def _say(args, text: str) -> None:
    if not args.json:
        print(text, file=sys.stderr)


def _simulated_day(rate_hz: float, seed: int):
    """A labelled simulated log covering the three activity classes of a day description."""
    from stairsense.stream import Activity, simulate

    bouts = [(Activity.STANDING, 120), (Activity.WALKING, 150), (Activity.WALKING_UPSTAIRS, 45),
             (Activity.WALKING, 60), (Activity.WALKING_DOWNSTAIRS, 45), (Activity.STANDING, 120),
             (Activity.WALKING, 90), (Activity.WALKING_UPSTAIRS, 45), (Activity.WALKING_DOWNSTAIRS, 45)]
    log = simulate(rate_hz=rate_hz, seed=seed, schedule=[(int(a), float(s)) for a, s in bouts])
    return log


def _model_and_config(args):
    """(the model's ONNX graph with its features or None, PipelineConfig) from --model / --config /
    overrides. Any model file prices the graph a phone runs for it
    (:func:`stairsense.export.inference_graph`)."""
    from stairsense.stream import PipelineConfig

    overrides = {k: v for k, v in (("rate_hz", args.rate), ("orientation", args.orientation),
                                   ("segmentation", args.segmentation), ("smoothing", args.smoothing)) if v is not None}
    if not args.model:
        config = PipelineConfig.from_file(args.config) if args.config else PipelineConfig()
        return (None, None, None), bounded_config(config.replace(**overrides), f"--config {args.config}")
    from stairsense.export import inference_graph, load_stair_model

    model = load_stair_model(args.model)
    try:
        config = model.config.agree(overrides)
    except ValueError as exc:
        raise ValueError(f"{args.model}: {exc} (--compare prices the usual variants)") from None
    return inference_graph(model), bounded_config(config, args.model)


def _profile_file(name: str):
    """``--profile`` when it names a file (it may be a shipped profile's name instead)."""
    return name if Path(name).is_file() else None


def _stage_table(reports) -> str:
    from stairsense.export.energy import STAGES

    labels = list(reports)
    width = max(12, *(len(k) for k in labels))
    head = f"{'stage':<18}" + "".join(f"{k:>{width + 2}}" for k in labels)
    lines = [head, "-" * len(head)]
    for stage in STAGES:
        cells = "".join(f"{reports[k].stage_mah[stage]:>{width - 6}.3f} ({reports[k].percent(stage):4.1f}%)"[-(width + 2):]
                        .rjust(width + 2) for k in labels)
        lines.append(f"{stage:<18}{cells}")
    lines.append("-" * len(head))
    lines.append(f"{'mAh over the day':<18}" + "".join(f"{reports[k].total_mah:>{width + 2}.2f}" for k in labels))
    lines.append(f"{'mAh per hour':<18}" + "".join(f"{reports[k].mah_per_hour:>{width + 2}.3f}" for k in labels))
    lines.append(f"{'% battery per day':<18}" + "".join(f"{reports[k].percent_per_day:>{width + 2}.3f}" for k in labels))
    return "\n".join(lines)


def cmd_estimate(args) -> int:
    from stairsense.export.energy import (
        DEFAULT_DAY,
        estimate,
        load_profile,
        measure_workload,
        parse_day,
        plot_breakdown,
    )
    from stairsense.stream import read_log

    check_files({"--plot": args.plot}, {"--model": args.model, "--log": args.log, "--config": args.config,
                                        "--profile": _profile_file(args.profile)})
    profile = load_profile(args.profile)
    if args.speed_ratio is not None:
        profile = profile.with_value("cpu.speed_ratio", args.speed_ratio, "command line --speed-ratio")
    extra_streams = {"barometer": args.barometer} if args.barometer is not None else {}
    (graph, selected, input_names), config = _model_and_config(args)
    # a phone without a barometer is refused before the replay, whether the configuration reads one or turns it on
    profile.hardware_for(["barometer"] if config.barometer else extra_streams)
    if args.log:
        logs = [read_log(p) for p in args.log]
        source = ", ".join(args.log)
    else:
        logs, source = None, "a simulated day sample (standing, walking, stairs)"
    if config.rate_hz is None:
        rates = {round(log.rate_hz) for log in logs or []}
        if len(rates) != 1:
            raise ValueError("no sampling rate: the model's configuration keeps the native rate and the logs do not "
                             "share one; pass --rate HZ (without --model) or logs at one rate")
        config = config.replace(rate_hz=float(rates.pop()))
    if logs is None:
        logs = [_simulated_day(config.rate_hz, args.seed)]
    if args.day:
        day = parse_day(args.day)
    elif args.log:
        day = None  # the logs' own activity mix, scaled to 24 h
    else:
        day = parse_day(DEFAULT_DAY)
    variants = {"configuration": config}
    if args.compare:
        variants.update((label, config.replace(**change)) for label, change in _COMPARE
                        if any(getattr(config, k) != v for k, v in change.items()))
    reports = {}
    for label, cfg in variants.items():
        _say(args, f"measuring {label} ...")
        workload = measure_workload(logs, cfg, graph, selected=selected, input_names=input_names, source=source,
                                    extra_streams=extra_streams)
        reports[label] = estimate(profile, workload, day)
    main = reports["configuration"]
    if args.plot:
        plot_breakdown(reports, args.plot)
    if args.json:
        print(json.dumps({"profile": profile.name, "profile_values": profile.values, "profile_sources": profile.sources,
                          "reports": {k: r.to_dict() for k, r in reports.items()}, "plot": args.plot},
                         indent=2, default=str))
        return 0
    day_text = ", ".join(f"{s / 3600:.2f} h {a}" for a, s in main.day_s.items())
    cfg = main.config
    print(f"profile {profile.name}: {profile.description.split(':')[0]}; battery {main.battery_mah:g} mAh")
    barometer = "".join(f", {name} at {hz:g} Hz" for name, hz in main.side_streams.items())
    print(f"configuration: {cfg['rate_hz']:g} Hz, orientation {cfg['orientation']}, segmentation "
          f"{cfg['segmentation']}, smoothing {cfg['smoothing']}, step context {cfg['step_context']}{barometer}; "
          f"replayed {source}")
    print(f"day: {day_text}")
    if main.workload.get("inference"):
        inf = main.workload["inference"]
        print(f"model: {inf['macs']} multiply-adds + {inf['elementwise']} element ops per window of "
              f"{inf['window_samples']} samples; desktop ONNX Runtime {inf['features_us']:.1f} µs features + "
              f"{inf['classifier_us']:.1f} µs classifier (x{profile['cpu.speed_ratio']:g} on the phone)")
    print("charge by stage, mAh (share of the pipeline):")
    print(_stage_table(reports))
    print(f"phone's own suspend floor over the same hours (not the pipeline's): {main.baseline_mah:.1f} mAh")
    for note in main.notes:
        print(f"note: {note}")
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def cmd_profiles(args) -> int:
    from stairsense.export.energy import load_profile, profile_names

    profiles = [load_profile(name) for name in profile_names()]
    if args.json:
        print(json.dumps([{"name": p.name, "description": p.description, "values": p.values, "sources": p.sources,
                           "sensors": {name: {"current_ma": [list(point) for point in s.points], "source": s.source}
                                       for name, s in p.sensors.items()},
                           "absent_sensors": p.absent} for p in profiles], indent=2))
        return 0
    for p in profiles:
        print(f"{p.name}: {p.description}")
        print(f"  battery {p['battery.capacity_mah']:g} mAh; CPU suspend {p['cpu.suspend_ma']:g} mA, awake "
              f"{p['cpu.awake_ma']:g} mA, active {p['cpu.active_ma']:g} mA; wake lock needed: "
              f"{p['cpu.needs_wake_lock']}; FIFO {p['batching.fifo_samples']:g} samples")
        listed = {name: (s, _LISTED_HZ.get(name, 30.0)) for name, s in p.sensors.items()}
        print("  sensors: " + ", ".join(f"{name} {s.at(hz):g} mA@{hz:g}Hz" for name, (s, hz) in listed.items())
              + "".join(f"; no {name}" for name in p.absent))
    return 0


def add_optimise_arguments(p) -> None:
    from stairsense.export.energy import DEFAULT_DAY, Protocol, SearchSpace
    from stairsense.stream import ORIENTATION_METHODS

    p.add_argument("--budget", required=True, help="battery budget, e.g. '1%%/day'")
    data = p.add_mutually_exclusive_group(required=True)
    data.add_argument("--data", nargs="+", metavar="DATA",
                      help="labelled recordings to score F1 on: a UCI HAPT RawData folder or labelled canonical logs")
    data.add_argument("--simulated-people", type=between(int, 2, 1000, why=" (leave-subjects-out needs two people)"),
                      metavar="N",
                      help="score F1 on N people simulated with a phone barometer (building walks between floors, a "
                           "placement each; seeded by --seed) instead of recordings: what scores the barometer "
                           "(--barometers on) and its accelerometer-only twins alike, as no recording here has "
                           "stairs and air pressure")
    p.add_argument("--profile", default="nexus-2012", help="device profile name or JSON file (default nexus-2012)")
    p.add_argument("--day", default=DEFAULT_DAY, help=f"day description (default {DEFAULT_DAY!r})")
    grid = SearchSpace()
    p.add_argument("--rates", nargs="+", type=rate_arg, default=list(grid.rates), metavar="HZ",
                   help=f"sampling rates to search (default {' '.join(f'{r:g}' for r in grid.rates)})")
    p.add_argument("--orientations", nargs="+", choices=ORIENTATION_METHODS,
                   default=list(grid.orientations), help=f"default {' '.join(grid.orientations)}")
    p.add_argument("--segmentations", nargs="+", choices=["pattern", "sliding"], default=list(grid.segmentations),
                   help="default pattern sliding")
    p.add_argument("--smoothings", nargs="+", choices=["time", "count", "none"], default=list(grid.smoothings),
                   help="default time none")
    p.add_argument("--k", nargs="+", type=positive(int), default=list(grid.feature_counts), metavar="K",
                   help=f"EasyMKL feature counts (default {' '.join(map(str, grid.feature_counts))})")
    p.add_argument("--precisions", nargs="+", choices=["fp32", "fp16", "int8"], default=list(grid.precisions),
                   help="default fp32 fp16 int8")
    p.add_argument("--barometers", nargs="+", choices=["off", "on"], default=["off"],
                   help="off: accelerometer only (default); on: the 7 height features from the barometer; both: each "
                        "front end and its barometer twin. 'on' needs recordings that all carry air pressure "
                        "(--simulated-people N does); a profile without a barometer leaves those configurations out")
    p.add_argument("--subjects", nargs="+", metavar="ID",
                   help="evaluate on these subjects only (the --quick mode's subset; default all)")
    p.add_argument("--quick", action="store_true",
                   help="6 subjects (1 3 5 6 7 8 of UCI HAPT) and k in 3 10 30 79 (576 configurations): a fraction "
                        "of the full run's time")
    protocol = Protocol()
    p.add_argument("--folds", type=between(int, 2, 1000), default=protocol.n_folds,
                   help=f"leave-subjects-out folds (GroupKFold; default {protocol.n_folds})")
    p.add_argument("--max-train", type=between(int, 2, 100_000, why=" (the kernel grows with its square)"),
                   default=protocol.max_train,
                   help=f"training windows per fold, stratified (default {protocol.max_train})")
    p.add_argument("--landmarks", type=landmarks_arg, default=protocol.n_landmarks, metavar="N",
                   help=f"KOMD support-vector budget, as stairsense train --landmarks (default {protocol.n_landmarks}; "
                        "0 = exact KOMD)")
    p.add_argument("--n-jobs", type=n_jobs_arg, default=-1,
                   help="processes for the recordings' fusion and the front-end evaluations (default -1: every core)")
    p.add_argument("--cache", default=str(Path.home() / ".cache" / "stairsense" / "energy"),
                   help="cache folder (default ~/.cache/stairsense/energy)")
    p.add_argument("--out", default="best.json", help="the best configuration under the budget (default best.json)")
    p.add_argument("--plot", metavar="PNG", help="Pareto plot of F1 vs %% battery per day")
    p.add_argument("--seed", type=seed_arg, default=0,
                   help="seed of the training subsample and of --simulated-people (default 0)")
    p.add_argument("--json", action="store_true", help="print the front and the choice as JSON")


def _optimiser_data(args):
    """The optimiser's recordings: ``(load_logs, fingerprint, what they are)``; the fingerprint is
    None for files (their bytes are hashed)."""
    if args.data:
        from ._recordings import load_labelled_logs

        return load_labelled_logs, None, "recordings " + " ".join(args.data)
    from stairsense.export.energy import BAROMETER_HZ, logs_fingerprint, simulated_people

    people = simulated_people(args.simulated_people, seed=args.seed)
    return (lambda paths: people), logs_fingerprint(people), (
        f"{args.simulated_people} simulated people (seed {args.seed}: building walks between floors by stairs, lifts, "
        f"escalators and ramps, a placement each, a phone barometer each at {BAROMETER_HZ:g} Hz)")


def cmd_optimise(args) -> int:
    from stairsense.export.energy import (
        Protocol,
        SearchSpace,
        best_under,
        evaluate_all,
        load_profile,
        pareto_front,
        parse_budget,
        parse_day,
        plot_front,
        price,
        space_for,
        twin_of,
        write_best,
    )

    check_files({"--out": args.out, "--plot": args.plot}, {"--data": args.data, "--profile": _profile_file(args.profile)})
    budget = parse_budget(args.budget)
    profile = load_profile(args.profile)
    day = parse_day(args.day)
    subjects = args.subjects
    if args.quick and not subjects:
        subjects = ["1", "3", "5", "6", "7", "8"]
    if args.quick and args.k == list(SearchSpace().feature_counts):
        args.k = [3, 10, 30, 79]
    subjects = [int(s) if str(s).isdigit() else s for s in subjects] if subjects else None
    barometers = tuple(dict.fromkeys(value == "on" for value in args.barometers))
    space, left_out = space_for(SearchSpace(tuple(args.rates), tuple(args.orientations), tuple(args.segmentations),
                                            tuple(args.smoothings), tuple(args.k), tuple(args.precisions), barometers),
                                profile)
    progress = not args.json and sys.stderr.isatty()
    protocol = Protocol(args.folds, args.max_train, args.landmarks or None, args.seed)
    load_logs, fingerprint, f1_on = _optimiser_data(args)
    records, stats = evaluate_all(args.data or [], space, Path(args.cache), load_logs, subjects=subjects,
                                  protocol=protocol, n_jobs=args.n_jobs, progress=progress, fingerprint=fingerprint)
    candidates = price(records, profile, day)
    front = pareto_front(candidates)
    best = best_under(candidates, budget)
    twin = twin_of(best, candidates)
    f1_on += f", {'subjects ' + ' '.join(map(str, subjects)) if subjects else 'all subjects'}"
    out = write_best(best, args.out, profile=profile.name, budget=budget, day=day, f1_on=f1_on)
    if args.plot:
        plot_front(candidates, front, best, budget, args.plot,
                   f"{len(candidates)} configurations on {profile.name}, day '{args.day}'; F1 leave-subjects-out on "
                   f"{f1_on}")
    payload = {"budget_percent_per_day": budget, "profile": profile.name, "configurations": len(candidates),
               "f1_on": f1_on, "left_out": left_out, "cache": stats, "pareto_front": [vars(c) for c in front],
               "best": vars(best), "best_twin": None if twin is None else vars(twin), "out": str(out),
               "plot": args.plot}
    if args.json:
        print(json.dumps(payload, indent=2))
        return 0
    print(f"{len(candidates)} configurations ({stats['cached']} front ends from the cache, {stats['computed']} "
          f"computed in {stats['wall_s']:.0f} s, {stats['cpu_s']:.0f} CPU-s) on {profile.name}; day: {args.day}")
    print(f"F1 leave-subjects-out on {f1_on}")
    if left_out:
        print(f"not searched: {left_out}")
    print(f"{'%/day':>8} {'mAh/day':>8} {'F1':>6}  configuration")
    for c in front:
        mark = "  <- best under budget" if c is best else ""
        print(f"{c.percent_per_day:8.3f} {c.mah_per_day:8.1f} {c.f1:6.3f}  {c.label()}{mark}")
    print(f"best under {budget:g}%/day: {best.label()} (F1 {best.f1:.3f}, {best.percent_per_day:.3f}%/day)")
    if twin is not None:
        print(f"  {'with' if twin.config['barometer'] else 'without'} the barometer, the same configuration: F1 "
              f"{twin.f1:.3f}, {twin.percent_per_day:.3f}%/day")
    print(f"wrote {out} (stairsense train DATA --config {out} --out m.model; stairsense export m.model --config {out} "
          f"--out m.onnx)")
    if best.config["barometer"]:
        print("note: it reads the barometer: train it on recordings with air pressure (stairsense train --barometer)")
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense energy`` (estimate), ``energy profiles`` and ``energy optimise``."""
    from stairsense.export.energy import DEFAULT_DAY
    from stairsense.stream import ORIENTATION_METHODS

    p = subparsers.add_parser(
        "energy", help="battery cost of a configuration by pipeline stage (and: profiles, optimise)",
        description="Price what the pipeline does on a phone: sensors, wake-ups, event delivery, smoothing, "
                    "gravity/rotation, segmentation, features and inference, from a device profile (every number "
                    "sourced), a replay of a log and the exported ONNX graph. Actions: 'profiles' lists the device "
                    "profiles, 'optimise' finds the most accurate configuration under a battery budget. Without an "
                    "action: the estimate below (its options go before any action word).")
    p.add_argument("--model", metavar="MODEL", help="a model from `stairsense train` or an exported .onnx; its "
                   "configuration and classifier graph are priced")
    p.add_argument("--log", nargs="+", metavar="LOG",
                   help="labelled or unlabelled canonical logs to replay (default: a simulated sample of a day)")
    p.add_argument("--profile", default="nexus-2012",
                   help="a shipped profile name (see 'stairsense energy profiles') or a JSON file (default nexus-2012)")
    p.add_argument("--day", metavar="TEXT",
                   help=f"day description, e.g. {DEFAULT_DAY!r} (default: the logs' own mix scaled to 24 h, or that "
                        "example without --log)")
    p.add_argument("--config", metavar="FILE", help="JSON PipelineConfig (without --model)")
    p.add_argument("--rate", type=rate_arg, metavar="HZ", help="sampling rate (with --model: only its own)")
    p.add_argument("--orientation", choices=ORIENTATION_METHODS,
                   help="orientation method (with --model: only its own)")
    p.add_argument("--segmentation", choices=["pattern", "sliding"], help="(with --model: only its own)")
    p.add_argument("--smoothing", choices=["time", "count", "none"], help="(with --model: only its own)")
    p.add_argument("--compare", action="store_true",
                   help="also price the thesis's comparisons: sliding windows, no smoothing, Mizell, Linear (same "
                        "model cost per window)")
    p.add_argument("--barometer", type=float, metavar="HZ",
                   help="run the barometer at HZ (1-25 Hz is typical) and price its current at that rate and its "
                        "events: the rate of the barometer a configuration with barometer=true reads (a barometer "
                        "model, or --config; default the height filter's 10 Hz), else one turned on beside the "
                        "configuration. A profile whose phone has none is refused")
    p.add_argument("--speed-ratio", type=positive(float), metavar="R",
                   help="phone time / this machine's time for the same code (default: the profile's cpu.speed_ratio, "
                        "an estimate; pass a measured one, e.g. android_stub's Java ns/sample on the phone over ours)")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of the simulated day sample (default 0)")
    p.add_argument("--plot", metavar="PNG", help="stacked bars per stage, configurations side by side")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.set_defaults(func=cmd_estimate)
    actions = p.add_subparsers(dest="energy_action", metavar="[profiles | optimise]", required=False)

    q = actions.add_parser("profiles", help="list the shipped device profiles",
                           description="List the device profiles shipped with stairsense (battery, CPU and sensor "
                                       "currents; every value's source is in the JSON file).")
    q.add_argument("--json", action="store_true", help="print the profiles with every value's source as JSON")
    q.set_defaults(func=cmd_profiles)

    q = actions.add_parser("optimise", aliases=["optimize"], help="best F1 under a battery budget (Pareto front)",
                           description="Search sampling rate x orientation x segmentation x smoothing x EasyMKL "
                                       "features x export precision; F1 from leave-subjects-out evaluations on "
                                       "labelled recordings (cached per front-end configuration), battery from the "
                                       "energy model. Writes the Pareto table and plot and the best configuration "
                                       "under the budget as a file train/export accept.")
    add_optimise_arguments(q)
    q.set_defaults(func=cmd_optimise)
