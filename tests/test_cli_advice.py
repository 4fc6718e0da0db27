"""Every fix an error message names exists where the user is (issue 10).

The messages are collected from the source: every string literal of the packages, rewritten the
way ``stairsense`` rewrites an error for its users (``cli_advice``). Each repair a message names
must be a reader repair and a ``--repair`` choice of every command that reads logs, and each
``--flag`` must be an option of some subcommand (the bad-input table test checks, per error line,
that it is an option of the subcommand that printed it).
"""
import argparse
import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from stairsense._cli_common import cli_advice
from stairsense.cli import build_parser
from stairsense.stream import REPAIRS

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("stairsense", "stream", "models", "export", "features")
READING_COMMANDS = ("replay", "train", "evaluate", "export")
STRING_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _docstring_lines(source: str) -> set[int]:
    """First lines of the docstrings (documentation, not messages: they may cite other tools' flags)."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.add(first.lineno)
    return lines


def string_literals():
    """Every string literal outside docstrings, with where it is."""
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            source = path.read_text()
            docs = _docstring_lines(source)
            for tok in tokenize.generate_tokens(io.StringIO(source).readline):
                # Python 3.12 splits f-strings into parts; their text is in FSTRING_MIDDLE tokens.
                if tok.type in STRING_TOKENS and tok.start[0] not in docs:
                    yield f"{path.relative_to(REPO)}:{tok.start[0]}", tok.string


def subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


LITERALS = list(string_literals())
REPAIR_PHRASES = re.compile(r"repair '([a-z-]+)'|repair=\(['\"]([a-z-]+)|--repair ([a-z-]+)")


def test_the_scan_sees_the_advice():
    """Guard against a scan that finds nothing (and so checks nothing)."""
    named = {m for _, s in LITERALS for groups in REPAIR_PHRASES.findall(s) for m in groups if m}
    assert {"dedupe", "sort", "drop-nan", "split-gaps", "trim-startup"} <= named


@pytest.mark.parametrize("command", READING_COMMANDS)
def test_every_named_repair_is_a_choice_where_logs_are_read(command):
    choices = set(subparsers()[command]._option_string_actions["--repair"].choices)
    assert choices == set(REPAIRS)
    for where, s in LITERALS:
        for groups in REPAIR_PHRASES.findall(s):
            for name in filter(None, groups):
                assert name in choices, f"{where} advises repair {name!r}, which `stairsense {command}` lacks"


def _nested(parsers):
    """The parsers and every nested action parser (``stairsense energy optimise``) below them."""
    for p in parsers:
        yield p
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                yield from _nested(action.choices.values())


def test_every_flag_a_message_names_exists():
    flags = {f for p in _nested([build_parser(), *subparsers().values()]) for f in p._option_string_actions}
    for where, s in LITERALS:
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", cli_advice(s)):
            assert flag in flags, f"{where} names {flag}, which no stairsense command has: {s[:120]}"


@pytest.mark.parametrize("python, cli", [
    ("use repair 'split-gaps' to restart", "use --repair split-gaps to restart"),
    ("read with repair=('drop-nan',) to drop", "read with --repair drop-nan to drop"),
    ("read with units='g' to convert", "read with --units g to convert"),
    ("exceeds max_gap_s=0.3 (the longest", "exceeds --max-gap 0.3 (the longest"),
    ("use orientation='auto' to pick", "use --orientation auto to pick"),
    ("two\nlines", "two lines"),
])
def test_python_advice_becomes_cli_advice(python, cli):
    assert cli_advice(python) == cli
    for flag in re.findall(r"--[a-z][a-z-]*", cli):
        assert any(flag in p._option_string_actions for p in subparsers().values())


def _command_parsers():
    """Every command's parser by its name after ``stairsense`` (``energy optimise`` included)."""
    return {p.prog.removeprefix("stairsense ").strip(): p for p in _nested(subparsers().values())}


FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)(?: ([a-z][a-z0-9/-]*))?")
QUOTED_COMMAND = re.compile(r"`stairsense ([a-z-]+)([^`]*)`")


def _named_flags(text, parser):
    """The flags ``text`` names that ``parser`` lacks, or with a value its choices refuse."""
    bad = []
    for flag, value in FLAG.findall(text):
        action = parser._option_string_actions.get(flag)
        if action is None or (value and action.choices and value not in action.choices):
            bad.append(f"{flag} {value}".strip())
    return bad


@pytest.mark.parametrize("command", sorted(_command_parsers()))
def test_each_command_advises_only_its_own_flags(command):
    """Whatever message a command prints, the flags it advises are its own (issue 25: ``energy --log``
    and ``convert`` advised repairs they do not have); a quoted command is checked against its parser."""
    parsers = _command_parsers()
    parser = parsers[command]
    for where, s in LITERALS:
        advice = cli_advice(s, parser)
        for name, rest in QUOTED_COMMAND.findall(advice):
            if name in parsers:
                assert not _named_flags(rest, parsers[name]), f"{where}: `stairsense {name}{rest}`"
        outside = QUOTED_COMMAND.sub("", advice)
        assert not _named_flags(outside, parser), f"`stairsense {command}` would print {where}: {advice[:160]}"


@pytest.mark.parametrize("argv, lacking", [
    (["energy", "--log"], "repair 'drop-impossible' (which `stairsense energy` does not offer)"),
    (["convert", "--repair", "drop-nan"], None),
])
def test_a_command_without_the_repair_does_not_advise_its_flag(tmp_path, capsys, argv, lacking):
    from stairsense.cli import main

    log = tmp_path / "walk.csv"
    log.write_text("t_ns,ax,ay,az\n0,0,0,9.8\n20000000,1e17,0,9.8\n40000000,0,0,9.8\n")
    args = [*argv, str(log)] if argv[0] == "energy" else ["convert", str(log), str(tmp_path / "out.csv")]
    assert main(args) == 2
    err = capsys.readouterr().err
    if lacking:
        assert lacking in err and "--repair" not in err
    else:
        assert "--repair drop-impossible" in err  # convert has that repair: the flag stays


def test_a_choice_the_command_lacks_is_not_advised(tmp_path, capsys):
    from stairsense.cli import main

    log = tmp_path / "walk.csv"
    log.write_text("t_ns,ax,ay,az\n0,0,0,9.8\n40000000,0,0,9.8\n20000000,0,0,9.8\n")
    assert main(["convert", str(log), str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert "repair 'sort' (which `stairsense convert` does not offer)" in err and "--repair sort" not in err
