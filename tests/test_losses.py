"""The loss operators of spec §1.3 against a brute-force proximal oracle."""
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from stairsense.models.kernel_machines._losses import LOSS_NAMES, Loss, neg_resolvent_scalar

LOSS_PARAMS = {"epsilon": 0.3, "delta": 0.7}


def _random_problem(name, seed, n, v_scale, C_range, log10_alpha_range):
    """A loss and per-sample ``(v, y, C, alpha)``; ``y`` is +-1 for margin losses, real otherwise."""
    loss = Loss(name, **LOSS_PARAMS)
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=v_scale, size=n)
    y = rng.choice([-1.0, 1.0], n) if loss.is_margin else rng.normal(scale=2.0, size=n)
    C, alpha = rng.uniform(*C_range, n), 10.0 ** rng.uniform(*log10_alpha_range, n)
    return loss, v, y, C, alpha


def _oracle_neg_resolvent(loss, v, y, C, alpha):
    """-J_alpha(v) = alpha p - v with p = argmin_z C L(y, z) + alpha/2 (z - v/alpha)^2 (Moreau, spec §1.2)."""
    x = v / alpha

    def moreau(z):
        return float(loss.value(np.array([y]), np.array([z]), C)[0]) + 0.5 * alpha * (z - x) ** 2

    # The prox lies between x and the loss's kink/minimiser region; a wide bracket keeps Brent safe.
    span = 10.0 + abs(x) + abs(y) + C / alpha
    p = minimize_scalar(moreau, bounds=(-span, span), method="bounded", options={"xatol": 1e-12}).x
    return alpha * p - v


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_neg_resolvent_matches_proximal_oracle(name):
    # Small alpha (the fixed point's 1/tr K) is where a plain Newton root search used to stall.
    loss, v, y, C, alpha = _random_problem(name, 1, 40, 3.0, (0.1, 3.0), (-2.0, 0.3))
    got = loss.neg_resolvent(v, y, C, alpha)
    want = np.array([_oracle_neg_resolvent(loss, *args) for args in zip(v, y, C, alpha)])
    np.testing.assert_allclose(got, want, atol=1e-6 * (1 + np.abs(want)).max())


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_compiled_scalar_operator_equals_numpy(name):
    loss, v, y, C, alpha = _random_problem(name, 2, 200, 5.0, (0.01, 5.0), (-4, 1))
    scalar = [neg_resolvent_scalar(loss.code, *args, loss.epsilon, loss.delta) for args in zip(v, y, C, alpha)]
    np.testing.assert_allclose(scalar, loss.neg_resolvent(v, y, C, alpha), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_zero_weight_sample_has_zero_coefficient(name):
    loss = Loss(name, **LOSS_PARAMS)
    out = loss.neg_resolvent(np.array([0.4, -3.0]), np.array([1.0, -1.0]), 0.0, 0.5)
    np.testing.assert_array_equal(out, 0.0)
    assert neg_resolvent_scalar(loss.code, 0.4, 1.0, 0.0, 0.5, loss.epsilon, loss.delta) == 0.0


@pytest.mark.parametrize("v", [-1e6, -50.0, 50.0, 1e6])
def test_logistic_operator_stays_inside_the_box_for_extreme_inputs(v):
    # beta is in (0, C) (spec §1.3); far out it approaches a bound without overflow or NaN.
    out = Loss("logistic").neg_resolvent(np.array([v]), np.array([1.0]), 2.0, 0.01)[0]
    assert np.isfinite(out) and 0.0 <= out <= 2.0
    residual = 0.01 * np.log((2.0 - out) / out) - v - out if 0 < out < 2 else 0.0
    assert abs(residual) < 1e-6 * max(1.0, abs(v))


@pytest.mark.parametrize(
    ("name", "y", "z", "expected"),
    [
        ("hinge", 1.0, 0.25, 0.75),
        ("squared_hinge", -1.0, 0.5, 1.125),
        ("square", 2.0, -1.0, 4.5),
        ("absolute", 2.0, -1.0, 3.0),
        ("epsilon_insensitive", 2.0, 1.0, 0.7),
        ("huber", 0.0, 0.35, 0.35**2 / 1.4),
        ("huber", 0.0, 2.0, 2.0 - 0.35),
        ("logistic", 1.0, 0.0, np.log(2.0)),
    ],
)
def test_loss_values_table(name, y, z, expected):
    # Table of spec §1.3 with erratum E1: RLS is (y - z)^2/2, not a squared hinge.
    assert Loss(name, **LOSS_PARAMS).value(np.array([y]), np.array([z]), 2.0)[0] == pytest.approx(2.0 * expected)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"name": "hinj"}, "Unknown loss 'hinj'"), ({"name": "huber", "delta": 0.0}, "delta"), ({"name": "square", "epsilon": -1}, "epsilon")],
)
def test_bad_loss_parameters_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Loss(**kwargs)
