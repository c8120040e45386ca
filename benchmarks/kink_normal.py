r"""A what-if of bayes-dirichlet's coordinates: the normal log-CDF as the kink.

:func:`bayesldp.models.dirichlet.dirichlet_simplex` maps each item's sampled
coordinate through :math:`y = c + w u + \log\sigma(z) / (k a)`, :math:`z = k(u - \kappa)`:
below the kink the log-sigmoid is linear, so the prior's tail :math:`e^{a y}` is an
exponential in ``u``, and ``benchmarks/step_limit.py`` finds that these tails set NUTS's
step on wordfreq. Here the log-sigmoid is replaced by :math:`\log\Phi(z)`, whose tail is
quadratic: the prior's tail becomes Gaussian in ``u``. The law of ``f`` is the same
Dirichlet (the Jacobian :math:`w + \varphi(z) / (\Phi(z)\, a)` enters the density).

The items that start in the tail get the sharpness ``tail_sharpness``; the others the
least sharpness at which the tail's slope at the peak, :math:`a^{-1}\varphi(k|\kappa|)
/ \Phi(k|\kappa|)`, is at most a tenth of the peak's own slope ``w`` (as
:func:`~bayesldp.models.dirichlet.kink_sharpness` does for the log-sigmoid), between
``tail_sharpness`` and 4. Not part of the library: ``bayes_layer_speed.py --kink
normal`` fits it, to measure it beside the library's map.
"""

from __future__ import annotations

import math

import numpy as np


def normal_kink_hints(m, tail_sharpness: float = 1.5) -> dict[str, np.ndarray]:
    """Return :func:`parametrization_hints` with the sharpness rule of the module docstring."""
    from bayesldp.models import dirichlet

    hints = dirichlet.parametrization_hints(m)
    a = math.exp(dirichlet.concentration_start(m))
    # phi(z) / Phi(z) ~ phi(z) above z = 2: solve phi(z) = PEAK_LEAK * a * w for z
    floor = dirichlet.PEAK_LEAK * a * hints["width"] * math.sqrt(2.0 * math.pi)
    z_needed = np.sqrt(np.maximum(-2.0 * np.log(floor), 1.0))
    peak = np.clip(z_needed / np.abs(hints["kink"]), tail_sharpness, dirichlet.SHARPNESS_MAX)
    hints["sharpness"] = np.where(hints["start"] < 0, tail_sharpness, peak)
    hints["sharpness"][hints["reference"] > 0] = dirichlet.KINK_SHARPNESS
    return hints


def log_normal_cdf(z):
    """Return log Phi(z) of a PyTensor variable, finite with a finite gradient everywhere."""
    import pytensor.tensor as pt

    below, above = pt.minimum(z, 0.0), pt.maximum(z, 0.0)
    left = pt.log(0.5 * pt.erfcx(-below / math.sqrt(2.0))) - 0.5 * below**2
    right = pt.log1p(-0.5 * pt.erfc(above / math.sqrt(2.0)))
    return pt.switch(z < 0, left, right)


def kink_simplex(name: str, alpha, hints: dict, shape, *, dims=None):
    """Add ``f ~ Dirichlet(alpha)`` (symmetric) in a what-if kink's coordinates.

    ``y = c + w u + g(z) / (k alpha)`` with ``z = k (u - kink)``; ``shape(z)`` returns
    the PyTensor expressions ``g(z)`` and ``g'(z)``, and ``hints`` are the map's
    :func:`~bayesldp.models.dirichlet.parametrization_hints` with its sharpness.
    """
    import pymc as pm
    import pytensor.tensor as pt

    from bayesldp.models.special import gammaln

    d = hints["centre"].size
    hints = {key: pm.Data(f"{name}_{key}", value) for key, value in hints.items()}
    k, free = hints["sharpness"], 1.0 - hints["reference"]
    t = pm.Flat(f"{name}_t", shape=d)
    u = t + hints["start"]
    g, slope = shape(k * (u - hints["kink"]))
    y = free * (hints["centre"] + hints["width"] * u + g / (k * alpha))
    log_jac = pt.sum(free * pt.log(hints["width"] + slope / alpha))
    log_f = y - pt.logsumexp(y)
    f = pm.Deterministic(name, pt.exp(log_f), dims=dims)
    log_prior = alpha * pt.sum(log_f) + gammaln(d * alpha) - d * gammaln(alpha)
    unused = -0.5 * pt.sum(hints["reference"] * t**2)
    pm.Potential(f"{name}_prior", log_prior + log_jac + unused)
    return f


def normal_shape(z):
    """``log Phi(z)`` and its derivative, the inverse Mills ratio (PyTensor)."""
    import pytensor.tensor as pt

    log_cdf = log_normal_cdf(z)
    return log_cdf, pt.exp(-0.5 * z**2 - 0.5 * math.log(2.0 * math.pi) - log_cdf)


def normal_kink_simplex(name: str, alpha, m, *, dims=None, tail_sharpness: float = 1.5):
    """Add ``f ~ Dirichlet(alpha)`` (symmetric) in the normal-kink coordinates."""
    return kink_simplex(name, alpha, normal_kink_hints(m, tail_sharpness), normal_shape, dims=dims)


def build_model(m, simplex=normal_kink_simplex):
    """bayes-dirichlet's model (same prior on log a, same likelihood) with a what-if map.

    ``simplex(name, a, m, dims=...)`` adds ``f``: by default this module's normal kink.
    """
    import pymc as pm
    import pytensor.tensor as pt

    from bayesldp.models import dirichlet, ldp_likelihood

    with pm.Model(coords={"item": np.arange(m.domain_size)}) as model:
        log_a = dirichlet.log_concentration("log_a", (0.0, 2.0), m)
        a = pm.Deterministic("a", pt.exp(log_a))
        f = simplex("f", a, m, dims="item")
        ldp_likelihood("counts", f, m)
    return model
