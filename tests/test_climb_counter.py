"""ClimbCounter: stair steps up and down, and the metres of flights only (models/stairstep/_climb.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.models import ClimbCounter

S = 10**9


def windows(decided, height_m, change=None, start_s=None):
    """Rows of consecutive 1 s windows: decisions, the 5 height features (only the signed context
    change is read) and the height at each window's end."""
    n = len(decided)
    height_m = np.asarray(height_m, float)
    change = np.zeros(n) if change is None else np.asarray(change, float)
    height = np.zeros((n, 5))
    height[:, 4] = change
    start = np.arange(n) * S if start_s is None else np.asarray(start_s, np.int64) * S
    return np.asarray(decided), height, height_m, start, start + S


def test_a_flight_climbs_from_its_first_steps_context_to_its_last_stair_step():
    """Closed form: the rises telescope, so a flight of stair steps (some level steps inside it)
    climbs h(last stair step's end) − (h(first stair step's end) − its context change)."""
    decided = [0, 0, 1, 1, 0, 1, 1, 1, 0, 0]
    h = np.array([0.0, 0.0, 0.2, 0.4, 0.55, 0.7, 0.9, 1.1, 1.1, 1.1])
    change = np.array([0, 0, 0.2, 0.4, 0.55, 0.7, 0.9, 0.9, 0.7, 0.4])
    counter = ClimbCounter(context=5).push(*windows(decided, h, change))
    assert (counter.up, counter.down) == (5, 0)
    assert counter.climbed_m == pytest.approx(1.1 - (0.2 - 0.2))
    assert counter.descended_m == 0.0


def test_lone_stair_steps_are_counted_but_climb_nothing():
    """No block ever holds 3 stair steps: each is a stair step up or down, none adds height."""
    decided = [1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0]
    h = np.linspace(0.0, 2.0, len(decided))  # a pressure drift: the height rises all along
    change = np.where(np.arange(len(decided)) == 9, -0.3, 0.4)
    counter = ClimbCounter(context=5).push(*windows(decided, h, change))
    assert (counter.up, counter.down) == (2, 1)
    assert counter.climbed_m == counter.descended_m == 0.0


def test_min_flight_one_credits_every_stair_step_at_once():
    decided = [1, 0, 0, 0, 0, 0, 1]
    h = [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.5]
    counter = ClimbCounter(context=5, min_flight=1).push(*windows(decided, h, [0.3, 0, 0, 0, 0, 0, 0.2]))
    assert counter.climbed_m == pytest.approx(0.3 + 0.2)


def test_a_pause_ends_the_flight():
    """Two stair steps, a pause longer than max_gap_s, two more: never three in one run."""
    decided = [1, 1, 1, 1]
    counter = ClimbCounter(context=5, max_gap_s=1.5).push(*windows(decided, [0.2, 0.4, 0.6, 0.8], [0.2] * 4,
                                                                   start_s=[0, 1, 5, 6]))
    assert counter.up == 4 and counter.climbed_m == 0.0


def test_a_context_smaller_than_a_flight_lowers_it():
    assert ClimbCounter(context=2).min_flight == 2
    with pytest.raises(ValueError, match="min_flight"):
        ClimbCounter(min_flight=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(-1, 1), st.floats(-1, 1), st.integers(0, 3)), min_size=1, max_size=40),
       st.lists(st.integers(1, 40), max_size=6), st.integers(1, 5))
def test_any_chunking_counts_the_same(rows, cuts, min_flight):
    """Streaming: pushing the windows in any chunks gives the counts of one push of them all."""
    decided = [int(d) for d, _, _, _ in rows]
    h = [x for _, x, _, _ in rows]
    change = [c for _, _, c, _ in rows]
    start_s = np.cumsum([1 + gap for _, _, _, gap in rows])  # gaps of 0–3 s: some runs break
    whole = ClimbCounter(min_flight=min_flight).push(*windows(decided, h, change, start_s))
    chunked = ClimbCounter(min_flight=min_flight)
    arrays = windows(decided, h, change, start_s)
    edges = [0, *sorted(c for c in cuts if c < len(rows)), len(rows)]
    for a, b in zip(edges[:-1], edges[1:]):
        chunked.push(*(x[a:b] for x in arrays))
    assert (chunked.up, chunked.down, chunked.climbed_m, chunked.descended_m) == \
        (whole.up, whole.down, whole.climbed_m, whole.descended_m)
