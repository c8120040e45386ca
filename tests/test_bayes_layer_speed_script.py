"""The composable layer's speed benchmarks run end to end with tiny arguments."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from tests.helpers import ROOT, run_script_rows

pytest.importorskip("pymc")


def run_script(name: str, *args: str) -> dict:
    """Run ``benchmarks/<name>`` in a subprocess; return the JSON row it prints last."""
    return run_script_rows(name, *args)[-1]


def load_benchmark(name: str):
    """Import ``benchmarks/<name>.py`` as a module, as the scripts see their siblings."""
    import importlib.util

    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:  # a script's own folder is on its path
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bayes_layer_speed_one_case_tiny():
    row = run_script(
        "bayes_layer_speed.py", "--run", "zipf", "--d", "12", "--draws", "30", "--tune", "30",
        "--seed", "2",
    )  # fmt: skip
    assert row["d"] == 12 and row["draws"] == 30 and row["method"] == "bayes-dirichlet"
    # both chains' draws: at least one leapfrog step per draw, at most 2^10 - 1
    assert 2 * 30 <= row["leapfrog_draws"] <= 2 * 30 * 1023
    assert row["leapfrog_warmup"] is None or row["leapfrog_warmup"] >= 2 * 30
    assert row["seconds_total"] >= row["seconds_fit"] >= row["seconds_sampling"] > 0
    if row["sampler"] == "nutpie":  # a fresh process compiles the model
        assert row["seconds_sampling"] > row["seconds_compile"] > 0
    else:
        assert row["seconds_compile"] is None
        # PyMC's own timer of the sampler's run, inside the fit's sampling call
        assert 0 < row["seconds_sampler_run"] <= row["seconds_sampling"]
    assert abs(row["sum"] - 1.0) < 1e-9
    # the tuned step and tree depth, and the five worst-mixing items, worst first
    assert row["step_size"] > 0 and 0 <= row["tree_depth"] <= 10
    worst = [int(v) for v in row["worst_items"].split()]
    r_hat = [float(v) for v in row["worst_r_hat"].split()]
    assert len(worst) == len(set(worst)) == 5 and all(0 <= v < 12 for v in worst)
    assert r_hat == sorted(r_hat, reverse=True)
    assert 0 <= row["items_r_hat_over_1_05"] <= row["items_r_hat_over_1_01"] <= 12
    assert len(row["worst_z_estimate"].split()) == len(row["worst_z_true"].split()) == 5


def test_gradient_cost_tiny():
    row = run_script(
        "gradient_cost.py", "--cases", "zipf", "--d", "12", "--repeat", "2", "--seconds",
        "0.05", "--out", "",
    )  # fmt: skip
    assert row["case"] == "zipf" and row["d"] == 12 and row["rounds"] == 2
    assert 0 < row["ms_per_evaluation"] <= row["ms_median"]
    assert row["calls_per_round"] >= 5 and row["compile_seconds"] > 0


@pytest.mark.slow  # a research mode; the script's tiny default run is above
def test_gradient_cost_nuts_runs_tiny():
    # --nuts: NumPyro's NUTS on each JAX density in turn, two chains, steps counted
    pytest.importorskip("numpyro")
    row = run_script(
        "gradient_cost.py", "--cases", "zipf", "--d", "12", "--repeat", "1", "--nuts", "20",
        "--backends", "jax", "jax-hand", "--out", "",
    )  # fmt: skip
    assert row["backend"] == "jax-hand" and row["draws"] == 20 and row["d"] == 12
    # both chains: at least one leapfrog step per iteration, at most 2^10 - 1
    assert 2 * 20 <= row["steps_draws"] <= 2 * 20 * 1023
    assert 2 * 20 <= row["steps_warmup"] <= 2 * 20 * 1023
    assert row["seconds"] > row["seconds_warmup"] > 0 and row["ms_per_step"] > 0
    assert len(row["step_size"].split()) == 2
    assert row["kernel"] == "NUTS" and row["trajectory_length"] is None
    # 20 draws: the numbers are rough, but finite and ordered
    assert 0.8 < row["r_hat_max"] < 100 and 0 < row["ess_bulk_min"] <= row["ess_bulk_median"]
    with pytest.raises(ValueError, match="jax-hand"):
        load_benchmark("gradient_cost").nuts_runs("zipf", 12, 20, 1, ["numba", "jax"])


@pytest.mark.slow  # a research mode; the script's tiny default run is above
def test_gradient_cost_depth_caps_and_static_hmc_tiny():
    # --nuts-depths 2: at most 2^2 - 1 = 3 leapfrog steps per iteration and chain;
    # --hmc-lengths 1.5: static HMC after NUTS, ceil(length / step) steps per draw and chain
    pytest.importorskip("numpyro")
    nuts, hmc = run_script_rows(
        "gradient_cost.py", "--cases", "zipf", "--d", "12", "--repeat", "1", "--nuts", "20",
        "--backends", "jax", "--nuts-depths", "2", "--hmc-lengths", "1.5", "--first-round",
        "3", "--out", "",
    )  # fmt: skip
    assert nuts["round"] == hmc["round"] == 3
    assert nuts["kernel"] == "NUTS" and nuts["max_tree_depth"] == 2
    assert 2 * 20 <= nuts["steps_draws"] <= 2 * 20 * 3
    assert 2 * 20 <= nuts["steps_warmup"] <= 2 * 20 * 3
    assert hmc["kernel"] == "HMC" and hmc["trajectory_length"] == 1.5
    steps = [int(np.ceil(1.5 / float(s))) for s in hmc["step_size"].split()]
    assert hmc["steps_draws"] == 20 * sum(steps)
    for row in (nuts, hmc):
        assert 0 < row["ess_bulk_q001"] <= row["ess_bulk_q01"] <= row["ess_bulk_median"]


@pytest.mark.slow  # a research mode; the script's tiny default run is above
def test_gradient_cost_jittered_hmc_tiny():
    # --hmc-jitter 0.5 and no NUTS: each iteration's length uniform in 1.5 * [0.5, 1.5],
    # so a chain's draws take between ceil(0.75 / step) and ceil(2.25 / step) steps each
    pytest.importorskip("numpyro")
    rows = run_script_rows(
        "gradient_cost.py", "--cases", "zipf", "--d", "12", "--repeat", "1", "--nuts", "40",
        "--backends", "jax", "--nuts-depths", "--hmc-lengths", "1.5", "--hmc-jitter", "0.5",
        "--out", "",
    )  # fmt: skip
    assert len(rows) == 1 and rows[0]["kernel"] == "HMC" and rows[0]["hmc_jitter"] == 0.5
    steps = np.array([float(s) for s in rows[0]["step_size"].split()])
    low, high = np.ceil(0.75 / steps).sum(), np.ceil(2.25 / steps).sum()
    # strictly inside: 80 draws of a uniform length do not all land on one end
    assert 40 * low < rows[0]["steps_draws"] < 40 * high
    # and not the fixed length's count: the jitter took effect
    assert rows[0]["steps_draws"] != 40 * np.ceil(1.5 / steps).sum()


@pytest.mark.slow  # the what-if's own check; test_gradient_cost_tiny runs the script
def test_gradient_cost_hand_written_jax_form_is_the_models_density():
    """The what-if is timed only after its value and gradient match PyMC's; a wrong one fails."""
    pytest.importorskip("jax")
    import jax
    import jax.numpy as jnp

    from bayesldp.models import dirichlet

    jax.config.update("jax_enable_x64", True)  # as the script and PyMC's samplers do
    bench = load_benchmark("gradient_cost")
    row = run_script(
        "gradient_cost.py", "--cases", "zipf", "--d", "12", "--repeat", "1", "--seconds",
        "0.02", "--backends", "jax", "jax-hand", "--out", "",
    )  # fmt: skip
    assert row["backend"] == "jax-hand" and row["ms_per_evaluation"] > 0
    _, m = load_benchmark("speed_cases").case_measurement("zipf", 0, 12)
    model = dirichlet.build_dirichlet_model(m)
    point = model.initial_point()
    x = tuple(jnp.asarray(point[v.name]) for v in model.value_vars)
    logp = bench.hand_written_logp(model)
    value_and_grad = jax.jit(jax.value_and_grad(logp))
    reference = jax.jit(jax.value_and_grad(bench.jax_density(model, "jax")))
    bench.check_hand_written(reference, value_and_grad, x)  # passes

    def wrong(xs):  # the concentration's prior left out
        return logp(xs) + 0.5 * xs[0] ** 2

    with pytest.raises(RuntimeError, match="differs"):
        bench.check_hand_written(reference, jax.jit(jax.value_and_grad(wrong)), x)


