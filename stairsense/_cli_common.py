"""What every ``stairsense`` subcommand shares: configuration and reading arguments, the checks of the
files it reads and writes, the advice rewrite for CLI users, and ``--json`` output (argument types:
``_cli_types``)."""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
from pathlib import Path

from stairsense.stream import ORIENTATIONS, REPAIRS, PipelineConfig

from ._cli_types import MAX_RATE_HZ, non_negative_int, positive, rate_arg

DATA_HELP = ("labelled canonical logs (.csv/.csv.gz with a label column), a UCI HAPT RawData or Oxford step-counter "
             "folder, or a MobiFall, WEDA-FALL, GeoTecINIT or IPIN 2023 track-3 folder or recording file")

# Configuration flags and the PipelineConfig fields they set.
_CONFIG_FLAGS = (("rate", "rate_hz"), ("orientation", "orientation"), ("segmentation", "segmentation"),
                 ("max_gap", "max_gap_s"), ("step_context", "step_context"), ("barometer", "barometer"),
                 ("vote", "vote_steps"))


def read_options(args) -> tuple[dict, list]:
    """Keyword arguments for reading labelled logs (``--repair``, ``--units``), and the list that
    receives each file's ReadReport."""
    reports: list = []
    return {"repair": tuple(args.repair), "units": args.units, "reports": reports}, reports


def output_path(path, flag="--out"):
    """``path`` as a Path after checking its folder exists, before any work is done."""
    path = Path(path)
    if not path.parent.is_dir():
        raise ValueError(f"{flag} {path}: folder {path.parent} does not exist; create it first")
    if path.is_dir():
        raise ValueError(f"{flag} {path}: is a folder; name a file inside it")
    return path


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file: the same inode when both exist (so a hard link or a symbolic
    link counts), else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def _with_sidecars(named: dict, reading: bool) -> list[tuple[str, Path]]:
    """``(what, path)`` for each path of ``named`` (flag -> path, list of paths or None), and for a sensor
    log also its steps sidecar: the one its writer replaces, and when ``reading`` the one its reader opens."""
    from stairsense.stream import LOG_SUFFIXES, steps_path

    found = []
    for flag, paths in named.items():
        for path in [paths] if isinstance(paths, (str, os.PathLike)) else (paths or []):
            path = Path(path)
            found.append((f"{flag} {path}", path))
            if path.name.endswith(LOG_SUFFIXES):
                sidecars = {steps_path(path), *([steps_path(path, existing=True)] if reading else [])}
                found += [(f"the steps sidecar {side} of {flag} {path}", side) for side in sorted(sidecars)]
    return found


def check_files(outputs: dict, reads: dict | None = None) -> None:
    """Refuse, before any work, a file the command cannot read or an output it cannot or must not write.

    ``outputs`` and ``reads`` map the flag or argument that names them (``"--out"``, ``"LOG"``) to a path,
    a list of paths or None. A file read that exists must be a regular file or a folder: a device or a
    pipe may never end. Each output's folder must exist and the output must not be a folder
    (:func:`output_path`). No output may be a file the command reads, by the same name or another one (a
    hard or symbolic link: compared by inode). A log brings its steps sidecar on both sides: a log's reader
    opens it, a log's writer replaces or removes it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "s.csv.gz").write_bytes(b"")
    ...     check_files({"--out": f"{d}/s.csv.gz"}, {"DATA": [f"{d}/s.csv.gz"]})
    Traceback (most recent call last):
    ValueError: --out .../s.csv.gz would overwrite DATA .../s.csv.gz, which this command reads; choose another name for --out
    >>> check_files({}, {"--config": "/dev/zero"})
    Traceback (most recent call last):
    ValueError: --config /dev/zero: is not a regular file (a device, pipe or socket, which may never end); pass a file
    """
    read = _with_sidecars(reads or {}, reading=True)
    for what, path in read:
        if path.exists() and not (path.is_file() or path.is_dir()):
            raise ValueError(f"{what}: is not a regular file (a device, pipe or socket, which may never end); pass "
                             "a file")
    for flag, path in outputs.items():
        if path is not None:
            output_path(path, flag)
    for what, path in _with_sidecars(outputs, reading=False):
        if path.is_dir():  # a log's sidecar: output_path saw the rest
            raise ValueError(f"{what}: is a folder, where this command writes a file; rename or remove it")
    for flag, paths in outputs.items():
        for (what, out), (source, path) in itertools.product(_with_sidecars({flag: paths}, reading=False), read):
            if _same_file(out, path):
                raise ValueError(f"{what} would overwrite {source}, which this command reads; choose another "
                                 f"name for {flag}")


