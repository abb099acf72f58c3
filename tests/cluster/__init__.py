"""Tests on a Spark standalone cluster (make test-cluster); see conftest.py."""
