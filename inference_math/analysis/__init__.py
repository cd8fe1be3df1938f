"""Questions asked of many frontiers.

``bands`` (the spread of assumed hardware numbers and of the estimate on a frontier),
``continuum`` (the search with N and b real), ``sensitivity`` (elasticities of the cost; their
derivations in ``sensitivity_rules``),
``cheaper`` (what would make a cost cheaper), ``sweep`` (frontier summaries over a grid, in
parallel), ``bench`` (the 35 canonical frontiers, timed).

Imports ``core``, ``derivations``, ``presets``, ``fullmodel``, ``serving`` and ``reality``.
"""
