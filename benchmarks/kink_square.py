r"""A what-if of bayes-dirichlet's coordinates: a squared softplus as the kink.

:func:`bayesldp.models.dirichlet.dirichlet_simplex` maps each item's sampled coordinate
through :math:`y = c + w u + g(z) / (k a)`, :math:`z = k(u - \kappa)`, with the
log-sigmoid :math:`g(z) = -\mathrm{softplus}(-z)`: linear below the kink, so the
prior's tail :math:`e^{a y}` is exponential in ``u``. ``benchmarks/kink_normal.py``
tries :math:`g = \log\Phi`, whose quadratic tail makes it Gaussian, but
:math:`\log\Phi` costs several times a softplus in JAX. Here
:math:`g(z) = -\mathrm{softplus}(-z)^2 / 2`: quadratic below the kink as
:math:`\log\Phi` is (:math:`-z^2/2`), zero above it, and computed from the same one
exponential and one logarithm as the log-sigmoid. Its Jacobian is
:math:`w + \mathrm{softplus}(-z)\,\sigma(-z) / a`, so the law of ``f`` is the same
Dirichlet. Not part of the library: ``bayes_layer_speed.py --kink square`` fits it and
``step_limit.py --kink square`` screens it.
"""

from __future__ import annotations

import numpy as np

if __package__:  # imported as benchmarks.kink_square
    from benchmarks import kink_normal
else:  # run as a script's sibling: its folder is on sys.path
    import kink_normal

#: Sharpness of the items that start in the tail: the prior's tail is then Gaussian in
#: ``u`` with standard deviation ``1 / sqrt(k)``. Screened with ``step_limit.py --kink
#: square --sharpness TAIL PEAK`` on wordfreq (a = 0.00424; tail 1, 1.5, 2, 2.5, 3, 3.5
#: and 4) and Zipf (d = 1024 and 4096): 3 to 3.5 kept a predicted acceptance of 0.8 at
#: the largest step.
TAIL_SHARPNESS = 3.5
#: Sharpness of the other items. The same screens: 1.5 beat 2, 2.5, 3 and 4 on Zipf (the
#: best-measured items limit the step when their kink is sharp), and 2 on wordfreq
#: (``--sharpness 3.5 2``: predicted acceptance 0.82 against 0.86 at a step of 0.12).
PEAK_SHARPNESS = 1.5


def square_kink_hints(
    m, tail_sharpness: float = TAIL_SHARPNESS, peak_sharpness: float = PEAK_SHARPNESS
) -> dict[str, np.ndarray]:
    """Return :func:`parametrization_hints` with the square kink's sharpness.

    ``tail_sharpness`` for the items that start in the tail, ``peak_sharpness`` for the
    others (and the unused reference slot).
    """
    from bayesldp.models import dirichlet

    hints = dirichlet.parametrization_hints(m)
    hints["sharpness"] = np.where(hints["start"] < 0, tail_sharpness, peak_sharpness)
    return hints


def square_shape(z):
    """``-softplus(-z)^2 / 2`` and its derivative ``softplus(-z) sigmoid(-z)`` (PyTensor)."""
    import pytensor.tensor as pt

    soft = pt.softplus(-z)
    return -0.5 * soft * soft, soft * pt.sigmoid(-z)


def square_kink_simplex(name: str, alpha, m, *, dims=None):
    """Add ``f ~ Dirichlet(alpha)`` (symmetric) in the square-kink coordinates."""
    return kink_normal.kink_simplex(name, alpha, square_kink_hints(m), square_shape, dims=dims)


def build_model(m):
    """bayes-dirichlet's model (same prior on log a, same likelihood) with this map."""
    return kink_normal.build_model(m, square_kink_simplex)
