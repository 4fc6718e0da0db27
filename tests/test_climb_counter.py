"""ClimbCounter: stair steps up and down, and the metres of flights only (models/stairstep/_climb.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.features import HEIGHT_NAMES
from stairsense.models import ClimbCounter

S = 10**9


def windows(decided, height_m, change=None, start_s=None):
    """Rows of consecutive 1 s windows: decisions, the 7 height features (only the signed context
    change is read) and the height at each window's end."""
    n = len(decided)
    height_m = np.asarray(height_m, float)
    change = np.zeros(n) if change is None else np.asarray(change, float)
    height = np.zeros((n, len(HEIGHT_NAMES)))
    height[:, HEIGHT_NAMES.index("ctx_height_change_m")] = change
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


def test_a_flight_counts_on_the_side_of_its_own_sign():
    """Closed form: a climb whose first stair steps' contexts dip below zero (the height filter's
    noise on a still-level context) is counted down by those steps' direction, but its height,
    all of it, is a climb."""
    decided = [1, 1, 1, 1, 1]
    h = np.array([-0.05, -0.02, 0.2, 0.4, 0.6])
    change = np.array([-0.05, -0.02, 0.2, 0.4, 0.6])
    counter = ClimbCounter(context=5).push(*windows(decided, h, change))
    assert (counter.up, counter.down) == (3, 2)
    assert counter.climbed_m == pytest.approx(0.6) and counter.descended_m == 0.0


def test_the_open_flight_counts_once_it_is_long_enough_and_its_sign_may_turn():
    """Live figures: two stair steps climb nothing yet, the third credits the flight; a fall
    after it moves the open flight's height to the other side."""
    counter = ClimbCounter(context=5)
    arrays = windows([1, 1, 1, 1], [0.2, 0.4, 0.6, -0.3], [0.2, 0.4, 0.6, -0.3])
    counter.push(*(x[:2] for x in arrays))
    assert counter.climbed_m == counter.descended_m == 0.0
    counter.push(*(x[2:3] for x in arrays))
    assert counter.climbed_m == pytest.approx(0.6) and counter.descended_m == 0.0
    counter.push(*(x[3:] for x in arrays))
    assert counter.climbed_m == 0.0 and counter.descended_m == pytest.approx(0.3)


def test_a_new_segment_ends_the_flight_and_keeps_its_height():
    counter = ClimbCounter(context=5).push(*windows([1, 1, 1], [0.2, 0.4, 0.6], [0.2, 0.4, 0.6]))
    counter.new_segment().push(*windows([1, 1], [5.0, 5.2], [-0.1, -0.2], start_s=[10, 11]))
    assert counter.climbed_m == pytest.approx(0.6) and counter.descended_m == 0.0


def flights_by_brute_force(decided, h, change, start_s, context, max_gap_s, min_flight):
    """The metres of the module docstring's rule, computed whole: number the windows within their
    runs, chain each stair step to the previous one when both are in one run at most
    ``context − 1`` windows apart, and sum each chain's height by its sign."""
    run = pos = 0
    where = []  # (run, position in run) of every window
    for i, t in enumerate(start_s):
        if i and t - (start_s[i - 1] + 1) > max_gap_s:
            run, pos = run + 1, 0
        where.append((run, pos))
        pos += 1
    chains = []
    for i in np.flatnonzero(np.asarray(decided) == 1):
        last = chains[-1][-1] if chains else None
        if last is not None and where[last][0] == where[i][0] and where[i][1] - where[last][1] <= context - 1:
            chains[-1].append(i)
        else:
            chains.append([i])
    up = down = 0.0
    for chain in chains:
        if len(chain) >= min(min_flight, context):
            rise = h[chain[-1]] - (h[chain[0]] - change[chain[0]])
            up, down = up + max(rise, 0.0), down + max(-rise, 0.0)
    return up, down


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(-5, 5), st.floats(-1, 1), st.integers(0, 3)), min_size=1, max_size=40),
       st.integers(1, 6), st.integers(1, 5))
def test_metres_equal_the_flights_summed_whole(rows, context, min_flight):
    """Oracle: the streamed counter's metres equal the brute-force chains' (any runs, gaps,
    contexts and flight lengths)."""
    decided = [int(d) for d, _, _, _ in rows]
    h = [x for _, x, _, _ in rows]
    change = [c for _, _, c, _ in rows]
    start_s = np.cumsum([1 + gap for _, _, _, gap in rows])
    counter = ClimbCounter(context=context, max_gap_s=1.5, min_flight=min_flight)
    counter.push(*windows(decided, h, change, start_s))
    up, down = flights_by_brute_force(decided, h, change, start_s, context, 1.5, min_flight)
    assert counter.climbed_m == pytest.approx(up, abs=1e-9)
    assert counter.descended_m == pytest.approx(down, abs=1e-9)


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
