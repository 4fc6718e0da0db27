"""Stacked bars of the charge per pipeline stage, several configurations side by side."""
from __future__ import annotations

from pathlib import Path

from stairsense.stream import atomic_write

from ._model import STAGES, EnergyReport

__all__ = ["plot_breakdown"]

_COLOURS = dict(zip(STAGES, ("#4c72b0", "#64b5cd", "#8c8c8c", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#2a9d8f",
                              "#ccb974", "#b5e48c", "#937860", "#da8bc3"), strict=True))
_LABELS = {"gravity_rotation": "gravity/rotation", "height_filter": "height filter", "step_context": "step context",
           "height_features": "height features"}


def plot_breakdown(reports: dict[str, EnergyReport], path, title: str = "") -> Path:
    """Write a PNG: one stacked bar per configuration (mAh per day by stage), % battery on top.

    Parameters
    ----------
    reports : dict of label → EnergyReport
        In display order; all on the same profile and day.
    path : str or Path
        Output ``.png``; written atomically (:func:`stairsense.stream.atomic_write`).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    labels = list(reports)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 * len(labels) + 3), 4.8))
    bottoms = [0.0] * len(labels)
    for stage in STAGES:
        heights = [reports[k].stage_mah[stage] for k in labels]
        if not any(heights):
            continue
        ax.bar(labels, heights, bottom=bottoms, color=_COLOURS[stage], label=_LABELS.get(stage, stage), width=0.6)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    for i, key in enumerate(labels):
        ax.annotate(f"{reports[key].percent_per_day:.2f} %/day", (i, bottoms[i]), ha="center", va="bottom",
                    fontsize=9, xytext=(0, 2), textcoords="offset points")
    first = reports[labels[0]]
    hours = sum(first.day_s.values()) / 3600
    ax.set_ylabel(f"mAh over {hours:.1f} h of the day")
    ax.set_title(title or f"pipeline charge by stage on {first.profile} ({first.battery_mah:g} mAh battery)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_ylim(0, max(bottoms) * 1.12 if max(bottoms) > 0 else 1)
    plt.setp(ax.get_xticklabels(), rotation=15, ha="right", fontsize=8)
    fig.tight_layout()
    with atomic_write(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
    return path
