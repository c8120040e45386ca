r"""Pure LDP frequency oracles: GRR, OUE, SUE (basic RAPPOR), OLH, SS and HR.

Every oracle offers the user side (:meth:`~FrequencyOracle.privatize`), the aggregator
side (:meth:`~FrequencyOracle.support_counts`, :meth:`~FrequencyOracle.aggregate`), a
whole simulated round from true counts (:meth:`~FrequencyOracle.simulate`) and its
wire format, in memory and as Arrow (:meth:`~FrequencyOracle.to_arrow`,
:meth:`~FrequencyOracle.from_arrow`). All of it is vectorised and works block by block
(a bounded number of user-item cells at a time), so memory beyond the reports
themselves does not grow with the number of users. Randomness always comes from the
``rng`` passed in: a :class:`numpy.random.Generator` or an integer seed.

All six are *pure* oracles (Wang et al., USENIX Security 2017): a user holding ``v``
supports ``v`` with probability ``p`` and supports any other item with probability
``q``, so :class:`~bayesldp.Measurement` and every post-processing method apply.

Wire format
-----------
``privatize(values, rng)`` returns exactly the messages users send, one row per user;
``support_counts`` and ``aggregate`` accept exactly this format (dtype, shape and value
range are checked; anything else is a ``ValueError`` naming ``reports``).

======== ===================================== =========================================
Oracle   Array (``n`` users)                   Meaning
======== ===================================== =========================================
GRR      ``(n,)``, smallest unsigned dtype     the reported item in ``0 .. d-1``
         holding ``d - 1``
HR       ``(n,)``, smallest unsigned dtype     the reported Hadamard column in
         holding ``K - 1``                     ``0 .. K-1``
OUE/SUE  ``(n, ceil(d/8))`` ``uint8``          the ``d`` bits packed 8 per byte in
                                               ``numpy.packbits`` order: item ``j`` is
                                               bit ``7 - j % 8`` of byte ``j // 8``;
                                               padding bits are 0
SS       ``(n, k)``, smallest unsigned dtype   the ``k`` reported items, strictly
         holding ``d - 1``                     increasing (a set: the order is fixed)
OLH      ``(n, 3)`` ``uint32``                 ``a`` in ``[1, P)``, ``b`` in ``[0, P)``
                                               and the bucket ``y`` in ``[0, g)``, for
                                               the hash ``((a v + b) mod P) mod g``,
                                               ``P = 2^31 - 1``
======== ===================================== =========================================

The dtype depends only on the oracle's parameters, never on the data. As Arrow (one
row per user; the oracle's :meth:`~FrequencyOracle.parameters` as JSON under the
schema metadata key ``b"bayesldp.reports"``): GRR and HR a ``report`` column of
that unsigned type; OUE/SUE ``report`` as ``fixed_size_binary(ceil(d/8))``; SS
``report`` as ``fixed_size_list<uint>[k]``; OLH three ``uint32`` columns ``a``, ``b``,
``y``. :meth:`~FrequencyOracle.from_arrow` also reads reports written elsewhere: any
integer column type, OUE/SUE as a list column of the indices of the set bits, SS as
variable-size lists that all hold ``k`` increasing items. pyarrow comes with the
``dask`` extra and is imported only there.

Exactness
---------
``privatize`` draws exactly the mechanism: every coin uses the exact float64 value of
its probability (64-bit comparisons resolved digit block by digit block, packed bits
from 8 random bits per bit with exact tie resolution, uniform integers from numpy's
unbiased bounded sampler, uniform subsets by exact rejection). ``p`` and ``q`` are
finite and accurate for any finite epsilon (the textbook forms while
:math:`e^\varepsilon` is finite, e.g.
:math:`p = e^\varepsilon / (e^\varepsilon + d - 1)`, then
:math:`p = 1 / (1 + (d-1) e^{-\varepsilon})`); at epsilon 710 or 1000 they round to
1 and 0 and every oracle still works.

Modules
-------
One public module per oracle family (:mod:`~bayesldp.oracles.grr`,
:mod:`~bayesldp.oracles.unary` with OUE and SUE, :mod:`~bayesldp.oracles.olh`,
:mod:`~bayesldp.oracles.subset_selection`, :mod:`~bayesldp.oracles.hadamard`); the
shared interface and registration in ``_base``, the registry in ``_registry``, block
iteration in ``_blocks``, the Arrow codec in ``_arrow``, one-integer reports in
``_integer_reports``, exact random bits in ``_exact_random`` and overflow-free
probabilities in ``_probabilities``. A new oracle
subclasses :class:`FrequencyOracle` and is decorated with :func:`register_oracle`.
"""

from __future__ import annotations

from bayesldp.oracles._base import FrequencyOracle, register_oracle
from bayesldp.oracles._registry import ORACLES, make_oracle, oracle_class

# The import order is the registration order: the order of ORACLES and of every list
# derived from it.
# isort: off
from bayesldp.oracles.grr import GRR
from bayesldp.oracles.unary import OUE, SUE
from bayesldp.oracles.olh import OLH
from bayesldp.oracles.subset_selection import SS
from bayesldp.oracles.hadamard import HR

# isort: on

__all__ = [
    "GRR",
    "HR",
    "OLH",
    "ORACLES",
    "OUE",
    "SS",
    "SUE",
    "FrequencyOracle",
    "make_oracle",
    "oracle_class",
    "register_oracle",
]
