"""The post-processing methods of NumPy: each a function ``f(m, **options) -> Estimate``.

Names follow Wang et al., "Locally Differentially Private Frequency Estimation with
Consistency" (NDSS 2020 and its long version); equation numbers refer to the long
version. ``power`` and ``power-ns`` are Calibrate's (Jia and Gong 2019); ``ibu`` and
``mle`` are exact maximum-likelihood anchors the papers do not have. Call them by name
with :func:`bayesldp.postprocess`; every method is declared, with its properties, in
:mod:`bayesldp.methods.registry`.

Where they live: the baselines in ``_baseline.py`` (base, base-pos, post-pos,
base-cut), the normalisations in ``_normalise.py`` (norm, norm-mul, norm-sub, norm-cut,
norm-hyb, cls), the likelihood methods in ``_likelihood.py`` (mle-apx, mle, ibu), the
power-law posterior means in ``_power.py`` (power, power-ns, built on
``_calibrate.py``). Each method is written once, vectorised over rows of measurements
(``_rows.py``); the parametric bootstrap runs the same code on its replicates.
"""

from bayesldp.methods._baseline import base, base_cut, base_pos, post_pos
from bayesldp.methods._likelihood import ibu, log_likelihood, mle, mle_apx
from bayesldp.methods._normalise import cls, norm, norm_cut, norm_hyb, norm_mul, norm_sub
from bayesldp.methods._power import power, power_ns
from bayesldp.methods._simplex import project_simplex

__all__ = [
    "base",
    "base_cut",
    "base_pos",
    "cls",
    "ibu",
    "log_likelihood",
    "mle",
    "mle_apx",
    "norm",
    "norm_cut",
    "norm_hyb",
    "norm_mul",
    "norm_sub",
    "post_pos",
    "power",
    "power_ns",
    "project_simplex",
]
