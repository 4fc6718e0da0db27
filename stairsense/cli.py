"""The ``stairsense`` command: simulate, replay, train, evaluate, export, demo.

Each subcommand lives in its own module ``stairsense/_cli_<command>.py`` (a thin shell over
:mod:`stairsense.pipeline` and the subpackages) whose ``add_parser(subparsers)`` registers it;
``--json`` prints one JSON object on stdout for scripts, and errors go to stderr as one line naming
the file and the fix, with exit status 2.
"""
from __future__ import annotations

import argparse
import sys

from stairsense import __version__

from . import (
    _cli_convert,
    _cli_demo,
    _cli_evaluate,
    _cli_export,
    _cli_replay,
    _cli_simulate,
    _cli_train,
    _cli_upgrade_model,
)

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stairsense",
        description="Replay phone sensor logs through the on-device pipeline, train and export the stair-step "
                    "classifier.",
    )
    parser.add_argument("--version", action="version", version=f"stairsense {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Help lists the subcommands in registration order; each module registers its own (BRIEF).
    _cli_simulate.add_parser(sub)
    _cli_replay.add_parser(sub)
    _cli_export.add_parser(sub)
    _cli_train.add_parser(sub)
    _cli_evaluate.add_parser(sub)
    _cli_demo.add_parser(sub)
    _cli_convert.add_parser(sub)
    _cli_upgrade_model.add_parser(sub)
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
