"""Code generation: SymPy derivations written out as plain NumPy (or Python) modules, at build time.

``counts_codegen`` writes ``presets/counts_numpy.py`` and ``presets/counts_python.py`` (parameter,
cache and weight-byte counts, in NumPy and in plain Python),
``full_model_codegen`` the full model's terms (``fullmodel/full_model_numpy*.py``, one module per
set of rules) and ``formulas_codegen`` the serving rules, the estimate's step, the forward FLOPs
the elasticities, the prefill prices and the toy model's optimum (``fullmodel/formulas_numpy.py``)
and ``names_codegen`` the registry's names (``core/names.py``). Commands import only the generated
modules, never SymPy; the tests regenerate each and compare.

Imports every layer below ``book`` and ``cli``; nothing imports it but the tests.
"""