@pytest.mark.slow  # research options; test_bayes_layer_speed_one_case_tiny runs the script
def test_bayes_layer_speed_forwards_sampler_kwargs_and_a_fixed_concentration(tmp_path):
    # through main(), so the options must reach the per-case process
    row = run_script(
        "bayes_layer_speed.py", "--cases", "zipf", "--d", "12", "--draws", "20", "--tune",
        "20", "--sampler-kwargs", '{"maxdepth": 2}', "--concentration", "0.5", "--out",
        str(tmp_path), "--name", "tiny",
    )  # fmt: skip
    assert row["method"] == "bayes-dirichlet, a fixed" and row["concentration"] == 0.5
    assert json.loads(row["sampler_kwargs"]) == {"maxdepth": 2}
    if row["sampler"] == "nutpie":  # a depth cap of 2: at most 3 steps per draw
        assert row["tree_depth"] <= 2 and row["leapfrog_draws"] <= 2 * 20 * 3
    assert (tmp_path / "tiny.csv").exists()


@pytest.mark.slow  # a research mode; the script's tiny default run is above
def test_bayes_layer_speed_runs_each_warmup_depth_in_turn(tmp_path):
    # --warmup-depths 0 3: each seed without a cap on NumPyro's warm-up trees, then with
    # a cap of 3, recorded as fit applied it
    from bayesldp.models import available_samplers

    if "numpyro" not in available_samplers():
        pytest.skip("needs jax and numpyro")
    rows = run_script_rows(
        "bayes_layer_speed.py", "--cases", "zipf", "--d", "12", "--draws", "20", "--tune",
        "20", "--samplers", "numpyro", "--warmup-depths", "0", "3", "--out", str(tmp_path),
        "--name", "depths",
    )  # fmt: skip
    assert [row["warmup_tree_depth"] for row in rows] == [None, 3]
    assert all(
        0 < row["ess_bulk_q001"] <= row["ess_bulk_q01"] <= row["ess_bulk_median"] for row in rows
    )
    assert (tmp_path / "depths.csv").exists()


