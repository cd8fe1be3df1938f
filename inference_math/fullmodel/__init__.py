"""The full model of Erdil (2025), sections 3-4, and the search over it.

Derivations (SymPy): ``full_model`` (the forward pass's latency terms under the paper's rules),
``physical_rules`` (the book's physical rules and the limit), ``collectives``, ``speculative``,
``long_context``, ``search_rules`` (the price of a token, the preference along a frontier) and
``terms`` (the terms composed for each structure of a branch, what the code generator prints).
The generated NumPy modules ``full_model_numpy`` (one per set of rules: ``_physical``,
``_limit``) and ``formulas_numpy``, written by :mod:`inference_math.codegen`. Run time, without
SymPy: ``branch`` (a branch's terms at a model's and a GPU's numbers), ``spec_step`` (a
speculative step's latency); search: ``search`` (every instance size, batch and layout),
``pareto`` (the frontier of speed against cost), ``cache`` (an opt-in cache of computed
frontiers). The paper's runs: ``comparisons`` (settings of the reference code), ``toy_model``
(section 2's numeric frontier). No command imports a module that imports SymPy.

Imports ``core``, ``derivations`` and ``presets``; nothing above them.
"""
