"""``stairsense export``: a trained model to ONNX for the phone, or ``--inspect`` an exported one."""
from __future__ import annotations

import json

from pathlib import Path

from ._cli_common import MODEL_FIX, add_read_args, check_files, emit, existing_file
from ._cli_types import between, positive


_METADATA_HEADROOM = 2048  # bytes of metadata (configuration, feature names, training summary)


def cmd_export(args) -> int:
    from stairsense.export import export_model, inspect_model

    if args.inspect:
        existing_file(args.model, "exported model", "pass an .onnx or .ort file written by `stairsense export --out`")
        from stairsense.pipeline import model_kind
        from stairsense.stream import PipelineConfig

        info = inspect_model(args.model)
        info = {"model": model_kind(PipelineConfig.from_record(info["metadata"]["config"])), **info}
        emit(args, info, json.dumps(info, indent=2, default=str))
        return 0
    if not args.out:
        raise ValueError("export needs --out FILE.onnx (or --inspect to read an exported model)")
    check_files({"--out": args.out, "--out's ORT twin": Path(args.out).with_suffix(".ort") if args.ort else None},
                {"MODEL": args.model, "--config": args.config, "--validation": args.validation})
    from stairsense.export import support_budget
    from stairsense.models import load_model
    from stairsense.pipeline import model_kind

    model = load_model(existing_file(args.model, "model file", MODEL_FIX))
    if args.precision is None:  # a configuration file from `stairsense energy optimise` may choose it
        from stairsense.stream import config_file_section

        config_file = existing_file(args.config, "configuration file", "pass the JSON that `stairsense energy "
                                    "optimise --out` wrote") if args.config else None
        args.precision = config_file_section(config_file, "export").get("precision", "int8") if config_file else "int8"
    validation = None
    if args.validation:
        validation = [log for p in args.validation for log in _validation_logs(p, args, model.config)]
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
    kind = model_kind(model.config)
    points = "gate landmarks" if report.head == "trees" else "support vectors"
    emit(args, {"model": kind, **report.to_dict()},
          f"wrote {report.path}: {report.size_bytes / 1024:.1f} KB, {report.precision}, {report.n_features} features, "
          f"{report.head} head, {report.n_support_vectors}/{report.n_support_vectors_trained} {points}; parity {parity}"
          + (f"\nwrote {report.ort_path}: {report.ort_size_bytes / 1024:.1f} KB (ORT format)" if report.ort_path else "")
          + f"\nmodel: {kind}" + (" (reads air pressure: the app registers the phone's pressure sensor; a "
                                   "phone without one needs an accelerometer-only model)" if model.config.barometer
                                   else " (no barometer needed)"))
    return 0


def _validation_logs(path, args, config) -> list:
    """The gap-free logs of one ``--validation`` file, read with ``--repair``/``--units``/``--max-gap``
    under the model's gap rule; for a model that reads the barometer, with air pressure."""
    from stairsense.stream import read_log, read_segments

    max_gap_s = config.replace(max_gap_s=args.max_gap or config.max_gap_s).read_gap_s()
    if "split-gaps" in args.repair:
        rest = [r for r in args.repair if r != "split-gaps"]
        logs = read_segments(path, repair=rest, units=args.units, max_gap_s=max_gap_s, report=True)[0]
    else:
        logs = [read_log(path, repair=args.repair, units=args.units, max_gap_s=max_gap_s, report=True)[0]]
    if config.barometer and any(log.pressure is None for log in logs):
        raise ValueError(f"{path}: the model reads the barometer (it was trained with `stairsense train --barometer`) "
                         "but this log has no air pressure (no p column), so its windows have no height features to "
                         "check the export on; pass --validation logs recorded with a barometer, or leave --validation "
                         "out (a simulated log with one is the default)")
    return logs


def add_parser(subparsers) -> None:
    """Register ``stairsense export``."""
    p = subparsers.add_parser("export", help="export a trained model to ONNX for the phone (or --inspect one)",
                       description="Write one ONNX graph: a window's standardized samples [n, 3] (and, for "
                                   "step-context models, the phone's step_context [1, 36]; for models trained with "
                                   "--barometer, its height [1, 7] from air pressure) -> the selected "
                                   "features, [-1, 1] scaling and the model's head (KOMD's RBF decision, or the "
                                   "trees and their support gate) -> score and STAIR flag. "
                                   "Says which model it wrote: with barometer (the phone must feed it air pressure) "
                                   "or accelerometer only. "
                                   "Every export is checked against the Python model and refused if it disagrees.")
    p.add_argument("model", metavar="MODEL", help="a model from `stairsense train` (with --inspect: an .onnx file)")
    p.add_argument("--out", metavar="ONNX", help="output .onnx file")
    p.add_argument("--precision", choices=["fp32", "fp16", "int8"],
                   help="storage of the support vectors (default: the --config file's export.precision, else int8)")
    p.add_argument("--config", metavar="FILE", help="a configuration file with an 'export' section (from "
                   "stairsense energy optimise) choosing --precision")
    p.add_argument("--max-kb", type=between(float, 0, 1 << 20, why=" (1 GB)"), default=32.0,
                   help="size budget: keep as many support vectors as fit (default 32; 0 = keep all)")
    p.add_argument("--max-support-vectors", type=positive(int), metavar="N",
                   help="keep the N support vectors with the largest weight (coefficients refitted): smaller "
                        "model, accuracy cost reported; overrides --max-kb")
    p.add_argument("--ort", action="store_true", help="also write the ORT-format twin for mobile minimal builds")
    p.add_argument("--validation", nargs="+", metavar="LOG", help="logs whose windows check parity, with air "
                   "pressure for a barometer model (default: a simulated 4-minute log)")
    add_read_args(p)
    p.add_argument("--inspect", action="store_true", help="print an exported model's metadata instead")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_export)
