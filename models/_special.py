"""Special functions for the models' graphs: ``gammaln`` and two helpers that keep precision.

:func:`stirling_remainder` and :func:`exp_excess` let the Dirichlet log-density keep its
precision at large concentrations (:func:`bayesldp.models.dirichlet.dirichlet_log_density`).

PyTensor caches a numba-compiled graph on disk only if every op in it has a cache key.
The gradient of ``pt.gammaln`` is ``pt.psi``, whose numba implementation calls SciPy's
Cython digamma through a function pointer and has none, so every graph holding the
gradient of a Dirichlet normaliser was recompiled in every process. :func:`gammaln` is
the same function with op classes of our own: its gradient is :class:`Digamma`, whose
numba implementation (:func:`digamma_kernel`, pure numba) is registered with a cache key
through PyTensor's ``register_funcify_and_cache_key``. PyTensor's own ``gammaln`` and
``psi`` are left as they are. Python and C implementations are PyTensor's (inherited).
"""

from __future__ import annotations

import math
from hashlib import sha256

import numpy as np
import pytensor.scalar as ps
import pytensor.tensor as pt
from pytensor.scalar.math import GammaLn, Psi
from pytensor.tensor.elemwise import Elemwise
from scipy import special as scipy_special

#: Bump when :func:`digamma_kernel` changes (it is part of PyTensor's cache key).
DIGAMMA_VERSION = 2

#: :func:`stirling_remainder` uses its asymptotic series from this argument on.
STIRLING_FROM = 30.0
#: :func:`exp_excess` uses its Taylor series below this :math:`|x|`.
EXCESS_SERIES_BELOW = 1e-3

_ROOT = 1.4616321449683623  # the positive zero of digamma
_ROOT_VALUE = -9.2412655217294275e-17  # digamma(_ROOT) in double precision
#: Taylor coefficients about the root: digamma(root + h) = value + h sum_k zeta(k + 2, root) (-h)^k
_ZETA = np.array([scipy_special.zeta(k + 2, _ROOT) for k in range(40)])
#: Asymptotic series beyond 10: digamma(x) = log x - 1/(2x) - sum_k c_k x^(-2k),
#: c_k = B_2k / (2k), listed from k = 7 down to k = 1.
_ASYMPTOTIC = (1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12)


def digamma_kernel(x: float) -> float:
    """Digamma of a float, as SciPy computes it (relative error ~1e-15); numba-compilable.

    Parameters
    ----------
    x : float
        The argument; NaN at 0 and the negative integers (the poles).
    """
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    h = x - _ROOT
    if abs(h) < 0.25:  # series about the root: no cancellation where digamma is small
        s = 0.0
        for k in range(39, -1, -1):
            s = s * (-h) + _ZETA[k]
        return _ROOT_VALUE + h * s
    result = 0.0
    if x < 0.0:  # reflection
        result -= math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:  # recurrence up to the asymptotic series
        result -= 1.0 / x
        x += 1.0
    w = 1.0 / (x * x)
    tail = 0.0
    for c in _ASYMPTOTIC:  # Horner's scheme in w = x^-2
        tail = (tail + c) * w
    return result + math.log(x) - 0.5 / x - tail


class Digamma(Psi):
    """PyTensor's ``psi`` (same Python and C code) with a cacheable numba implementation."""


class Gammaln(GammaLn):
    """PyTensor's ``gammaln`` whose gradient is :class:`Digamma` instead of ``psi``."""

    def L_op(self, inputs, outputs, grads):
        """Return the gradient, ``grads * digamma(x)`` with :class:`Digamma`.

        Parameters
        ----------
        inputs, outputs, grads : list
            PyTensor's scalar variables: ``[x]``, ``[gammaln(x)]`` and the output's gradient.
        """
        (x,), (gz,) = inputs, grads
        if outputs[0].type in ps.discrete_types or x.type in ps.complex_types:
            return super().L_op(inputs, outputs, grads)
        return [gz * scalar_digamma(x)]


scalar_digamma = Digamma(ps.upgrade_to_float, name="bayesldp_digamma")
scalar_gammaln = Gammaln(ps.upgrade_to_float, name="bayesldp_gammaln")
_digamma = Elemwise(scalar_digamma, name="bayesldp_digamma")
_gammaln = Elemwise(scalar_gammaln, name="bayesldp_gammaln")


def gammaln(x):
    """``pytensor.tensor.gammaln(x)``, differentiated with :func:`digamma`.

    Parameters
    ----------
    x : TensorVariable or array_like
        Positive arguments (elementwise).
    """
    return _gammaln(pt.as_tensor_variable(x))


def digamma(x):
    """``pytensor.tensor.psi(x)`` with a numba implementation PyTensor caches.

    Parameters
    ----------
    x : TensorVariable or array_like
        Arguments (elementwise).
    """
    return _digamma(pt.as_tensor_variable(x))


def _register_numba() -> None:
    # Gammaln inherits PyTensor's numba gammaln (math.lgamma), keyed by its own class.
    try:
        import numba
        from pytensor.link.numba.dispatch.basic import register_funcify_and_cache_key
    except ImportError:  # numba is optional (bayesldp[fast])
        return
    kernel = numba.njit(cache=True)(digamma_kernel)
    key = sha256(f"bayesldp.models._special.digamma-v{DIGAMMA_VERSION}".encode()).hexdigest()

    @register_funcify_and_cache_key(Digamma)
    def _numba_digamma(op, node, **kwargs):
        @numba.njit
        def bayesldp_digamma(x):
            return kernel(x)

        return bayesldp_digamma, key


_register_numba()


def stirling_remainder(x):
    r"""Return :math:`R(x) = \log\Gamma(x) - (x - \tfrac12)\log x + x - \tfrac12\log 2\pi`.

    From :data:`STIRLING_FROM` on by the first two terms of its asymptotic series,
    :math:`1 / (12 x) - 1 / (360 x^3)` (the first term left out, :math:`1 / (1260 x^5)`,
    is below :math:`10^{-10}` there), below it from ``gammaln`` (whose value there is
    small, so the difference keeps its precision).

    Parameters
    ----------
    x : TensorVariable
        Positive arguments, any shape.

    Returns
    -------
    TensorVariable
        :math:`R(x)`, same shape; :math:`\approx 1 / (12 x)` for large ``x``.
    """
    series = (1.0 / 12.0 - 1.0 / (360.0 * x * x)) / x
    direct = gammaln(x) - (x - 0.5) * pt.log(x) + x - 0.5 * np.log(2 * np.pi)
    return pt.switch(x >= STIRLING_FROM, series, direct)


def exp_excess(x):
    r"""Return :math:`e^x - 1 - x` to a relative error below :math:`10^{-10}`, even where tiny.

    ``expm1(x) - x`` loses the relative precision of its result as :math:`x` shrinks (at
    :math:`|x| < 10^{-8}` nearly all of it); below :data:`EXCESS_SERIES_BELOW` in
    :math:`|x|` the first three terms of the Taylor series,
    :math:`x^2 / 2 + x^3 / 6 + x^4 / 24`, are used instead (the first term left out is
    below :math:`10^{-10}` of the result there).

    Parameters
    ----------
    x : TensorVariable
        Any shape.

    Returns
    -------
    TensorVariable
        Non-negative, same shape.
    """
    series = x * x * (0.5 + x * (1.0 / 6.0 + x / 24.0))
    return pt.switch(pt.abs(x) < EXCESS_SERIES_BELOW, series, pt.expm1(x) - x)
