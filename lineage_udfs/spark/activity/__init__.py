"""Freshness, ownership, usage and expectations from the query history (the activity stage)."""
