"""``lineage serve``: a read-only web page over the lineage tables (search, navigate upstream and
downstream, column paths, statements, runs, quarantine, freshness badges).

``data`` is the one module that reads the tables (through the reader API: ``cli.queries``,
``cli.records``, ``cli.activity``, ``cli.store``); ``server`` is the ASGI app and its access
rule; ``command`` is the ``lineage serve`` command; the page is ``cli/static/explorer.*``.
"""
