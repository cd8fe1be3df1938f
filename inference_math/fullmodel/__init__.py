"""The full model of Erdil (2025), sections 3-4, and the search over it.

Terms: ``full_model`` (the forward pass's latency terms under the paper's rules), ``physical_rules``
(the book's physical rules and the limit), ``collectives``, ``speculative``, ``long_context``; the
generated NumPy modules ``full_model_numpy`` (one per set of rules: ``_physical``, ``_limit``) and
``formulas_numpy``, written by :mod:`inference_math.codegen`. Search: ``search`` (every instance
size, batch and layout), ``pareto`` (the frontier of speed against cost), ``cache`` (an opt-in
cache of computed frontiers). The paper's runs: ``comparisons`` (settings of the reference code),
``toy_model`` (section 2's numeric frontier).

Imports ``core``, ``derivations`` and ``presets``; nothing above them.
"""
