"""The argument types of ``stairsense``: every number a flag takes is checked, bounds included, before any
work is done, and a bad one is refused with one line naming the flag, what was expected and what came.

A bound says how much a flag may ask for: a rate, a duration or a count beyond it would only make a
command allocate or run without end (``simulate --minutes 1e9`` never finished, ``replay --rate 1e9``
asked for 447 GiB), so it is refused rather than attempted.
"""
from __future__ import annotations

import argparse
import math

#: Resampling rates the CLI accepts, Hz. Phone motion sensors deliver at most ~500 Hz; a higher rate
#: only multiplies the samples the front end holds.
MAX_RATE_HZ = 1000.0
#: Longest simulated recording, minutes: simulate holds the whole log in memory (24 h at 200 Hz ~ 3 GB).
MAX_SIMULATED_MINUTES = 24 * 60.0
#: Largest support-vector budget: the Nyström kernel block is landmarks² (10,000: 0.8 GB); the 32 KB
#: phone export holds about 300.
MAX_LANDMARKS = 10_000
#: Seeds are what NumPy's and scikit-learn's generators take.
MAX_SEED = 2**32 - 1
#: Most worker processes a command starts (joblib's ``n_jobs``).
MAX_JOBS = 1024


def _number(kind, text):
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {'whole ' if kind is int else ''}number, got {text!r}") from None


def between(kind, low, high, *, above: bool = False, why: str = ""):
    """An argparse type: a finite ``kind`` (int or float) in [``low``, ``high``] (with ``above``, > ``low``),
    refused with one line naming the bounds, ``why`` they are there, and the value.

    Examples
    --------
    >>> between(float, 0, 1000, above=True, why=" (phones sample at most ~500 Hz)")("1e9")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected a number > 0 and <= 1000 (phones sample at most ~500 Hz), got '1e9'
    """
    whole = "whole " if kind is int else ""
    low_text, high_text = (str(int(v)) if float(v).is_integer() else f"{v:g}" for v in (low, high))
    if high == math.inf:
        expected = f"a {whole}number {'>' if above else '>='} {low_text}"
    elif above:
        expected = f"a {whole}number > {low_text} and <= {high_text}"
    else:
        expected = f"a {whole}number in [{low_text}, {high_text}]"

    def parse(text):
        value = _number(kind, text)
        if not ((low < value if above else low <= value) and value <= high and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"expected {expected}{why}, got {text!r}")
        return value
    parse.__name__ = expected  # argparse names the type in its own messages
    return parse


def positive(kind, at_most: float = math.inf, why: str = ""):
    """An argparse type: ``kind`` (int or float) > 0 and at most ``at_most``."""
    return between(kind, 0, at_most, above=True, why=why)


non_negative = between(float, 0, math.inf)
non_negative_int = between(int, 0, math.inf)
unit_interval = between(float, 0, 1)
#: A resampling rate (``--rate``).
rate_arg = positive(float, MAX_RATE_HZ, " Hz (phone motion sensors deliver at most ~500 Hz)")
#: A random seed (``--seed``).
seed_arg = between(int, 0, MAX_SEED)


def support_quantile_arg(text):
    """An argparse type: ``none`` (no support gate) or the share of training stair windows the gate
    may reject, in [0, 0.5]."""
    return None if text == "none" else between(float, 0, 0.5, why=" (or 'none')")(text)


def gamma_arg(text):
    """An argparse type: ``scale`` or a float > 0 (an RBF width)."""
    return text if text == "scale" else positive(float)(text)


def landmarks_arg(text):
    """An argparse type: 0 (exact KOMD) or a support-vector budget in [2, :data:`MAX_LANDMARKS`]."""
    value = _number(int, text)
    if value != 0 and not 2 <= value <= MAX_LANDMARKS:
        raise argparse.ArgumentTypeError(f"expected 0 (exact KOMD, every support vector) or a budget of support "
                                         f"vectors in [2, {MAX_LANDMARKS}], got {text!r}")
    return value


def n_jobs_arg(text):
    """An argparse type: joblib's ``n_jobs``, 1 to :data:`MAX_JOBS` processes, or -1 for every core (-2 every
    core but one, ...)."""
    value = _number(int, text)
    if value == 0 or abs(value) > MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected a number of processes in [1, {MAX_JOBS}], or -1 for every core "
                                         f"(-2 every core but one, ...), got {text!r}")
    return value
