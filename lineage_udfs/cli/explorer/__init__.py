"""``lineage serve``: a read-only web page over the lineage tables (search, navigate upstream and
downstream, column paths, statements, runs, quarantine).

``data`` is the one module that reads the tables (through the ``lineage`` command's answers);
``server`` is the ASGI app and its access rule; the page is ``cli/static/explorer.*``.
"""
