"""bayesldp: post-processing of local differential privacy frequency estimates.

Frequency oracles produce a :class:`Measurement`; :func:`postprocess` turns it into
an :class:`Estimate` with any of the methods in :data:`METHODS`.
"""

from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods import BACKENDS, METHODS, available_methods, postprocess
from bayesldp.oracles import GRR, HR, OLH, ORACLES, OUE, SS, SUE, FrequencyOracle, make_oracle

__version__ = "0.1.0"

__all__ = [
    "BACKENDS",
    "GRR",
    "HR",
    "METHODS",
    "OLH",
    "ORACLES",
    "OUE",
    "SS",
    "SUE",
    "Estimate",
    "FrequencyOracle",
    "Measurement",
    "__version__",
    "available_methods",
    "make_oracle",
    "postprocess",
]
