"""The ground every other layer stands on; it imports nothing else of the package.

``symbols`` (the one symbol registry), ``registry`` (equation labels and their derivations),
``numeric`` (lambdify, compiled once), ``units`` and ``validation`` (``InputError`` and checks).
"""
