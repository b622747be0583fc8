"""Benchmarks (decode throughput, pipeline end to end). Not tests: they report figures."""
