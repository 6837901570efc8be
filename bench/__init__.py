"""The benchmark against Hermes: see bench/compress_vs_hermes.py and docs/benchmarks.md."""
