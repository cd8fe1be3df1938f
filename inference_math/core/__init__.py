"""The ground every other layer stands on; it imports nothing else of the package.

``symbols`` (the one symbol registry, SymPy), ``names`` (its names, generated, without SymPy: run
time keys values by them), ``registry`` (equation labels and their derivations), ``numeric``
(lambdify, compiled once), ``printing`` (the generated modules' NumPy printer), ``units`` and
``validation`` (``InputError`` and checks).
"""
