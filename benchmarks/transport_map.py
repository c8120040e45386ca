r"""A what-if of bayes-dirichlet's coordinates: each item's own transport map.

``benchmarks/step_limit.py`` finds that the shape of the items' one-dimensional
posteriors in :func:`bayesldp.models.dirichlet.dirichlet_simplex`'s coordinates sets
NUTS's step on wordfreq. Here each item gets the map that makes that posterior a
standard normal, :math:`y_v = F_v^{-1}(\Phi(u_v))`, with :math:`F_v` the item's
posterior CDF of its log-ratio :math:`y_v` when the concentration is held at
``a0`` (:func:`~bayesldp.models.dirichlet.concentration_start`) and the normaliser at
its raw-estimate value. The map is tabulated per item at knots ``u = -5, -4.75, ...,
5`` (values and slopes, a monotone cubic Hermite between them, straight lines outside)
and split as

.. math::

    y_v = c_v + w_v u + \frac{a_0}{a} h_v(u), \qquad h_v' \ge 0,

with :math:`w_v` below the map's least slope, so that the prior's tail
:math:`e^{a y}` keeps its shape in ``u`` whatever the sampled :math:`a` is (as the
library's kink does) and the map is increasing for every :math:`a`. The law of ``f`` is
the same Dirichlet: the Jacobian :math:`w_v + (a_0/a) h_v'(u)` enters the density.
Not part of the library: ``bayes_layer_speed.py --kink transport`` fits it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

if __package__:  # imported as benchmarks.transport_map
    from benchmarks import kink_normal
else:  # run as a script's sibling: its folder is on sys.path
    import kink_normal

#: Knots of the map in the sampled coordinate.
KNOTS = np.linspace(-5.0, 5.0, 41)
#: Grid of the library's coordinate on which each item's posterior is tabulated.
OLD_GRID = np.linspace(-40.0, 40.0, 4001)
#: The map's linear part takes this fraction of its least slope.
SLOPE_SHARE = 0.9


def monotone_slopes(values: np.ndarray, slopes: np.ndarray, step: float) -> np.ndarray:
    """Limit Hermite slopes (rows) so the cubic between knots is increasing (Fritsch-Carlson)."""
    secant = np.diff(values, axis=1) / step
    out = np.maximum(slopes.copy(), 0.0)
    for left in (True, False):
        idx = slice(None, -1) if left else slice(1, None)
        ratio = np.where(secant > 0, out[:, idx] / np.where(secant > 0, secant, 1.0), 0.0)
        scale = np.where(ratio > 3.0, 3.0 / np.maximum(ratio, 1e-300), 1.0)
        out[:, idx] = np.where(secant > 0, out[:, idx] * scale, 0.0)
    return out


def transport_hints(m, a0: float | None = None, chunk: int = 2000) -> dict[str, np.ndarray]:
    """Tabulate each item's transport map; return the ``pm.Data`` of :func:`transport_simplex`."""
    from bayesldp.models import dirichlet

    old = dirichlet.parametrization_hints(m)
    a0 = a0 or math.exp(dirichlet.concentration_start(m))
    d, K = m.domain_size, KNOTS.size
    step = KNOTS[1] - KNOTS[0]
    ref = int(np.argmax(old["reference"]))
    lse = -math.log(max(float(m.estimates[ref]), 1e-12))
    counts, n = m.support_counts.astype(float), float(m.n)
    target_lo = ndtr(np.minimum(KNOTS, 0.0))  # P(U < knot), for the left half
    target_hi = ndtr(-np.maximum(KNOTS, 0.0))  # P(U > knot), for the right half
    log_phi = -0.5 * KNOTS**2 - 0.5 * math.log(2.0 * math.pi)
    values, slopes = np.zeros((d, K)), np.ones((d, K))
    du = OLD_GRID[1] - OLD_GRID[0]
    for lo in range(0, d, chunk):
        idx = np.arange(lo, min(d, lo + chunk))
        col = {key: old[key][idx, None] for key in ("sharpness", "width", "kink", "centre")}
        k, w, knee, centre = col["sharpness"], col["width"], col["kink"], col["centre"]
        u = OLD_GRID[None, :]
        z = k * (u - knee)
        y = centre + w * u - np.logaddexp(0.0, -z) / (k * a0)
        jac = w + 0.5 * (1.0 + np.tanh(-0.5 * z)) / a0
        f = np.exp(np.minimum(y - lse, 0.0))
        pi = m.q + (m.p - m.q) * f
        c = counts[idx, None]
        logp = a0 * y + np.log(jac) + c * np.log(pi) + (n - c) * np.log1p(-pi)
        logp -= logp.max(axis=1, keepdims=True)
        dens = np.exp(logp)
        cells = 0.5 * (dens[:, 1:] + dens[:, :-1]) * du
        total = cells.sum(axis=1, keepdims=True)
        cdf = np.concatenate([np.zeros((idx.size, 1)), np.cumsum(cells, axis=1)], axis=1) / total
        tail = np.cumsum(cells[:, ::-1], axis=1)[:, ::-1]
        sf = np.concatenate([tail, np.zeros((idx.size, 1))], axis=1) / total
        log_g = logp - np.log(total)  # log density of the old coordinate, per row
        for r, v in enumerate(idx):
            left = np.interp(target_lo, cdf[r], OLD_GRID)
            right = np.interp(target_hi, sf[r, ::-1], OLD_GRID[::-1])
            u_old = np.where(KNOTS < 0, left, right)
            y_k = np.interp(u_old, OLD_GRID, y[r])
            jac_k = np.interp(u_old, OLD_GRID, jac[r])
            g_k = np.interp(u_old, OLD_GRID, log_g[r])
            values[v] = y_k
            slopes[v] = jac_k * np.exp(log_phi - g_k)
    slopes = monotone_slopes(values, slopes, step)
    secant = np.diff(values, axis=1) / step
    least = np.minimum(slopes.min(axis=1), secant.min(axis=1))
    width = SLOPE_SHARE * np.maximum(least, 1e-12)
    h = values - width[:, None] * KNOTS[None, :]
    h_slopes = monotone_slopes(h, slopes - width[:, None], step)
    centre = h[:, -1].copy()  # h(5) = 0: the linear part carries the right end
    h -= centre[:, None]
    free = 1.0 - old["reference"]
    h[ref], h_slopes[ref], width[ref], centre[ref] = 0.0, 0.0, 1.0, 0.0
    return {
        "reference": old["reference"],
        "centre": centre,
        "width": width,
        "table": h.ravel(),
        "table_slope": h_slopes.ravel(),
        "a0": np.full(d, a0),
        "free": free,
    }


