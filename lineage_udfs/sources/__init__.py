"""Vendor query-history sources: presets and native lineage reconciliation."""