def test_leapfrog_gaussian_tiny():
    row = run_script(
        "leapfrog_gaussian.py", "--dims", "50", "--steps", "0.3", "--reps", "20", "--out", ""
    )
    assert row["d"] == 50 and row["leapfrog_steps"] == 11  # ceil(pi / 0.3)
    assert 0 < row["acceptance_q10"] <= row["mean_acceptance"] <= 1


def test_leapfrog_gaussian_energy_error_against_the_exact_oscillator():
    # one dimension, one step: leapfrog on q'q/2 is a linear map whose energy error has
    # a closed form, so the script's integrator is checked against it
    import numpy as np

    module = load_benchmark("leapfrog_gaussian")

    h = 2.0  # ceil(pi / 2) = 2 steps
    rng = np.random.default_rng(4)
    row = module.acceptance(1, h, 1, np.random.default_rng(4))
    q, p = rng.standard_normal((1, 1))[0, 0], rng.standard_normal((1, 1))[0, 0]
    step = np.array([[1 - h**2 / 2, h], [-h * (1 - h**2 / 4), 1 - h**2 / 2]])  # (q, p) map
    q2, p2 = np.linalg.matrix_power(step, 2) @ np.array([q, p])
    expected = 0.5 * (q2**2 + p2**2) - 0.5 * (q**2 + p**2)
    assert row["mean_energy_error"] == pytest.approx(expected, rel=1e-12)


