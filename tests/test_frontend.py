"""Front-end stages: per-sample push, whole-log batch and chunked batch give the same result,
and each stage matches an independent oracle (brute force or scipy)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from stairsense import PipelineConfig
from stairsense.stream import ORIENTATION_METHODS, SensorLog
from stairsense.stream._buffer_mean import CausalBufferMean, causal_buffer_mean
from stairsense.stream._frontend import FrontEnd, run_front_end
from stairsense.stream._orientation import (
    MadgwickOrientation,
    quat_to_matrix,
    rotate_to_vertical,
    vertical_quaternion,
)
from stairsense.stream._segment import (
    SlidingWindower,
    StepSegmenter,
    WindowStatus,
    WindowTable,
    segment_steps,
    sliding_windows,
)
from stairsense.stream._standardize import Standardizer, standardize

SETTINGS = settings(max_examples=40, deadline=None)


def _times(rng, n, rate=50.0, jitter=0.3, drop=0.05):
    """Jittered timestamps with dropped samples (gaps of a few samples, shorter than the buffers)."""
    dt = 1e9 / rate
    steps = dt * (1 + jitter * (rng.random(n) - 0.5))
    steps *= np.where(rng.random(n) < drop, 2, 1)
    return np.cumsum(np.maximum(steps, 1)).astype(np.int64)


def _chunks(rng, n):
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(n - 1, int(rng.integers(0, 6))), replace=False)) if n > 1 else []
    return np.split(np.arange(n), cuts)


def _brute_buffer_mean(t, v, span_ns, count, include_current):
    out = []
    for i in range(len(t)):
        hi = i + 1 if include_current else i
        if span_ns is not None:
            if t[i] - t[0] < span_ns:
                continue
            js = [j for j in range(hi) if t[j] >= t[i] - span_ns]
        else:
            if hi < count:
                continue
            js = list(range(hi - count, hi))
        out.append(np.mean(v[js], axis=0))
    return np.array(out).reshape(-1, v.shape[1])


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 120), mode=st.sampled_from(["time", "count"]),
       include=st.booleans())
def test_buffer_mean_push_block_and_brute_force_agree(seed, n, mode, include):
    rng = np.random.default_rng(seed)
    t = _times(rng, n)
    v = rng.normal(size=(n, 3)) * 3 + 9.8
    kw = {"span_ns": 300_000_000} if mode == "time" else {"count": int(rng.integers(1, 20))}
    expected = _brute_buffer_mean(t, v, kw.get("span_ns"), kw.get("count"), include)
    first, batch = causal_buffer_mean(t, v, include_current=include, **kw)
    np.testing.assert_allclose(batch, expected, rtol=1e-12, atol=1e-12)
    assert first == n - len(expected)
    pusher = CausalBufferMean(include_current=include, **kw)
    pushed = [pusher.push(int(t[i]), *v[i]) for i in range(n)]
    assert all(p is None for p in pushed[:first])
    np.testing.assert_allclose(np.array(pushed[first:], dtype=float).reshape(-1, 3), expected, rtol=1e-12, atol=1e-12)
    chunked = CausalBufferMean(include_current=include, **kw)
    parts = [chunked.process(t[c], v[c])[1] for c in _chunks(rng, n)]
    np.testing.assert_allclose(np.concatenate(parts), expected, rtol=1e-12, atol=1e-12)


def test_buffer_mean_gap_longer_than_buffer_is_an_error():
    t = np.array([0, 10, 20, 30, 900, 910], dtype=np.int64) * 1_000_000
    with pytest.raises(ValueError, match="gap longer than the buffer.*split-gaps"):
        causal_buffer_mean(t, np.ones((6, 3)), span_ns=100_000_000)


def test_quaternion_matrix_matches_scipy():
    q = Rotation.random(50, random_state=1)
    np.testing.assert_allclose(quat_to_matrix(q.as_quat()), q.as_matrix(), atol=1e-12)


def test_vertical_rotation_takes_gravity_to_up():
    rng = np.random.default_rng(2)
    g = rng.normal(size=(100, 3))
    g[0] = [0, 0, -1]  # upside down: the degenerate case
    up = rotate_to_vertical(g, g)
    np.testing.assert_allclose(up[:, :2], 0, atol=1e-12)
    np.testing.assert_allclose(up[:, 2], np.linalg.norm(g, axis=1), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vertical_quaternion(g), axis=1), 1, rtol=1e-12)


def test_madgwick_static_tilt_recovers_up_and_follows_a_turn():
    """A still, tilted phone: R(q)·acc must be +g on Up; a pure yaw rate must turn heading by ∫ω."""
    tilt = Rotation.from_euler("xy", [30, -20], degrees=True)  # device → ENU
    n, rate = 500, 100.0
    t = (np.arange(n) * 1e9 / rate).astype(np.int64)
    acc = np.tile(tilt.inv().apply([0, 0, 9.81]), (n, 1))
    q = MadgwickOrientation().run(t, acc, np.zeros((n, 3)))
    np.testing.assert_allclose(Rotation.from_quat(q[-1]).apply(acc[-1]), [0, 0, 9.81], atol=1e-6)
    # Flat phone turning about Up at 0.5 rad/s for 2 s: heading changes by 1 rad.
    flat = np.tile([0, 0, 9.81], (201, 1))
    gyro = np.tile([0, 0, 0.5], (201, 1))
    q = MadgwickOrientation().run((np.arange(201) * 1e7).astype(np.int64), flat, gyro)
    yaw = Rotation.from_quat(q[-1]).as_euler("zyx")[0] - Rotation.from_quat(q[0]).as_euler("zyx")[0]
    assert yaw == pytest.approx(1.0, abs=1e-3)


def _random_log(rng, n, with_rotation_changes=True):
    t = _times(rng, n)
    seconds = (t - t[0]) / 1e9
    cadence = rng.uniform(1.4, 2.2)
    # Orientation: a random start, optionally turning mid-stream.
    rot = Rotation.random(random_state=int(rng.integers(2**31)))
    if with_rotation_changes:
        turn = Rotation.from_rotvec(np.outer(np.clip((seconds - seconds[-1] / 2), 0, 1), rng.normal(size=3)))
        rot = turn * rot
    else:
        rot = Rotation.concatenate([rot] * n)
    dyn = np.c_[0.3 * rng.normal(size=n), 0.3 * rng.normal(size=n),
                2.5 * np.sin(2 * np.pi * cadence * seconds) + 0.4 * rng.normal(size=n)]
    acc_world = dyn + [0, 0, 9.80665]
    acc = rot.inv().apply(acc_world)
    linacc = rot.inv().apply(dyn)
    gyro = rng.normal(scale=0.1, size=(n, 3))
    return SensorLog(t, acc, gyro=gyro, rotvec=rot.as_quat(), linacc=linacc)


def _push_all(front, log):
    windows = []
    for i in range(len(log)):
        windows += front.push(int(log.t_ns[i]), tuple(log.acc[i]), tuple(log.gyro[i]), tuple(log.rotvec[i]),
                              tuple(log.linacc[i]))
    return WindowTable.from_windows(windows)


def _assert_same_windows(a, b):
    for field in ("start", "stop", "t_start_ns", "t_end_ns", "status"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


CONFIGS = [
    PipelineConfig(orientation="rotvec"),
    PipelineConfig(orientation="rotvec", smoothing="none"),
    PipelineConfig(orientation="rotvec", smoothing="count", segmentation="sliding"),
    PipelineConfig(orientation="linear"),
    PipelineConfig(orientation="mizell"),
    PipelineConfig(orientation="vertical", peak_threshold=0.2, valley_threshold=1.0, hysteresis=0.2),
    PipelineConfig(orientation="vertical", threshold_window_s=0.7, threshold_floor=0.05, peak_threshold=0.3,
                   valley_threshold=0.5, hysteresis=0.2),
]


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 600), config=st.sampled_from(CONFIGS))
def test_front_end_push_batch_and_chunks_agree(seed, n, config):
    rng = np.random.default_rng(seed)
    log = _random_log(rng, n)
    batch = run_front_end(log, config)
    method = batch.standardized.method
    _assert_same_windows(_push_all(FrontEnd(config, method, rate_hz=log.rate_hz), log), batch.windows)
    chunked = FrontEnd(config, method, rate_hz=log.rate_hz)
    parts = [chunked.process(log.slice(c[0], c[-1] + 1)) for c in _chunks(rng, n)]
    _assert_same_windows(WindowTable.concatenate(p.windows for p in parts), batch.windows)
    np.testing.assert_allclose(np.concatenate([p.standardized.samples for p in parts]), batch.standardized.samples,
                               rtol=1e-9, atol=1e-9)


def test_standardize_push_matches_batch_samples_for_every_method():
    rng = np.random.default_rng(5)
    log = _random_log(rng, 300)
    for method in ORIENTATION_METHODS:
        config = PipelineConfig(orientation=method)
        batch = standardize(log, config)
        pusher = Standardizer(config, method)
        out = [pusher.push(int(log.t_ns[i]), tuple(log.acc[i]), tuple(log.gyro[i]), tuple(log.rotvec[i]),
                           tuple(log.linacc[i])) for i in range(len(log))]
        kept = [o for o in out if o is not None]
        assert len(out) - len(kept) == batch.first, method
        np.testing.assert_allclose(np.array([o[1] for o in kept]), batch.samples, rtol=1e-9, atol=1e-9, err_msg=method)
        np.testing.assert_allclose([o[2] for o in kept], batch.vertical, rtol=1e-9, atol=1e-9, err_msg=method)


@pytest.mark.parametrize("turning", [False, True])
def test_rotvec_standardization_matches_its_definition(turning):
    """Smoothing off: R(q_i)·(a_i − mean of the 500 ms device-frame buffer), brute force with
    scipy's rotations; for a still orientation that is the world dynamics minus their mean."""
    rng = np.random.default_rng(7)
    log = _random_log(rng, 400, with_rotation_changes=turning)
    out = standardize(log, PipelineConfig(orientation="rotvec", smoothing="none"))
    gravity = _brute_buffer_mean(log.t_ns, log.acc, 500_000_000, None, include_current=True)
    expected = Rotation.from_quat(log.rotvec[out.first:]).apply(log.acc[out.first:] - gravity)
    np.testing.assert_allclose(out.samples, expected, atol=1e-9)
    if not turning:
        world = Rotation.from_quat(log.rotvec).apply(log.acc)
        world_mean = _brute_buffer_mean(log.t_ns, world, 500_000_000, None, include_current=True)
        np.testing.assert_allclose(out.samples, world[out.first:] - world_mean, atol=1e-9)


