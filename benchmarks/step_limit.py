r"""Which items limit NUTS's step in bayes-dirichlet's coordinates: a per-item model.

bayes-dirichlet samples one coordinate ``u_v`` per item
(:func:`bayesldp.models.dirichlet.dirichlet_simplex`). Holding the concentration ``a``
and the normaliser ``logsumexp(y)`` fixed, the log-density separates into one term per
item:

    log p_v(u) = a y_v(u) + log J_v(u) + c_v log pi_v + (n - c_v) log(1 - pi_v),
    pi_v = q + (p - q) exp(y_v(u) - lse),

so a leapfrog trajectory's energy error is a sum of independent per-item errors. For
each item this script tabulates its one-dimensional posterior on a grid, sets its mass
as nutpie's diagonal adaptation would (``sqrt(var(u) / var(grad))``, or the variance
with ``--mass var``), starts ``--reps`` trajectories from exact draws of the item and
its momentum, runs ``ceil(pi / h)`` leapfrog steps of each size ``h`` and records the
energy error. Summing over items gives the predicted Metropolis acceptance of the whole
model at each step, to set beside the step NUTS adapted (``bayes_layer_speed.py``,
column ``step_size``; target acceptance 0.8); the mean error by class of item (starts
in the tail or at the peak, raw estimate in noise standard deviations) says which items
set it. ``leapfrog_gaussian.py`` gives the same for an ideal Gaussian target.

What-if options, for designing coordinates without running NUTS: ``--kink normal``
replaces the kink's log-sigmoid :math:`\log\sigma(z)` (``-softplus(-z)``, whose tail
is linear, so the prior's tail is exponential in ``u``) by the normal log-CDF
:math:`\log\Phi(z)` (a Gaussian tail in ``u``), ``--kink square`` by
:math:`-\mathrm{softplus}(-z)^2/2` (a Gaussian tail too, at a softplus's cost;
``kink_square.py``); ``--sharpness TAIL PEAK`` sets one
sharpness for the items that start in the tail and one for the others instead of
:func:`~bayesldp.models.dirichlet.kink_sharpness`. Neither is what the library samples.

    python benchmarks/step_limit.py --cases zipf wordfreq
    python benchmarks/step_limit.py --cases zipf --d 4096 --steps 0.1 0.15 0.2
    python benchmarks/step_limit.py --cases wordfreq --kink normal --sharpness 1.5 1.5
    python benchmarks/step_limit.py --cases wordfreq --kink square --mass var
    python benchmarks/step_limit.py --cases wordfreq --kink normal --sharpness 1 1.5 \
        --constants KINK_FLOOR=0.05

``--constants`` sets constants of
:func:`~bayesldp.models.dirichlet.parametrization_hints` (the kink's place, which items
start in the tail) for the run only.
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
from scipy.special import log_ndtr

if __package__:  # imported as benchmarks.step_limit
    from benchmarks import kink_normal, kink_square, transport_map
    from benchmarks.results_table import add_output_arguments, report, write_rows
    from benchmarks.speed_cases import case_measurement
else:  # run as a script: its folder is on sys.path
    import kink_normal
    import kink_square
    import transport_map
    from results_table import add_output_arguments, report, write_rows
    from speed_cases import case_measurement

#: Grid of the sampled coordinate, wide enough for the prior's tail (rate 1 below the
#: kink) and the peak (unit scale above it).
GRID = np.linspace(-40.0, 40.0, 8001)
#: Constants of :func:`~bayesldp.models.dirichlet.parametrization_hints` that
#: ``--constants`` may change for a what-if.
WHAT_IF_CONSTANTS = ("KINK_SDS", "KINK_FLOOR", "START_Z", "PEAK_LEAK")
#: Classes of items, by raw estimate in noise standard deviations.
Z_BINS = (-np.inf, 1.0, 2.0, 3.0, 4.0, 6.0, 10.0, np.inf)


def kink_terms(z, kink: str):
    """Return the kink's shape ``g(z)``, ``g'(z)`` and ``g''(z)`` (``y`` adds ``g / (k a)``)."""
    if kink == "logistic":  # g = log sigmoid(z) = -softplus(-z)
        sig = 0.5 * (1.0 + np.tanh(-0.5 * z))  # sigmoid(-z) = g'
        return -np.logaddexp(0.0, -z), sig, -sig * (1.0 - sig)
    if kink == "square":  # g = -softplus(-z)^2 / 2: a Gaussian tail at a softplus's cost
        sig = 0.5 * (1.0 + np.tanh(-0.5 * z))
        soft = np.logaddexp(0.0, -z)
        return -0.5 * soft * soft, soft * sig, -sig * sig - soft * sig * (1.0 - sig)
    log_cdf = log_ndtr(z)  # g = log Phi(z); g' is the inverse Mills ratio
    mills = np.exp(-0.5 * z * z - 0.5 * math.log(2.0 * math.pi) - log_cdf)
    return log_cdf, mills, -mills * (z + mills)


def item_terms(u, hints, a, lse, c, n, p, q, kink: str = "logistic"):
    """Log-density and its derivative in ``u`` for items (rows) at points ``u``.

    ``hints`` holds the items' arrays as column vectors (shape ``(items, 1)``);
    ``kink="logistic"`` is the library's map, ``"normal"`` the what-if of the module
    docstring.
    """
    k, w, knee, centre = hints["sharpness"], hints["width"], hints["kink"], hints["centre"]
    z = k * (u - knee)
    shape, slope, bend = kink_terms(z, kink)
    y = centre + w * u + shape / (k * a)
    jac = w + slope / a
    f = np.exp(np.minimum(y - lse, 0.0))
    pi = q + (p - q) * f
    logp = a * (y - lse) + np.log(jac) + c * np.log(pi) + (n - c) * np.log1p(-pi)
    dlik_dy = a + (p - q) * f * (c / pi - (n - c) / (1.0 - pi))
    dlogjac = (k / a) * bend / jac
    return logp, jac * dlik_dy + dlogjac


def grid_moments(logp, grad, mass: str = "grad"):
    """Normalised weights of items' densities on :data:`GRID` and their inverse masses.

    ``logp`` and ``grad`` have one row per item; the inverse mass is nutpie's choice,
    ``sqrt(var(u) / var(grad))``, with ``mass="grad"``, or the variance (Stan's and
    NumPyro's) with ``mass="var"``.
    """
    weights = np.exp(logp - logp.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    mean = (weights * GRID).sum(axis=1)
    var = (weights * (GRID - mean[:, None]) ** 2).sum(axis=1)
    gmean = (weights * grad).sum(axis=1)
    gvar = (weights * (grad - gmean[:, None]) ** 2).sum(axis=1)
    return weights, (np.sqrt(var / gvar) if mass == "grad" else var)


def item_inverse_mass(m, hints, a: float, kink: str = "logistic", mass: str = "grad", chunk=500):
    """Each item's inverse mass from its tabulated posterior (:func:`grid_moments`).

    The concentration ``a`` and the normaliser are held where :func:`energy_errors` holds
    them; the reference item's unused slot gets 1.
    """
    ref = int(np.argmax(hints["reference"]))
    lse = -math.log(max(m.estimates[ref], 1e-12))
    counts = m.support_counts.astype(float)
    out = np.ones(m.domain_size)
    keep = np.flatnonzero(hints["reference"] == 0)
    for lo in range(0, keep.size, chunk):
        idx = keep[lo : lo + chunk]
        col = {key: hints[key][idx, None] for key in ("sharpness", "width", "kink", "centre")}
        logp, grad = item_terms(
            GRID[None, :], col, a, lse, counts[idx, None], float(m.n), m.p, m.q, kink
        )
        out[idx] = grid_moments(logp, grad, mass)[1]
    return out


def kink_hints(m, kink: str = "logistic", concentration: float | None = None) -> dict:
    """Return the hints of a map: the library's (``"logistic"``) or a what-if's.

    The normal and square kinks take their own sharpness rules (``kink_normal.py``,
    ``kink_square.py``, as ``bayes_layer_speed.py --kink`` fits them); the transport map
    is tabulated at ``concentration`` (default: the moment start).
    """
    from bayesldp.models import dirichlet

    if kink == "transport":
        return transport_map.transport_hints(m, a0=concentration)
    if kink == "normal":
        return kink_normal.normal_kink_hints(m)
    if kink == "square":
        return kink_square.square_kink_hints(m)
    return dirichlet.parametrization_hints(m)


def energy_errors(
    m, steps, reps, rng, concentration=None, mass="grad", chunk=500, kink="logistic",
    sharpness=None,
):  # fmt: skip
    """Per-item energy errors, shape ``(len(steps), reps, d - 1)``, and the item table."""
    from bayesldp.models import dirichlet

    hints = kink_hints(m, kink, concentration)
    # where each item starts (the transport map's hints have no start: take the library's)
    start_at = hints["start"] if "start" in hints else dirichlet.parametrization_hints(m)["start"]
    if sharpness is not None:  # (tail, peak): the what-if of the module docstring
        hints["sharpness"] = np.where(hints["start"] < 0, sharpness[0], sharpness[1])
    a = concentration or math.exp(dirichlet.concentration_start(m))
    ref = int(np.argmax(hints["reference"]))
    lse = -math.log(max(m.estimates[ref], 1e-12))
    keep = np.flatnonzero(hints["reference"] == 0)
    counts = m.support_counts.astype(float)
    out = np.empty((len(steps), reps, keep.size))
    for lo in range(0, keep.size, chunk):
        idx = keep[lo : lo + chunk]
        # terms(u): log-density and gradient at points u of shape (reps, items)
        if kink == "transport":  # transport_map.item_terms takes the items first
            c = counts[idx, None]

            def terms(u, idx=idx, c=c):
                lp, g = transport_map.item_terms(u.T, hints, idx, a, lse, c, float(m.n), m.p, m.q)
                return lp.T, g.T

            logp, grad = transport_map.item_terms(
                GRID[None, :], hints, idx, a, lse, c, float(m.n), m.p, m.q
            )
        else:
            col = {key: hints[key][idx, None] for key in ("sharpness", "width", "kink", "centre")}
            row = {key: value[:, 0] for key, value in col.items()}

            def terms(u, row=row, c=counts[idx]):
                return item_terms(u, row, a, lse, c, float(m.n), m.p, m.q, kink)

            logp, grad = item_terms(
                GRID[None, :], col, a, lse, counts[idx, None], float(m.n), m.p, m.q, kink
            )
        weights, m_inv = grid_moments(logp, grad, mass)
        cdf = np.cumsum(weights, axis=1)
        uniform = rng.random((idx.size, reps))
        start = np.stack([np.interp(uniform[i], cdf[i], GRID) for i in range(idx.size)]).T
        momentum0 = rng.standard_normal((reps, idx.size)) / np.sqrt(m_inv)
        lp0, g0 = terms(start)
        h0 = -lp0 + 0.5 * m_inv * momentum0**2
        for s, h in enumerate(steps):
            u, mom = start, momentum0 + 0.5 * h * g0
            count = math.ceil(math.pi / h)
            for i in range(count):
                u = u + h * m_inv * mom
                lp, g = terms(u)
                mom = mom + (h if i < count - 1 else 0.5 * h) * g
            error = (-lp + 0.5 * m_inv * mom**2) - h0
            out[s, :, lo : lo + idx.size] = np.where(np.isfinite(error), error, 1e6)
    sd = np.sqrt(m.variance())
    table = {
        "item": keep,
        "z_estimate": m.estimates[keep] / sd[keep],
        "starts_in_tail": start_at[keep] < 0,
    }
    return out, table, a


def summarise(case, m, steps, errors, table, a) -> list[dict]:
    """One row per step: predicted acceptance and where the energy error comes from."""
    rows = []
    bins = np.digitize(table["z_estimate"], Z_BINS[1:-1])
    labels = [f"z<{Z_BINS[1]:g}"] + [
        f"{lo:g}<=z<{hi:g}" for lo, hi in itertools.pairwise(Z_BINS[1:-1])
    ]
    labels.append(f"z>={Z_BINS[-2]:g}")
    for s, h in enumerate(steps):
        per_item = errors[s].mean(axis=0)  # mean energy error of each item
        total = errors[s].sum(axis=1)
        row = {
            "case": case,
            "d": m.domain_size,
            "a": a,
            "step": h,
            "leapfrog_steps": math.ceil(math.pi / h),
            "predicted_acceptance": float(np.mean(np.exp(-np.maximum(total, 0.0)))),
            "mean_energy_error": float(total.mean()),
            "share_tail_start": float(per_item[table["starts_in_tail"]].sum() / per_item.sum()),
            "worst_items": " ".join(str(int(table["item"][v])) for v in np.argsort(-per_item)[:5]),
            "worst_items_error": " ".join(f"{x:.3g}" for x in np.sort(per_item)[::-1][:5]),
        }
        for b, label in enumerate(labels):
            inside = bins == b
            row[f"items {label}"] = int(inside.sum())
            row[f"error {label}"] = float(per_item[inside].sum())
        rows.append(row)
    return rows


def main(args: argparse.Namespace) -> list[dict]:
    """Run every case; print a JSON row per (case, step) and write the table."""
    from bayesldp.models import dirichlet

    rng = np.random.default_rng(args.seed)
    rows = []
    saved = {key: getattr(dirichlet, key) for key in args.constants}
    for key, value in args.constants.items():  # the what-if, undone below
        setattr(dirichlet, key, value)
    try:
        for case in args.cases:
            rows += run_case(case, args, rng)
    finally:
        for key, value in saved.items():
            setattr(dirichlet, key, value)
    write_rows(rows, args)
    return rows


def run_case(case: str, args: argparse.Namespace, rng: np.random.Generator) -> list[dict]:
    """Rows of one case (see :func:`main`)."""
    rows: list[dict] = []
    _, m = case_measurement(case, args.seed, args.d)
    errors, table, a = energy_errors(
        m, args.steps, args.reps, rng, args.concentration, args.mass, kink=args.kink,
        sharpness=args.sharpness,
    )  # fmt: skip
    for row in summarise(case, m, args.steps, errors, table, a):
        row["mass"], row["kink"] = args.mass, args.kink
        chosen = args.sharpness
        row["sharpness"] = "rule" if chosen is None else " ".join(map(str, chosen))
        row["constants"] = " ".join(f"{k}={v:g}" for k, v in args.constants.items())
        report(row, rows)
    return rows


def parse_constants(text: str) -> dict[str, float]:
    """``"KINK_SDS=3,KINK_FLOOR=0.05"`` -> a dict, checked against the map's constants."""
    from bayesldp.models import dirichlet

    out: dict[str, float] = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in WHAT_IF_CONSTANTS or not isinstance(getattr(dirichlet, key), float):
            raise argparse.ArgumentTypeError(f"{key!r} is not one of {WHAT_IF_CONSTANTS}")
        out[key] = float(value)
    return out


def build_parser() -> argparse.ArgumentParser:
    """Build the command-line parser."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["zipf", "wordfreq"])
    parser.add_argument("--d", type=int, help="domain size (zipf, wordfreq)")
    parser.add_argument("--steps", nargs="+", type=float, default=[0.06, 0.09, 0.12, 0.18])
    parser.add_argument("--reps", type=int, default=64, help="trajectories per item")
    parser.add_argument("--concentration", type=float, help="a (default: the moment start)")
    parser.add_argument("--mass", choices=["grad", "var"], default="grad")
    parser.add_argument(
        "--kink", choices=["logistic", "normal", "square", "transport"], default="logistic"
    )
    parser.add_argument(
        "--sharpness", nargs=2, type=float, metavar=("TAIL", "PEAK"), help="instead of the rule"
    )
    parser.add_argument(
        "--constants", type=parse_constants, default={}, metavar="KEY=VALUE,...",
        help=f"what-if values of the map's constants, of {', '.join(WHAT_IF_CONSTANTS)}",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    add_output_arguments(parser, "step_limit")
    return parser


if __name__ == "__main__":
    main(build_parser().parse_args())
