"""Evaluate a trained or exported model file on labelled recordings: what ``stairsense evaluate --model`` runs.

The model that ships is the model that was evaluated. Cross-validation estimates how a
*recipe* does on new people; this module measures one *file* — a ``stairsense train`` model or the
``.onnx`` that goes to the phone — on recordings it was not trained on. An ONNX file is run through
ONNX Runtime on each window's standardized samples, computing its own features as on the phone.

Reported: STAIR precision, recall and F1 over all windows and per subject, stairs-up and -down
recall, and the false-stair rate (share of NO_STAIR windows classified STAIR) per placement, the
figure that showed a waist-trained model counting level walking in a pocket as stairs.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from stairsense.features import AMBIGUOUS, STAIR, WindowRowStage
from stairsense.models import stair_counts, stair_scores, vote_decisions
from stairsense.stream import Activity, PipelineConfig, run_front_end

from ._recordings import prepare_logs

__all__ = ["evaluate_model"]


def _scores(truth, pred) -> dict:
    precision, recall, f1 = stair_scores(stair_counts(pred, truth))
    return {"precision": precision, "recall": recall, "f1": f1, "stair_windows": int(truth.sum()),
            "windows": int(truth.size)}


def evaluate_model(model_path, logs: Iterable, *, config: PipelineConfig | None = None, progress: bool = False) -> dict:
    """Classify every kept, unambiguous window of ``logs`` with the model file and score it.

    Each log's decisions are voted over ``config.vote_steps`` consecutive kept windows (ambiguous
    ones included, as on the phone, which does not know the labels) before the ambiguous windows
    are dropped: the decisions ``replay`` counts.

    Parameters
    ----------
    model_path : str or Path
        Any model file :func:`stairsense.export.load_stair_model` reads: ``.onnx``/``.ort`` run
        with ONNX Runtime, others are ``stairsense train`` models.
    logs : iterable of SensorLog
        With per-sample labels; ``meta["subject"]`` and ``meta["placement"]`` group the figures.
        Logs without the streams the model's orientation reads get the virtual ones ``stairsense
        train`` adds (:func:`~stairsense._recordings.prepare_logs`), so every model ``train`` makes
        from some recordings can be scored on them.
    config : PipelineConfig, optional
        The configuration to run with; default the model's. It must agree with the model's
        (:meth:`PipelineConfig.agree`).

    Returns
    -------
    dict
        ``overall`` and ``per_subject`` STAIR scores, ``recall_up`` / ``recall_down``,
        ``false_stair_rate`` per placement, ``model`` and ``config``.
    """
    from tqdm.auto import tqdm

    from stairsense.export import load_stair_model

    model = load_stair_model(model_path)
    config = model.config.agree(config or {})
    logs = prepare_logs(list(logs), config, progress=progress)
    truth, pred, subject, placement, direction = [], [], [], [], []
    for i, log in enumerate(tqdm(list(logs), desc="windows", unit="log", disable=not progress)):
        if log.label is None:
            raise ValueError(f"log {log.meta.get('path', i)} has no per-sample labels; evaluation needs them")
        result = run_front_end(log, config)
        rows = WindowRowStage(config, result.log.rate_hz, labelled=True).process(result)
        if not len(rows):
            continue
        decided, onset = model.decide_windows(rows.samples, rows.offsets, **rows.model_inputs())
        p = vote_decisions(decided, rows.t_start_ns, rows.t_end_ns, config.vote_steps, config.step_context_gap_s,
                           onset=onset)
        good = rows.label != AMBIGUOUS
        truth.append(rows.label[good] == STAIR)
        pred.append(p[good] == STAIR)
        direction.append(rows.direction[good])
        subject += [str(log.meta.get("subject", i))] * int(good.sum())
        placement += [str(log.meta.get("placement", "unknown")).lower()] * int(good.sum())
    if not truth:
        raise ValueError("no labelled step windows in the given recordings; nothing to evaluate")
    truth, pred, direction = np.concatenate(truth), np.concatenate(pred), np.concatenate(direction)
    subject, placement = np.array(subject), np.array(placement)

    def recall(code):
        sel = direction == int(code)
        return float(pred[sel].mean()) if sel.any() else None

    return {
        "model": str(model_path),
        "overall": _scores(truth, pred),
        "per_subject": {s: _scores(truth[subject == s], pred[subject == s]) for s in np.unique(subject)},
        "recall_up": recall(Activity.WALKING_UPSTAIRS),
        "recall_down": recall(Activity.WALKING_DOWNSTAIRS),
        "false_stair_rate": {pl: float(pred[(placement == pl) & ~truth].mean())
                             for pl in np.unique(placement) if np.any((placement == pl) & ~truth)},
        "config": config.to_dict(),
    }
