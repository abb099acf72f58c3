"""Pure core: SQL text → lineage results. Imports only the stdlib and the cascade's parsers."""
