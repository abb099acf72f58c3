"""Test helpers shared by unit and Spark tests (not collected as tests)."""