def log_output_path(path, flag="--out"):
    """An output sensor-log path: its folder exists and its name ends in .csv, .csv.gz or .parquet."""
    from stairsense.stream import LOG_SUFFIXES

    path = output_path(path, flag)
    if not path.name.endswith(LOG_SUFFIXES):
        raise ValueError(f"{flag} {path}: a sensor log's name ends in .csv, .csv.gz or .parquet; rename it")
    return path


def existing_file(path, what: str, fix: str):
    """``path`` if it is a file; else one line naming it, what was expected and ``fix``."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: {'is a folder, not' if path.is_dir() else 'no such'} {what}; {fix}")
    return path


MODEL_FIX = "pass a model written by `stairsense train --out`"


def given_config(args) -> dict:
    """The PipelineConfig fields the user set: every key of ``--config`` plus the flags given."""
    fields = {}
    if getattr(args, "config", None):
        PipelineConfig.from_file(args.config)  # validates, naming the file
        with open(args.config, encoding="utf-8-sig") as fh:
            data = json.load(fh)
        # A sectioned file (from `stairsense energy optimise`) keeps the fields under "pipeline".
        fields.update(data["pipeline"] if "pipeline" in data else data)
    fields.update({name: getattr(args, flag) for flag, name in _CONFIG_FLAGS if getattr(args, flag, None) is not None})
    return fields


def bounded_config(config: PipelineConfig, where) -> PipelineConfig:
    """``config`` if the front end can run it in bounded memory, else one line naming ``where`` it came
    from (a ``--config`` file or a model): its resampling rate is at most :data:`MAX_RATE_HZ`, as ``--rate``."""
    if config.rate_hz is not None and not config.rate_hz <= MAX_RATE_HZ:
        raise ValueError(f"{where}: rate_hz {config.rate_hz:g} is above {MAX_RATE_HZ:g} Hz (phone motion sensors "
                         "deliver at most ~500 Hz); set a lower rate_hz")
    return config


def config_from_args(args) -> PipelineConfig:
    """``--config`` (or the default configuration) with ``--rate``/``--orientation``/... applied."""
    return bounded_config(PipelineConfig().replace(**given_config(args)), f"--config {args.config}")


def config_for_model(args, model_config: PipelineConfig, model_path) -> PipelineConfig:
    """The configuration to run a model with: its own, plus what the user set, which must agree
    (:meth:`PipelineConfig.agree`). A model needs no repeated flags."""
    try:
        config = model_config.agree(given_config(args))
    except ValueError as exc:
        raise ValueError(f"{model_path}: {exc}") from None
    return bounded_config(config, model_path)


# The library's errors give Python advice ("repair 'dedupe'", "units='g'", "max_gap_s"); a CLI user
# needs the flags that do the same. Each rewrite names a flag some command defines; given the command's
# parser, cli_advice does not advise a flag that command lacks.
_ADVICE = (
    (re.compile(r"repair=\('([a-z-]+)',?\)"), r"--repair \1"),
    (re.compile(r"repair '([a-z-]+)'"), r"--repair \1"),
    (re.compile(r"\bunits='([a-z/0-9]+)'"), r"--units \1"),
    (re.compile(r"\bmax_gap_s=(?=[0-9])"), "--max-gap "),
    (re.compile(r"\borientation='([a-z]+)'"), r"--orientation \1"),
    (re.compile(r"\bbarometer=True\b"), "--barometer"),
    (re.compile(r"\bhead='([a-z]+)'"), r"--head \1"),
    (re.compile(r"\bn_landmarks=(?=[0-9])"), "--landmarks "),
    (re.compile(r"\bclassifier='([a-z]+)'"), r"--classifier \1"),
)


# A flag a message names, and the word after it.
_FLAG_MENTION = re.compile(r"(?<![\w-])--([a-z][a-z-]*)(?: ([a-z][a-z0-9/-]*))?")
# The values advice names after a flag whose choices differ between commands (convert repairs less
# than replay); any other word after a flag is the sentence going on ("--preset and --map").
_CHOICE_WORDS = {"--repair": frozenset(REPAIRS), "--orientation": frozenset(ORIENTATIONS)}
# A quoted command (`stairsense import ... --map ...`) names its own flags; they are not this command's.
_QUOTED = re.compile(r"(`[^`]*`)")


def _offered(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with each flag ``parser`` lacks, or a choice its flag refuses, named as a setting that
    this command does not offer: the library's advice is written for every reader of logs and
    models, and not every command has every reading option (``energy --log`` repairs nothing)."""
    def check(match: re.Match) -> str:
        flag, word = f"--{match[1]}", match[2]
        value = word if word in _CHOICE_WORDS.get(flag, ()) else None
        action = parser._option_string_actions.get(flag)
        if action is not None and (value is None or action.choices is None or value in action.choices):
            return match[0]
        setting = match[1] if value is None else f"{match[1]} {value!r}"
        rest = f" {word}" if word is not None and value is None else ""
        return f"{setting} (which `{parser.prog}` does not offer){rest}"

    return "".join(part if _QUOTED.fullmatch(part) else _FLAG_MENTION.sub(check, part)
                   for part in _QUOTED.split(message))


