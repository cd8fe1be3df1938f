"""Model and GPU presets (imports ``core`` and ``derivations``).

``hardware``: the GPUs and TPUs with their FLOP/s, HBM, interconnect and price; ``models``: the
models of the sources, whose parameter and KV-cache counts are evaluated from the derivations
(``counts``, through the generated ``counts_python``, or ``counts_numpy`` where plain Python
would raise); ``uniform``: a model whose layers are alike;
``layered``: one whose layers differ; ``hf_config``: reading a Hugging Face config. Values are
keyed by the registry's names (``core.names``): no preset imports SymPy.
"""
