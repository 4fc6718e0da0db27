"""``stairsense train``: fit the stair-step classifier on labelled recordings."""
from __future__ import annotations

import argparse
import sys

from ._cli_common import (DATA_HELP, add_config_args, add_read_args, check_files, config_from_args, emit,
                          read_options, repair_summary)
from ._cli_types import gamma_arg, landmarks_arg, positive, support_quantile_arg, unit_interval

# The shipped recipe is the one definition of every default below (a light import: no NumPy for --help).
from stairsense.models import HEADS, TRAIN_DEFAULTS, TREES_HEAD


def cmd_train(args) -> int:
    from stairsense._train import train_from_recordings
    from stairsense.models import save_model

    check_files({"--out": args.out}, {"DATA": args.data, "--config": args.config})
    read, reports = read_options(args)
    k = args.k
    if k is None:  # a configuration file from `stairsense energy optimise` may choose it
        from stairsense.stream import config_file_section

        k = config_file_section(args.config, "train").get("k", TRAIN_DEFAULTS.k) if args.config else TRAIN_DEFAULTS.k
    recipe = TRAIN_DEFAULTS.replace(config=config_from_args(args), k=k, lam=args.lam, gamma=args.gamma,
                                    n_landmarks=args.landmarks or None, invariant=args.invariant_features,
                                    support_quantile=args.support_quantile, support_scale=args.support_scale,
                                    head=args.head)
    model = train_from_recordings(args.data, recipe, progress=not args.json and sys.stderr.isatty(), read=read)
    path = save_model(model, args.out)
    summary = model.summary
    repairs = [r.to_dict() for r in reports if r.repaired]
    emit(args, {"out": str(path), **summary, "repairs": repairs},
         "\n".join([f"wrote {path}: trained on {summary['n_windows']} windows {summary['class_counts']} "
                    f"(1 = STAIR) from {len(args.data)} source(s), orientation {summary['orientation_methods']}, "
                    f"classifier {summary['head']}",
                    *(line for r in repairs for line in repair_summary(r))]))
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense train``."""
    p = subparsers.add_parser("train", help="train the stair-step classifier on labelled recordings",
                       description="Cut windows with the front end, extract the 79 Table 12.1 features and the 36 "
                                   "step-context features (--step-context 0: the 79 only) and fit scaler -> "
                                   "EasyMKL top-k -> RBF KOMD (boosted trees with --barometer; see --head); the "
                                   "model file keeps the pipeline configuration.")
    p.add_argument("data", nargs="+", metavar="DATA", help=DATA_HELP)
    add_config_args(p)
    add_read_args(p)
    p.add_argument("--out", required=True, metavar="MODEL", help="output model file")
    p.add_argument("--k", type=positive(int),
                   help=f"features EasyMKL keeps (default: the --config file's train.k, else {TRAIN_DEFAULTS.k}); "
                        "a --barometer model keeps its 7 height features beside them")
    # Why these defaults: stairsense.models.TrainRecipe, where they are defined.
    p.add_argument("--lam", type=unit_interval, default=TRAIN_DEFAULTS.lam,
                   help="KOMD's Λ in [0, 1] (default %(default)s)")
    p.add_argument("--gamma", default=TRAIN_DEFAULTS.gamma, type=gamma_arg,
                   help="RBF γ on the [-1, 1]-scaled features, or 'scale' (default %(default)s)")
    p.add_argument("--landmarks", type=landmarks_arg, default=TRAIN_DEFAULTS.n_landmarks or 0, metavar="N",
                   help="train under a budget of N support vectors, 2 to 10000 (Nyström KOMD; default %(default)s, "
                        "fits the 32 KB int8 export); 0 = exact KOMD with every support vector")
    p.add_argument("--support-quantile", type=support_quantile_arg, default=TRAIN_DEFAULTS.support_quantile,
                   metavar="Q", help="the support gate: decide NO_STAIR where a window is less similar to every "
                                     "landmark than --support-scale times the Q-quantile of the training stair windows' "
                                     "similarity (0 = the least similar of them), so a phone handled in a way no "
                                     "training window resembles is not counted climbing (default %(default)s; 'none' = "
                                     "no gate; needs --landmarks; see stairsense.models.TrainRecipe)")
    p.add_argument("--support-scale", type=positive(float, 1.0), default=TRAIN_DEFAULTS.support_scale, metavar="C",
                   help="the gate's edge, in (0, 1]: below 1 it gates only windows farther out than the training "
                        "stair windows' own edge, which new people's stairs also cross (default %(default)s)")
    p.add_argument("--head", choices=HEADS, default=TRAIN_DEFAULTS.head,
                   help="the classifier on EasyMKL's features: komd (RBF KOMD, the thesis's), trees ("
                        f"{TREES_HEAD['n_trees']} boosted trees of {TREES_HEAD['max_leaves']} leaves behind a support "
                        f"gate of {TREES_HEAD['n_landmarks']} stair landmarks, the window before a STAIR one STAIR "
                        f"from log-odds {TREES_HEAD['onset_threshold']:g}; --lam and --landmarks are "
                        "KOMD's and unused), or auto: trees with --barometer, where they measured better, komd "
                        "without (see stairsense.models.TrainRecipe; default %(default)s)")
    p.add_argument("--invariant-features", action=argparse.BooleanOptionalAction, default=TRAIN_DEFAULTS.invariant,
                   help="select only features that do not depend on the phone's heading (z and norm rows)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_train)