def cli_advice(message: str, parser: argparse.ArgumentParser | None = None) -> str:
    """``message`` on one line, with Python advice rewritten as the CLI flags that do the same.

    Parameters
    ----------
    message : str
    parser : argparse.ArgumentParser, optional
        The parser of the command that prints ``message``: a flag it lacks (or a value its choices
        refuse) is then not advised as a flag.

    Returns
    -------
    str
    """
    message = " ".join(str(message).split())
    for pattern, flag in _ADVICE:
        message = pattern.sub(flag, message)
    return message if parser is None else _offered(message, parser)


def emit(args, payload: dict, text: str) -> None:
    """Print ``payload`` as JSON with ``--json``, else the human-readable ``text``."""
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


def add_config_args(p, rate=True):
    """The arguments that build a :class:`PipelineConfig` (read back by :func:`config_from_args`)."""
    p.add_argument("--config", metavar="FILE", help="JSON PipelineConfig (see stairsense.PipelineConfig)")
    if rate:
        p.add_argument("--rate", type=rate_arg, metavar="HZ", help="resample to this rate before the front end")
    p.add_argument("--orientation", choices=ORIENTATIONS,
                   help=f"how to reach the Earth frame (default from the config: {PipelineConfig.orientation})")
    p.add_argument("--segmentation", choices=["pattern", "sliding"], help="step windows or the sliding baseline")
    p.add_argument("--step-context", type=non_negative_int, metavar="N",
                   help="add the 36 step-shape and step-context features over the last N kept steps (default from "
                        f"the config: {PipelineConfig.step_context}); 0 = the paper's 79 Table 12.1 features only")
    p.add_argument("--vote", type=positive(int), metavar="N",
                   help="decide each step by the majority of N consecutive kept steps of its run, odd (default from "
                        f"the config: {PipelineConfig.vote_steps}, deciding a step one step late); 1 = every step alone")
    # Off unless asked, even when every log has pressure: the model kind is the user's choice (a
    # barometer model refuses logs without pressure), not an accident of the training data.
    p.add_argument("--barometer", action=argparse.BooleanOptionalAction, default=None,
                   help="add the 7 height features from the logs' air pressure (a model that needs a barometer; "
                        "default off: the accelerometer-only model)")


def add_read_args(p):
    """How logs are read: the repairs for what real phones do, the units, the gap limit."""
    p.add_argument("--repair", nargs="+", choices=REPAIRS, metavar="REPAIR", default=[],
                   help="fix instead of failing, each fix reported: sort (reorder), dedupe (drop repeated "
                        "timestamps), drop-nan, drop-impossible (drop values beyond any phone sensor), "
                        "trim-startup (drop a slow start before the steady rate), split-gaps (restart after "
                        "each gap)")
    p.add_argument("--units", choices=["m/s2", "g"], help="accelerometer units in the file (default: its meta, "
                   "else m/s2)")
    p.add_argument("--max-gap", type=positive(float), metavar="S",
                   help="longest time step between samples (default 0.3 s, capped by the smoothing buffer)")


def repair_summary(read: dict | None) -> list[str]:
    """Lines saying what the reader repaired (repairs are reported, never silent)."""
    if not read:
        return []
    lines = [f"repaired {read['path']}: {a['repair']}: {a['what']}: {a['count']} rows (first lines "
             f"{a['first_lines']})" for a in read["actions"]]
    if len(read["segments"]) > 1:
        lines.append(f"repaired {read['path']}: split-gaps: {len(read['segments'])} segments starting at lines "
                     f"{[s[0] for s in read['segments'][:5]]}")
    return lines