def test_pattern_segmentation_on_a_clean_step_signal():
    """1.8 Hz sine on Up, 50 Hz: one window per cycle from upward crossing to upward crossing."""
    t = (np.arange(1000) * 20_000_000).astype(np.int64)
    z = 2.0 * np.sin(2 * np.pi * 1.8 * t / 1e9 - 0.3)
    windows = segment_steps(t, z, PipelineConfig())
    assert len(windows) == 35  # 20 s at 1.8 Hz: 36 upward crossings delimit 35 whole cycles
    assert windows.kept.all()
    np.testing.assert_allclose(windows.duration_s, 1 / 1.8, atol=0.021)
    assert np.all(windows.start[1:] == windows.stop[:-1])  # consecutive windows


def test_duration_filter_rejects_with_reason():
    for freq, reason in [(5.0, WindowStatus.TOO_SHORT), (0.3, WindowStatus.TOO_LONG)]:
        t = (np.arange(3000) * 20_000_000).astype(np.int64)
        windows = segment_steps(t, 2.0 * np.sin(2 * np.pi * freq * t / 1e9 + 0.1), PipelineConfig())
        assert len(windows) > 0 and np.all(windows.status == reason)


def test_peak_without_valley_extends_window_and_small_wiggles_are_not_steps():
    cfg = PipelineConfig(peak_threshold=1.0, valley_threshold=1.0, hysteresis=0.1)
    # Segments: (+2, -0.5) peak without valley, then (+0.5, -2) valley → one window over both.
    z = np.array([-0.5, 2, 2, -0.5, -0.5, 0.5, 0.5, -2, -2, 0.5, 0.2, -0.3, 0.3, -0.3, 0.3])
    t = (np.arange(z.size) * 100_000_000).astype(np.int64)
    windows = segment_steps(t, z, cfg)
    assert windows.start.tolist() == [1] and windows.stop.tolist() == [9]
    pusher = StepSegmenter(cfg)
    pushed = [w for i in range(z.size) if (w := pusher.push(int(t[i]), z[i])) is not None]
    _assert_same_windows(WindowTable.from_windows(pushed), windows)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 400), window_s=st.sampled_from([0.2, 1.0, 3.0]),
       floor=st.sampled_from([0.01, 0.5, 2.0]))
