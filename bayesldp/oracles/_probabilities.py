r"""Support probabilities that stay finite and accurate for any finite epsilon.

The oracles' ``p`` and ``q`` are ratios of the form :math:`a e^x / (a e^x + b)` and
:math:`1 / (a e^x + b)`. :func:`exp_ratios` evaluates them in the textbook form while
:math:`a e^x` is finite and in a form that cannot overflow beyond, so that an oracle at
epsilon 710 or 1000 still has ``p`` and ``q`` (rounded to 1 and 0).
"""

from __future__ import annotations

import math
import sys

#: Largest x with a finite math.exp(x) (about 709.78).
_EXP_LIMIT = math.log(sys.float_info.max)


def exp_ratios(x: float, a: float, b: float) -> tuple[float, float]:
    """Return ``(a e^x / (a e^x + b), 1 / (a e^x + b))`` for ``a >= 1``, ``b >= 0``, finite x.

    While ``a e^x`` is finite the textbook forms are used; beyond, the same quantities
    as ``1 / (1 + b e^-x / a)`` and ``(e^-x / a) / (1 + b e^-x / a)``, which cannot
    overflow. Both are within 2 ulps of the exact values.

    Parameters
    ----------
    x : float
        The exponent, finite (an oracle's epsilon, or a fraction of it).
    a : float
        Factor of ``e^x``, at least 1 (not checked).
    b : float
        Added constant, at least 0 (not checked).

    Returns
    -------
    tuple of float
        ``a e^x / (a e^x + b)`` and ``1 / (a e^x + b)``.
    """
    if x < _EXP_LIMIT - math.log(a) - 1.0:
        e = a * math.exp(x)
        return e / (e + b), 1.0 / (e + b)
    m = math.exp(-x) / a
    return 1.0 / (1.0 + b * m), m / (1.0 + b * m)
