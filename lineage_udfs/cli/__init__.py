"""The ``lineage`` command: answers from the lineage Delta tables, read in-process with delta-rs.

Nothing here imports pyspark (an import-linter contract): the command starts in well under a
second and needs no JVM. ``lineage_udfs.cli.app`` holds the commands, ``store`` reads the tables,
``queries`` computes the answers and ``render`` draws them (HTML with Cytoscape.js, SVG with
Graphviz ``dot``).
"""