def test_step_limit_tiny():
    row = run_script(
        "step_limit.py", "--cases", "zipf", "--d", "12", "--reps", "4", "--steps", "0.2",
        "--out", "",
    )  # fmt: skip
    assert row["d"] == 12 and row["leapfrog_steps"] == 16 and 0 < row["a"]
    assert 0 <= row["predicted_acceptance"] <= 1
    assert sum(v for k, v in row.items() if k.startswith("items ")) == 11  # all but the reference


def test_step_limit_constants_apply_for_the_run_only():
    # --constants moves the kinks (so the energy errors change) and is undone afterwards;
    # a name that is not one of the map's constants is refused
    import argparse

    from bayesldp.models import dirichlet

    step_limit = load_benchmark("step_limit")
    floor = dirichlet.KINK_FLOOR
    argv = ["--cases", "zipf", "--d", "40", "--reps", "8", "--steps", "0.3", "--out", ""]
    plain = step_limit.main(step_limit.build_parser().parse_args(argv))
    moved = step_limit.main(
        step_limit.build_parser().parse_args([*argv, "--constants", "KINK_FLOOR=0.02"])
    )
    assert dirichlet.KINK_FLOOR == floor
    assert moved[0]["constants"] == "KINK_FLOOR=0.02" and plain[0]["constants"] == ""
    assert moved[0]["mean_energy_error"] != plain[0]["mean_energy_error"]
    with pytest.raises(argparse.ArgumentTypeError, match="FOO"):
        step_limit.parse_constants("FOO=1")