def transport_simplex(name: str, alpha, m, *, dims=None):
    """Add ``f ~ Dirichlet(alpha)`` (symmetric or per item) in the transport coordinates."""
    import pymc as pm
    import pytensor.tensor as pt

    from bayesldp.models.special import gammaln

    d, K = m.domain_size, KNOTS.size
    step = float(KNOTS[1] - KNOTS[0])
    hints = {key: pm.Data(f"{name}_{key}", value) for key, value in transport_hints(m).items()}
    alpha = pt.as_tensor_variable(alpha)
    t = pm.Flat(f"{name}_t", shape=d)
    x = (t - float(KNOTS[0])) / step
    cell = pt.clip(pt.floor(x), 0, K - 2)
    tau = pt.clip(x - cell, 0.0, 1.0)
    at = pt.cast(cell, "int64") + pt.arange(d) * K
    h0, h1 = hints["table"][at], hints["table"][at + 1]
    s0, s1 = hints["table_slope"][at] * step, hints["table_slope"][at + 1] * step
    tau2, tau3 = tau * tau, tau * tau * tau
    inner = (
        (2 * tau3 - 3 * tau2 + 1) * h0
        + (tau3 - 2 * tau2 + tau) * s0
        + (-2 * tau3 + 3 * tau2) * h1
        + (tau3 - tau2) * s1
    )
    inner_slope = (
        (6 * tau2 - 6 * tau) * h0
        + (3 * tau2 - 4 * tau + 1) * s0
        + (-6 * tau2 + 6 * tau) * h1
        + (3 * tau2 - 2 * tau) * s1
    ) / step
    lo_slope = hints["table_slope"][pt.arange(d) * K]
    hi_slope = hints["table_slope"][pt.arange(d) * K + K - 1]
    below, above = t < float(KNOTS[0]), t > float(KNOTS[-1])
    h = (
        inner
        + lo_slope * pt.minimum(t - float(KNOTS[0]), 0.0)
        + hi_slope * pt.maximum(t - float(KNOTS[-1]), 0.0)
    )
    h_slope = pt.switch(below, lo_slope, pt.switch(above, hi_slope, inner_slope))
    scale = hints["a0"] / alpha
    free = hints["free"]
    y = free * (hints["centre"] + hints["width"] * t + scale * h)
    log_jac = pt.sum(free * pt.log(hints["width"] + scale * h_slope))
    log_f = y - pt.logsumexp(y)
    f = pm.Deterministic(name, pt.exp(log_f), dims=dims)
    if alpha.ndim == 0:
        log_prior = alpha * pt.sum(log_f) + gammaln(d * alpha) - d * gammaln(alpha)
    else:
        log_prior = pt.sum(alpha * log_f) + gammaln(pt.sum(alpha)) - pt.sum(gammaln(alpha))
    unused = -0.5 * pt.sum(hints["reference"] * t**2)
    pm.Potential(f"{name}_prior", log_prior + log_jac + unused)
    return f


