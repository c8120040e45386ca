"""PyMC models for Bayesian post-processing (installed as ``bayesldp.models``)."""
