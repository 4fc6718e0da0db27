"""``stairsense upgrade-model``: convert a pickled (format 1) model file you trust to the safe format."""
from __future__ import annotations

from ._cli_common import check_files, emit


def cmd_upgrade_model(args) -> int:
    from stairsense.models import upgrade_model_file

    check_files({"--out": args.out}, {"OLD_MODEL": args.model})
    path = upgrade_model_file(args.model, args.out)
    emit(args, {"model": args.model, "out": str(path)},
         f"wrote {path}: the model of {args.model} as JSON and arrays (loading it runs no code)")
    return 0


def add_parser(subparsers) -> None:
    """Register ``stairsense upgrade-model``."""
    p = subparsers.add_parser(
        "upgrade-model", help="convert a model file from before format 2 (a pickle) that you trust",
        description="Model files written before format 2 hold a pickle, and reading a pickle runs any code its "
                    "author put in it, so `replay`/`export` refuse them. This command reads one anyway (ONLY do "
                    "this for files you wrote or whose source you trust) and writes the same model in the safe "
                    "format of JSON and arrays.")
    p.add_argument("model", metavar="OLD_MODEL", help="a format-1 model file you trust")
    p.add_argument("--out", required=True, metavar="MODEL", help="the converted model file")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_upgrade_model)
