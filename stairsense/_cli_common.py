"""What every ``stairsense`` subcommand shares: the configuration arguments, and ``--json`` output."""
from __future__ import annotations

import json

from stairsense.stream import PipelineConfig

DATA_HELP = "labelled canonical logs (.csv/.csv.gz with a label column) or a UCI HAPT RawData folder"


def config_from_args(args) -> PipelineConfig:
    """``--config`` (or the default configuration) with ``--rate``/``--orientation``/``--segmentation`` applied."""
    config = PipelineConfig.from_file(args.config) if getattr(args, "config", None) else PipelineConfig()
    overrides = {k: v for k, v in (("rate_hz", getattr(args, "rate", None)),
                                   ("orientation", getattr(args, "orientation", None)),
                                   ("segmentation", getattr(args, "segmentation", None))) if v is not None}
    return config.replace(**overrides) if overrides else config


def emit(args, payload: dict, text: str) -> None:
    """Print ``payload`` as JSON with ``--json``, else the human-readable ``text``."""
    print(json.dumps(payload, indent=2, default=str) if args.json else text)


def add_config_args(p, rate=True):
    """The arguments that build a :class:`PipelineConfig` (read back by :func:`config_from_args`)."""
    p.add_argument("--config", metavar="FILE", help="JSON PipelineConfig (see stairsense.PipelineConfig)")
    if rate:
        p.add_argument("--rate", type=float, metavar="HZ", help="resample to this rate before the front end")
    p.add_argument("--orientation", choices=["auto", "rotvec", "ahrs", "vertical", "linear", "mizell"],
                   help="how to reach the Earth frame (default from the config: auto)")
    p.add_argument("--segmentation", choices=["pattern", "sliding"], help="step windows or the sliding baseline")