def test_adaptive_thresholds_are_absolute_ones_on_z_over_its_amplitude(seed, n, window_s, floor):
    """Oracle: A from a brute-force RMS (floor until the first window has passed), then the
    absolute-threshold segmenter on z / A; push and batch agree with it."""
    rng = np.random.default_rng(seed)
    t = _times(rng, n)
    z = rng.normal(0, 1, n) * np.exp(rng.normal(0, 1))  # some amplitude between e^-2 and e^2
    config = PipelineConfig(threshold_window_s=window_s, threshold_floor=floor, peak_threshold=0.5,
                            valley_threshold=0.4, hysteresis=0.2)
    power = _brute_buffer_mean(t, (z * z)[:, None], int(window_s * 1e9), None, include_current=True)[:, 0]
    amplitude = np.full(n, floor)
    amplitude[n - power.size:] = np.maximum(np.sqrt(power), floor)
    expected = segment_steps(t, z / amplitude, config.replace(threshold_window_s=0.0))
    _assert_same_windows(segment_steps(t, z, config), expected)
    pusher = StepSegmenter(config)
    pushed = [w for i in range(n) if (w := pusher.push(int(t[i]), float(z[i]))) is not None]
    _assert_same_windows(WindowTable.from_windows(pushed), expected)


def test_adaptive_thresholds_count_weak_and_strong_steps_alike():
    """The point of adaptive thresholds: a step pattern ten times weaker (a bag, a back pocket)
    gives the same windows after the first amplitude window, where absolute ones lose it."""
    t = (np.arange(1500) * 20_000_000).astype(np.int64)
    z = 2.0 * np.sin(2 * np.pi * 1.8 * t / 1e9 - 0.3)
    adaptive = PipelineConfig(threshold_window_s=2.0, threshold_floor=0.05, peak_threshold=0.5,
                              valley_threshold=0.5, hysteresis=0.3)
    strong, weak = segment_steps(t, z, adaptive), segment_steps(t, z / 10, adaptive)
    late = strong.t_start_ns > 2e9
    _assert_same_windows(weak.select(weak.t_start_ns > 2e9), strong.select(late))
    assert late.sum() >= 45
    assert len(segment_steps(t, z / 10, PipelineConfig())) == 0  # 0.2 m/s² never crosses τ = 0.5


