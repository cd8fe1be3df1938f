"""The full model of Erdil (2025), sections 3-4, and everything that searches it.

Terms: ``collectives``, ``full_model`` (the forward pass's latency terms), ``speculative``,
``long_context``. Search: ``search`` (every instance size, batch and layout), ``pareto`` (the
frontier of speed against cost), ``cache`` (an opt-in cache of computed frontiers). Bands:
``bands`` (the spread of a GPU's assumed and provisional values over the ranges of
``data/band_ranges.toml``, and the estimate's band, on every frontier). The paper's
runs: ``comparisons`` (settings of the reference code), ``toy_model`` (section 2's numeric
frontier), ``bench`` (timed against the original code). Imports ``core``, ``derivations`` and
``presets``; never ``book`` or ``cli``.
"""
