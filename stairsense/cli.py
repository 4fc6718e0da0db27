"""The ``stairsense`` command: simulate, replay, train, evaluate, export, demo, import.

Each subcommand lives in its own module ``stairsense/_cli_<command>.py`` (a thin shell over
:mod:`stairsense.pipeline` and the subpackages) whose ``add_parser(subparsers)`` registers it;
``--json`` prints one JSON object on stdout for scripts, and errors go to stderr as one line naming
the file and the fix, with exit status 2.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

from ._cli_common import cli_advice
from ._cli_env import use_writable_caches
from . import (
    _cli_convert,
    _cli_demo,
    _cli_energy,
    _cli_evaluate,
    _cli_export,
    _cli_import,
    _cli_replay,
    _cli_serve,
    _cli_simulate,
    _cli_train,
    _cli_upgrade_model,
)

__all__ = ["main", "build_parser"]


# Set to see the traceback of an internal error (a bug) instead of the one-line report.
DEBUG_ENV = "STAIRSENSE_DEBUG"
# Errors of the user's input or environment: one line and exit 2. The export parity error is named
# rather than imported, so a failed check is a user error whatever class it derives from and
# without importing ONNX for every command.
_USER_ERROR_NAMES = {"ExportParityError"}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: the usage block is what ``--help`` is for."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (every other run would pay for it)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from stairsense import __version__

        print(f"stairsense {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stairsense",
        description="Replay phone sensor logs through the on-device pipeline, train and export the stair-step "
                    "classifier.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Help lists the subcommands in registration order; each module registers its own (BRIEF).
    _cli_simulate.add_parser(sub)
    _cli_replay.add_parser(sub)
    _cli_export.add_parser(sub)
    _cli_train.add_parser(sub)
    _cli_evaluate.add_parser(sub)
    _cli_demo.add_parser(sub)
    _cli_import.add_parser(sub)
    _cli_energy.add_parser(sub)
    _cli_convert.add_parser(sub)
    _cli_upgrade_model.add_parser(sub)
    _cli_serve.add_parser(sub)
    _remember_parsers(parser)
    return parser


def _remember_parsers(parser: argparse.ArgumentParser) -> None:
    """Give every (sub)command's namespace its own parser (``args.command_parser``), so that an error's
    advice names only flags of the command that printed it; the innermost parser's default wins."""
    parser.set_defaults(command_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _remember_parsers(sub)


def _is_user_error(exc: BaseException) -> bool:
    return isinstance(exc, (ValueError, OSError)) or any(c.__name__ in _USER_ERROR_NAMES for c in type(exc).__mro__)


def main(argv=None) -> int:
    """Run one command; bad input or a failed check is one stderr line and exit status 2, never a traceback.

    An internal error (a bug) is one line and exit status 1, with the traceback only when the
    environment variable ``STAIRSENSE_DEBUG`` is set.
    """
    use_writable_caches()  # before numba, ONNX Runtime or matplotlib is imported
    parser = build_parser()
    args = parser.parse_args(argv)
    from stairsense.stream import LogRepairedWarning

    prefix = f"stairsense {args.command}"
    try:
        with warnings.catch_warnings():
            # Warnings are multi-line; commands report repairs themselves, so no warning reaches the user.
            warnings.simplefilter("ignore", LogRepairedWarning)
            return args.func(args)
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if _is_user_error(exc):
            print(f"{prefix}: error: {cli_advice(str(exc), args.command_parser)}", file=sys.stderr)
            return 2
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"{prefix}: internal error ({type(exc).__name__}: {cli_advice(str(exc), args.command_parser)}); this is a bug: "
              f"rerun with {DEBUG_ENV}=1 for the traceback and report it with the command you ran", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
