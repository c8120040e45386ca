"""Tests of :mod:`bayesldp.empirical_bayes`, one module per private module."""
