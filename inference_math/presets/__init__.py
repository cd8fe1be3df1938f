"""Model and GPU presets (imports ``core`` and ``derivations``).

``hardware``: the GPUs and TPUs with their FLOP/s, HBM, interconnect and price; ``models``: the
models of the sources, whose parameter and KV-cache counts are evaluated from the derivations.
"""