def test_step_limit_per_item_density_matches_the_model_and_its_gradient():
    # with the normaliser lse at its value, the per-item terms plus the reference item's
    # add up to dirichlet_simplex's log-density (up to a constant): checked at random
    # points; the derivative is checked against finite differences
    import numpy as np
    import pymc as pm

    import bayesldp
    from bayesldp.models import dirichlet, ldp_likelihood

    step_limit = load_benchmark("step_limit")
    counts = np.array([400, 250, 200, 100, 40, 10])
    m = bayesldp.OUE(1.0, 6).simulate(counts, np.random.default_rng(1))
    a = 0.3
    hints = dirichlet.parametrization_hints(m)
    with pm.Model() as model:
        f = dirichlet.dirichlet_simplex("f", a, m)
        ldp_likelihood("counts", f, m)
    logp = model.compile_logp()
    ref = hints["reference"] > 0
    col = {k: hints[k][~ref, None] for k in ("sharpness", "width", "kink", "centre")}
    c, n, p, q = m.support_counts.astype(float), float(m.n), m.p, m.q
    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(4):
        t = np.where(ref, 0.0, rng.normal(0.0, 1.5, 6))
        u = t + hints["start"]
        z = hints["sharpness"] * (u - hints["kink"])
        y = hints["centre"] + hints["width"] * u - np.logaddexp(0, -z) / (hints["sharpness"] * a)
        y = np.where(ref, 0.0, y)
        lse = np.logaddexp.reduce(y)
        terms, _ = step_limit.item_terms(u[~ref, None], col, a, lse, c[~ref, None], n, p, q)
        pi_ref = q + (p - q) * np.exp(-lse)
        ref_term = -a * lse + c[ref][0] * np.log(pi_ref) + (n - c[ref][0]) * np.log1p(-pi_ref)
        diffs.append(logp({"f_t": t}) - (terms.sum() + ref_term))
    assert np.ptp(diffs) < 1e-7, diffs
    args = (a, 2.0, c[~ref, None], n, p, q)
    points = np.linspace(-4.0, 3.0, 5)[None, :].repeat(5, axis=0)
    _, grad = step_limit.item_terms(points, col, *args)
    up, _ = step_limit.item_terms(points + 1e-6, col, *args)
    down, _ = step_limit.item_terms(points - 1e-6, col, *args)
    np.testing.assert_allclose(grad, (up - down) / 2e-6, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kink", ["logistic", "normal", "square"])
def test_step_limit_kink_shapes_and_their_derivatives(kink):
    # g' is the Jacobian's kink term and g'' its derivative: finite differences of g
    import numpy as np

    step_limit = load_benchmark("step_limit")
    z = np.linspace(-30.0, 8.0, 77)
    g, slope, bend = step_limit.kink_terms(z, kink)
    up, down = step_limit.kink_terms(z + 1e-5, kink), step_limit.kink_terms(z - 1e-5, kink)
    np.testing.assert_allclose(slope, (up[0] - down[0]) / 2e-5, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(bend, (up[1] - down[1]) / 2e-5, rtol=1e-5, atol=1e-7)
    # all rise to 0 above the kink; below it the log-sigmoid is linear, log Phi and the
    # squared softplus quadratic
    assert abs(g[-1]) < 1e-3 and np.all(np.diff(g) > 0)
    expected_tail = z[0] if kink == "logistic" else -0.5 * z[0] ** 2
    assert g[0] == pytest.approx(expected_tail, rel=0.15)


@pytest.mark.parametrize("kink", ["normal", "square"])
def test_what_if_kink_density_is_the_dirichlet(kink):
    # each what-if map keeps the law of f: scipy's Dirichlet plus the change of variables
    # (finite-difference Jacobian), up to the constant of the unused reference slot
    import numpy as np
    import pymc as pm
    from scipy import stats

    import bayesldp

    module = load_benchmark(f"kink_{kink}")
    step_limit = load_benchmark("step_limit")
    counts = np.array([40_000, 25_000, 20_000, 10_000, 4_000, 1_000, 0, 0])
    m = bayesldp.OUE(1.0, 8).simulate(counts, np.random.default_rng(2))
    alpha = 0.05
    hints = getattr(module, f"{kink}_kink_hints")(m)
    assert np.unique(hints["sharpness"].round(6)).size > 1
    with pm.Model() as model:
        getattr(module, f"{kink}_kink_simplex")("f", alpha, m)
    logp = model.compile_logp()
    ref = int(np.argmax(hints["reference"]))
    k = hints["sharpness"]

    def y_of(u):
        shape, _, _ = step_limit.kink_terms(k * (u - hints["kink"]), kink)
        y = hints["centre"] + hints["width"] * u + shape / (k * alpha)
        y[ref] = 0.0
        return y

    rng = np.random.default_rng(0)
    diffs = []
    for _ in range(5):
        t = rng.normal(0.0, 2.0, 8)
        t[ref] = 0.0
        u = t + hints["start"]
        y = y_of(u)
        f = np.exp(y - np.logaddexp.reduce(y))
        slope = (y_of(u + 1e-6) - y_of(u - 1e-6)) / 2e-6
        others = np.arange(8) != ref
        expected = (
            stats.dirichlet.logpdf(f, np.full(8, alpha))
            + np.log(f).sum()
            + np.log(slope[others]).sum()
        )
        diffs.append(logp({"f_t": t}) - expected)
    assert np.ptp(diffs) < 1e-5, diffs


def test_kink_normal_log_cdf_matches_scipy_with_finite_gradients():
    import numpy as np
    import pytensor
    import pytensor.tensor as pt
    from scipy import special

    kink_normal = load_benchmark("kink_normal")
    z = pt.dvector("z")
    value = kink_normal.log_normal_cdf(z)
    grad = pytensor.grad(value.sum(), z)
    fn = pytensor.function([z], [value, grad])
    points = np.linspace(-40.0, 12.0, 105)
    got, slope = fn(points)
    np.testing.assert_allclose(got, special.log_ndtr(points), rtol=1e-10, atol=1e-300)
    mills = np.exp(-0.5 * points**2 - 0.5 * np.log(2 * np.pi) - special.log_ndtr(points))
    np.testing.assert_allclose(slope, mills, rtol=1e-8, atol=1e-300)


@pytest.mark.slow  # the what-if maps; the script's tiny default run is above
@pytest.mark.parametrize(
    ("kink", "method"),
    [("normal", "bayes-dirichlet, normal kink"), ("transport", "bayes-dirichlet, transport map")],
)
def test_bayes_layer_speed_fits_the_what_if_maps_tiny(kink, method):
    row = run_script(
        "bayes_layer_speed.py", "--run", "zipf", "--d", "12", "--draws", "30", "--tune", "30",
        "--kink", kink,
    )  # fmt: skip
    assert row["method"] == method and row["kink"] == kink
    assert abs(row["sum"] - 1.0) < 1e-9 and row["mse"] < 0.01


def test_transport_map_density_is_the_dirichlet_and_step_limit_adds_it_up():
    # the what-if map keeps the law of f (scipy's Dirichlet and binomials plus the
    # change of variables, with a finite-difference Jacobian) at a concentration other
    # than the one it was tabulated at, also outside the knots; step_limit's per-item
    # terms add up to the same log-density, and their derivative is right
    import numpy as np
    import pymc as pm
    from scipy import stats

    import bayesldp
    from bayesldp.models import ldp_likelihood

    transport_map = load_benchmark("transport_map")
    counts = np.array([40_000, 25_000, 20_000, 10_000, 4_000, 1_000, 0, 0])
    m = bayesldp.OUE(1.0, 8).simulate(counts, np.random.default_rng(2))
    hints = transport_map.transport_hints(m)
    alpha = 0.5 * hints["a0"][0]
    with pm.Model() as model:
        f_var = transport_map.transport_simplex("f", alpha, m)
        ldp_likelihood("counts", f_var, m)
    logp = model.compile_logp()
    ref = int(np.argmax(hints["reference"]))
    others = np.arange(8) != ref
    rows = np.flatnonzero(others)
    c, n = m.support_counts.astype(float), float(m.n)

    def y_of(t):
        y = np.zeros(8)
        y[others] = transport_map.map_values(hints, t[others][:, None], rows, alpha)[0][:, 0]
        return y

    rng = np.random.default_rng(0)
    diffs, split = [], []
    for _ in range(5):
        t = rng.normal(0.0, 3.0, 8)
        t[ref] = 0.0
        y = y_of(t)
        lse = np.logaddexp.reduce(y)
        f = np.exp(y - lse)
        slope = (y_of(t + 1e-6) - y_of(t - 1e-6)) / 2e-6
        pi = m.q + (m.p - m.q) * f
        expected = (
            stats.dirichlet.logpdf(f, np.full(8, alpha))
            + np.log(f).sum()
            + np.log(slope[others]).sum()
            + stats.binom.logpmf(m.support_counts, m.n, pi).sum()
        )
        diffs.append(logp({"f_t": t}) - expected)
        terms, _ = transport_map.item_terms(
            t[others][:, None], hints, rows, alpha, lse, c[others, None], n, m.p, m.q
        )
        ref_term = -alpha * lse + stats.binom.logpmf(m.support_counts[ref], m.n, pi[ref])
        split.append(logp({"f_t": t}) - (terms.sum() + ref_term))
    assert np.ptp(diffs) < 1e-5, diffs
    assert np.ptp(split) < 1e-5, split
    points = np.linspace(-7.0, 6.0, 27)[None, :] + 0.013  # off the knots, where the
    # cubic's second derivative jumps
    args = (hints, rows, alpha, 2.0, c[others, None], n, m.p, m.q)
    _, grad = transport_map.item_terms(points, *args)
    up, _ = transport_map.item_terms(points + 1e-6, *args)
    down, _ = transport_map.item_terms(points - 1e-6, *args)
    np.testing.assert_allclose(grad, (up - down) / 2e-6, rtol=1e-4, atol=1e-4)


def test_transport_map_gaussianises_well_measured_items_and_stays_increasing():
    # the point of the map: at the concentration it was tabulated at, a well-measured
    # item's density in t is the standard normal's; for any concentration it increases
    import numpy as np

    import bayesldp

    transport_map = load_benchmark("transport_map")
    d = 60
    counts = np.round(1e6 * np.arange(1, d + 1) ** -1.5 / np.sum(np.arange(1, d + 1) ** -1.5))
    m = bayesldp.OUE(1.0, d).simulate(counts.astype(int), np.random.default_rng(3))
    hints = transport_map.transport_hints(m)
    a0 = hints["a0"][0]
    ref = int(np.argmax(hints["reference"]))
    z = m.estimates / np.sqrt(m.variance())
    rows = np.flatnonzero((z > 8) & (np.arange(d) != ref))
    assert rows.size >= 5
    t = np.linspace(-3.0, 3.0, 61)[None, :]
    lse = -np.log(m.estimates[ref])
    c = m.support_counts[rows, None].astype(float)
    logp, _ = transport_map.item_terms(t, hints, rows, a0, lse, c, float(m.n), m.p, m.q)
    deviation = logp + 0.5 * t**2
    assert np.ptp(deviation, axis=1).max() < 0.1  # measured 0.02-0.07 (tabulation error)
    every = np.flatnonzero(np.arange(d) != ref)
    wide = np.linspace(-12.0, 12.0, 241)[None, :]
    for alpha in (0.1 * a0, a0, 10 * a0):
        _, slope, _ = transport_map.map_values(hints, wide, every, alpha)
        assert np.all(slope > 0)


@pytest.mark.slow  # a research mode; the script's tiny default run is above
def test_tabulated_mass_is_each_items_variance_and_numpyro_runs_with_it():
    # the what-if's inverse mass (mass="var") is the variance of each item's density
    # (step_limit.item_terms, itself checked against the model above), here by quadrature;
    # then NumPyro runs with it fixed
    pytest.importorskip("numpyro")
    import math

    import numpy as np
    from scipy import integrate

    import bayesldp
    from bayesldp.models import dirichlet

    step_limit = load_benchmark("step_limit")
    counts = np.array([400_000, 250_000, 200_000, 100_000, 40_000, 10_000, 0])
    m = bayesldp.OUE(1.0, 7).simulate(counts, np.random.default_rng(1))
    hints = dirichlet.parametrization_hints(m)
    a = math.exp(dirichlet.concentration_start(m))
    inverse = step_limit.item_inverse_mass(m, hints, a, mass="var", chunk=2)
    ref = int(np.argmax(hints["reference"]))
    assert inverse[ref] == 1.0
    lse = -math.log(m.estimates[ref])
    c, n = m.support_counts.astype(float), float(m.n)
    for v in set(range(7)) - {ref}:
        row = {key: hints[key][v : v + 1] for key in ("sharpness", "width", "kink", "centre")}

        def log_density(u, v=v, row=row):
            lp, _ = step_limit.item_terms(np.atleast_1d(u), row, a, lse, c[v], n, m.p, m.q)
            return lp

        table = log_density(step_limit.GRID)
        mode, shift = step_limit.GRID[np.argmax(table)], float(table.max())

        def density(u, shift):
            return math.exp(log_density(u)[0] - shift)

        moments = [
            integrate.quad(lambda u, j=j, s=shift: u**j * density(u, s), -40, 40,
                           points=[mode], limit=400)[0]
            for j in range(3)
        ]  # fmt: skip
        variance = moments[2] / moments[0] - (moments[1] / moments[0]) ** 2
        assert inverse[v] == pytest.approx(variance, rel=1e-3), v
    row = run_script(
        "bayes_layer_speed.py", "--run", "zipf", "--d", "12", "--draws", "30", "--tune", "30",
        "--sampler", "numpyro", "--tabulated-mass",
    )  # fmt: skip
    assert row["tabulated_mass"] is True and abs(row["sum"] - 1.0) < 1e-9
    assert '"nuts_kwargs"' in row["sampler_kwargs"]


@pytest.mark.parametrize(
    ("case", "sampler", "kink", "match"),
    [
        ("hier", "numpyro", "logistic", "applies to bayes-dirichlet"),
        ("zipf", "numpyro", "transport", "with a kink"),
        ("zipf", "nutpie", "logistic", "needs --sampler numpyro"),
    ],
)
def test_tabulated_mass_rejects_what_it_does_not_cover(case, sampler, kink, match):
    bench = load_benchmark("bayes_layer_speed")
    with pytest.raises(ValueError, match=match):
        bench.run_case(case, sampler, d=12, draws=5, tune=5, kink=kink, tabulated_mass=True)


@pytest.mark.slow  # a memory diagnostic: a fresh JAX process, ~40 s on 2 cores
def test_chain_memory_threads_tiny():
    # the thread map hands NumPyro both chains back in chain order, and memory is read
    row = run_script(
        "chain_memory.py", "--run", "zipf", "--d", "12", "--draws", "20",
        "--method", "threads", "--every", "0.2",
    )  # fmt: skip
    assert row["d"] == 12 and row["method"] == "threads" and row["draws"] == 20
    assert row["samples"] >= 1 and row["peak_gb"] >= row["start_gb"] > 0
    assert row["seconds"] > 0 and row["posterior_shape"] == [2, 20, 12]


def test_xla_concurrency_leak_tiny():
    # JAX alone: two loops in two threads on two devices, memory read and a row printed
    pytest.importorskip("jax")
    row = run_script(
        "xla_concurrency_leak.py", "--run", "threads", "--d", "50", "--iterations", "20",
        "--every", "0.05",
    )  # fmt: skip
    assert row["mode"] == "threads" and row["d"] == 50 and row["iterations"] == 20
    assert row["samples"] >= 1 and row["peak_gb"] >= row["start_gb"] > 0


@pytest.mark.slow  # a research benchmark: a fresh JAX process, ~25 s on 2 cores
def test_sampler_agreement_tiny():
    # log a per sampler, with tiny arguments
    pytest.importorskip("numpyro")
    rows = run_script_rows(
        "sampler_agreement.py", "--d", "12", "--samplers", "numpyro-hmc", "--draws", "30",
        "--tune", "30", "--out", "",
    )  # fmt: skip
    assert len(rows) == 1 and rows[0]["sampler"] == "numpyro-hmc" and rows[0]["d"] == 12
    assert rows[0]["log_a_sd"] > 0 and rows[0]["log_a_mcse"] > 0
    assert len(rows[0]["chain_means"].split()) == 2


@pytest.mark.slow
def test_sampler_agreement_repeated_fits_tiny():
    # the memory mode: two fits per process, with and without clearing JAX's caches
    # (each cleared fit compiles again: about a minute on a 2-core machine)
    pytest.importorskip("numpyro")
    rows = run_script_rows(
        "sampler_agreement.py", "--repeat-fits", "2", "--samplers", "numpyro-hmc", "--out", ""
    )
    assert [(r["clear_jax_caches"], r["fits"]) for r in rows] == [(False, 2), (True, 2)]
    assert all(r["resident_gb"] > 0 for r in rows)
