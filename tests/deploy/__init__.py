"""Readers for the deployment files (Dockerfile, .dockerignore, compose, manifests) used by the
offline validation tests in ``tests/unit/test_deploy_*.py``."""
