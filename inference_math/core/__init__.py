"""The ground every other layer stands on; it imports nothing else of the package.

``symbols`` (the one symbol registry, SymPy), ``names`` (its names, generated, without SymPy: run
time keys values by them), ``registry`` (equation labels and their derivations), ``numeric``
(lambdify, compiled once), ``printing`` (the generated modules' NumPy printer), ``units`` and
``validation`` (``InputError`` and checks); ``in_order`` (independent blocks on the machine's
cores, their results in order) and ``allocation`` (glibc's thresholds, so that large temporaries'
pages are reused).
"""
