"""``stairsense evaluate``: cross-validate a classifier on labelled recordings."""
from __future__ import annotations

import sys

from ._cli_common import (DATA_HELP, add_config_args, add_read_args, check_files, config_for_model, config_from_args,
                          emit, read_options, repair_summary)
from ._cli_types import between, positive, seed_arg

# Defaults shared with `stairsense train` (a light import: no NumPy for --help).
from stairsense.models import TRAIN_DEFAULTS


def cmd_evaluate(args) -> int:
    from stairsense._train import evaluate

    check_files({}, {"DATA": args.data, "--config": args.config, "--model": args.model})
    read, reports = read_options(args)
    if args.model:
        return _evaluate_file(args, read, reports)
    result = evaluate(args.data, config_from_args(args), protocol=args.protocol, classifier=args.classifier, k=args.k,
                      n_outer=args.folds, random_state=args.seed, progress=not args.json and sys.stderr.isatty(),
                      read=read)
    text = (f"{args.classifier} {args.protocol}: {result['n_windows']} windows ({result['n_stair']} STAIR); STAIR "
            f"precision {result['precision_mean']:.3f}±{result['precision_std']:.3f}, recall "
            f"{result['recall_mean']:.3f}±{result['recall_std']:.3f}, F1 {result['f1_mean']:.3f}±{result['f1_std']:.3f} "
            f"(F1 of mean P,R: {result['f1_of_means']:.3f}); held-out false-stair rate per placement: "
            + ", ".join(f"{k} {v:.1%}" for k, v in result["false_stair_rate"].items()))
    if args.protocol == "leave-one-set-out":
        # The per-fold means weigh a set of 40 windows like one of 40,000, and a set without stairs
        # scores recall 0: each held-out set's own figures are the result.
        text += "".join(f"\n{_set_line(figures)}" for figures in result["per_set"])
    repairs = [r.to_dict() for r in reports if r.repaired]
    emit(args, {**result, "repairs": repairs}, "\n".join([text, *(line for r in repairs for line in repair_summary(r))]))
    return 0


def _set_line(figures: dict) -> str:
    """One held-out set and placement: stair-step recall, level walking called stairs, F1."""
    def share(key):
        return "–" if figures[key] is None else f"{figures[key]:.1%}"

    f1 = "–" if figures["f1"] is None else f"{figures['f1']:.3f}"
    return (f"  {figures['set']} · {figures['placement']}: stair-step recall {share('stair_recall')} of "
            f"{figures['stair_windows']}, level walking called stairs {share('walking_called_stairs')} of "
            f"{figures['walking_windows']}, F1 {f1}")


def _evaluate_file(args, read, reports) -> int:
    """``evaluate --model``: the model runs with its own configuration, as in replay; flags that
    disagree with it are refused before any data is read."""
    from stairsense._evaluate_model import evaluate_model
    from stairsense._recordings import load_labelled_logs
    from stairsense.export import load_stair_model

    model = load_stair_model(args.model)
    config = config_for_model(args, model.config, args.model)
    logs = load_labelled_logs(args.data, max_gap_s=config.read_gap_s(), **read)
    result = evaluate_model(args.model, logs, config=config, progress=not args.json and sys.stderr.isatty())
    o = result["overall"]
    rates = ", ".join(f"{k} {v:.1%}" for k, v in result["false_stair_rate"].items())
    text = (f"{args.model} on {o['windows']} windows ({o['stair_windows']} STAIR): STAIR precision {o['precision']:.3f}, "
            f"recall {o['recall']:.3f}, F1 {o['f1']:.3f}; false-stair rate per placement: {rates}")
    repairs = [r.to_dict() for r in reports if r.repaired]
    emit(args, {**result, "repairs": repairs}, "\n".join([text, *(line for r in repairs for line in repair_summary(r))]))
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense evaluate``."""
    p = subparsers.add_parser("evaluate", help="cross-validate a classifier on labelled recordings",
                       description="Nested evaluation of the thesis's classifiers: leave-subjects-out (honest), "
                                   "nested stratified 10-fold CV, or leave-one-set-out (each DATA argument is a set, "
                                   "held out whole in turn); STAIR precision, recall and F1 as mean ± std, and per "
                                   "set and placement stair-step recall, level walking called stairs and F1 (--json: "
                                   "per_set; printed for leave-one-set-out). With loso and leave-one-set-out each "
                                   "held-out log's decisions are voted over --vote consecutive steps, as replay "
                                   "counts them; nested-cv decides each window alone, as the thesis did.")
    p.add_argument("data", nargs="+", metavar="DATA", help=DATA_HELP)
    add_config_args(p)
    add_read_args(p)
    p.add_argument("--protocol", choices=["loso", "nested-cv", "leave-one-set-out"], default="loso",
                   help="default loso; leave-one-set-out holds out one DATA argument per fold")
    p.add_argument("--classifier", choices=["komd", "knn", "dt"], default="komd", help="default komd")
    p.add_argument("--k", type=positive(int), default=TRAIN_DEFAULTS.k,
                   help="features EasyMKL keeps for KOMD (default %(default)s); with --barometer the 7 height "
                        "features are kept beside them")
    p.add_argument("--folds", type=between(int, 2, 1000, why=" (cross-validation needs at least 2 outer folds)"),
                   help="outer folds, 2 to 1000 (default: one per subject for loso, 10 for nested-cv; "
                        "leave-one-set-out has one per DATA argument)")
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed (default 0)")
    p.add_argument("--model", metavar="FILE", help="evaluate this trained model or exported .onnx file on DATA "
                   "(held-out recordings) instead of cross-validating a classifier")
    p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    p.set_defaults(func=cmd_evaluate)
