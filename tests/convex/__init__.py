"""Tests of :mod:`bayesldp.convex`: a catalogue of problems with known optima, one checker."""