def build_model(m):
    """bayes-dirichlet's model (same prior on log a, same likelihood) with this map."""
    return kink_normal.build_model(m, transport_simplex)


def table_terms(hints, t, rows):
    """Return ``h``, ``h'``, ``h''`` of items ``rows`` at ``t`` (``(len(rows), X)``, ``(1, X)``)."""
    K = KNOTS.size
    step = KNOTS[1] - KNOTS[0]
    table = hints["table"].reshape(-1, K)[rows]
    slopes = hints["table_slope"].reshape(-1, K)[rows]
    t = np.broadcast_to(t, (len(rows), np.shape(t)[-1]))
    x = (t - KNOTS[0]) / step
    cell = np.clip(np.floor(x), 0, K - 2).astype(int)
    tau = np.clip(x - cell, 0.0, 1.0)
    h0, h1 = (np.take_along_axis(table, cell + i, axis=1) for i in (0, 1))
    s0, s1 = (np.take_along_axis(slopes, cell + i, axis=1) * step for i in (0, 1))
    basis = (
        2 * tau**3 - 3 * tau**2 + 1,
        tau**3 - 2 * tau**2 + tau,
        -2 * tau**3 + 3 * tau**2,
        tau**3 - tau**2,
    )
    first = (
        6 * tau**2 - 6 * tau,
        3 * tau**2 - 4 * tau + 1,
        6 * tau - 6 * tau**2,
        3 * tau**2 - 2 * tau,
    )
    second = (12 * tau - 6, 6 * tau - 4, -12 * tau + 6, 6 * tau - 2)
    coef = (h0, s0, h1, s1)
    inner = sum(b * c for b, c in zip(basis, coef, strict=True))
    d1 = sum(b * c for b, c in zip(first, coef, strict=True)) / step
    d2 = sum(b * c for b, c in zip(second, coef, strict=True)) / step**2
    lo, hi = slopes[:, :1], slopes[:, K - 1 :]
    below, above = t < KNOTS[0], t > KNOTS[-1]
    h = inner + lo * np.minimum(t - KNOTS[0], 0.0) + hi * np.maximum(t - KNOTS[-1], 0.0)
    dh = np.where(below, lo, np.where(above, hi, d1))
    return h, dh, np.where(below | above, 0.0, d2)


def map_values(hints, t, rows, alpha):
    """Return the map's ``y``, ``dy/dt`` and ``d2y/dt2`` for items ``rows`` at ``t``."""
    h, dh, d2h = table_terms(hints, t, rows)
    scale = hints["a0"][rows, None] / alpha
    centre, width = hints["centre"][rows, None], hints["width"][rows, None]
    return centre + width * t + scale * h, width + scale * dh, scale * d2h


def item_terms(t, hints, rows, a, lse, c, n, p, q):
    """Log-density and its derivative in ``t`` of items ``rows`` (see :func:`table_terms`).

    The per-item model of ``step_limit.py`` (concentration and normaliser held fixed)
    in these coordinates.
    """
    y, jac, bend = map_values(hints, t, rows, a)
    f = np.exp(np.minimum(y - lse, 0.0))
    pi = q + (p - q) * f
    logp = a * (y - lse) + np.log(jac) + c * np.log(pi) + (n - c) * np.log1p(-pi)
    dlik_dy = a + (p - q) * f * (c / pi - (n - c) / (1.0 - pi))
    return logp, jac * dlik_dy + bend / jac
