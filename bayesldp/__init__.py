"""bayesldp: post-processing of local differential privacy frequency estimates.

Frequency oracles produce a :class:`Measurement`; :func:`postprocess` turns it into
an :class:`Estimate` with any of the methods in :data:`METHODS`.
"""

from bayesldp.choose import choose_method
from bayesldp.estimate import Estimate
from bayesldp.measurement import Measurement
from bayesldp.methods.registry import (
    BACKENDS,
    MethodSpec,
    method_names,
    postprocess,
    register_method,
)
from bayesldp.oracles import GRR, HR, OLH, ORACLES, OUE, SS, SUE, FrequencyOracle, make_oracle
from bayesldp.planning import plan

__version__ = "0.2.0"


def __getattr__(name: str):
    """``METHODS``: every registered method name, in the order tables and plots show them.

    Computed on access, so methods added with :func:`register_method` appear too.
    """
    if name == "METHODS":
        return method_names()
    raise AttributeError(f"module 'bayesldp' has no attribute {name!r}")


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
    "MethodSpec",
    "__version__",
    "choose_method",
    "make_oracle",
    "method_names",
    "plan",
    "postprocess",
    "register_method",
]
