"""Speed and library-comparison benchmarks: scripts, importable as ``benchmarks.NAME``."""
