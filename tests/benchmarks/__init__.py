"""Tests of the benchmark scripts (benchmarks/, not installed)."""