def test_sliding_windows_count_and_overlap():
    t = (np.arange(0, 10_000, 20) * 1_000_000).astype(np.int64)  # 10 s at 50 Hz
    windows = sliding_windows(t, PipelineConfig(segmentation="sliding"))
    assert len(windows) == int((9.98 - 0.5) // 0.25) + 1
    np.testing.assert_array_equal(windows.stop - windows.start, 25)
    np.testing.assert_array_equal(windows.start, np.ceil(np.arange(len(windows)) * 12.5))  # 250 ms hop = 12.5 samples
    pusher = SlidingWindower(PipelineConfig(segmentation="sliding"))
    pushed = [w for i in range(t.size) for w in pusher.push(int(t[i]))]
    _assert_same_windows(WindowTable.from_windows(pushed), windows)


def test_sample_index_gathers_ragged_windows():
    table = WindowTable(np.array([2, 5, 5]), np.array([4, 8, 6]), *(np.zeros(3, np.int64),) * 2, np.zeros(3, np.int8))
    index, offsets = table.sample_index()
    assert index.tolist() == [2, 3, 5, 6, 7, 5] and offsets.tolist() == [0, 2, 5, 6]


def test_virtual_sensors_of_a_still_phone_are_gravity_free():
    from stairsense.stream._fusion import with_virtual_sensors

    tilt = Rotation.from_euler("xz", [40, 70], degrees=True)
    n = 400
    log = SensorLog((np.arange(n) * 2e7).astype(np.int64), np.tile(tilt.inv().apply([0, 0, 9.80665]), (n, 1)),
                    gyro=np.zeros((n, 3)))
    fused = with_virtual_sensors(log)
    np.testing.assert_allclose(fused.linacc, 0, atol=1e-6)
    np.testing.assert_allclose(Rotation.from_quat(fused.rotvec).apply(log.acc), np.tile([0, 0, 9.80665], (n, 1)), atol=1e-5)
    with pytest.raises(ValueError, match="no gyroscope"):
        with_virtual_sensors(SensorLog(log.t_ns, log.acc))


def test_replay_in_chunks_with_resampling_equals_the_whole_log(tmp_path, monkeypatch):
    """replay resamples chunk by chunk with a carried grid: its windows equal the batch front end on
    the whole resampled log (a per-chunk grid restart once moved a quarter of the windows)."""
    import stairsense.pipeline as pipeline
    from stairsense.stream import simulate, write_log

    log = simulate(minutes=2, rate_hz=50, seed=3)
    path = write_log(log, tmp_path / "walk.csv")
    config = PipelineConfig(rate_hz=30.0, orientation="vertical")
    monkeypatch.setattr(pipeline, "REPLAY_CHUNK_ROWS", 997)  # many chunks, none aligned to the grid
    seen = []
    report = pipeline.replay(path, config, on_windows=lambda result, chunk: seen.append(result.windows))
    batch = run_front_end(log, config).windows
    assert report.segments == 1 and len(seen) > 5
    np.testing.assert_array_equal(np.concatenate([w.t_start_ns for w in seen]), batch.t_start_ns)
    np.testing.assert_array_equal(np.concatenate([w.status for w in seen]), batch.status)


@pytest.mark.parametrize("method, given, missing", [("ahrs", {}, "gyro"), ("rotvec", {}, "rotvec"),
                                                    ("linear", {"rotvec": (1.0, 0.0, 0.0, 0.0)}, "linacc")])
def test_a_method_without_its_stream_is_one_line_naming_it(method, given, missing):
    """Not a TypeError from inside the orientation filter: push and process name the missing stream."""
    from stairsense.stream import Standardizer

    std = Standardizer(PipelineConfig(), method)
    with pytest.raises(ValueError, match=f"orientation '{method}' reads the {missing} stream"):
        std.push(0, (0.0, 0.0, 9.81), **given)
    block = {k: np.asarray([v]) for k, v in given.items()}
    with pytest.raises(ValueError, match=f"orientation '{method}' reads the {missing} stream"):
        std.process(np.array([0]), np.array([[0.0, 0.0, 9.81]]), **block)
