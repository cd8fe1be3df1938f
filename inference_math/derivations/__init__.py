"""Closed forms of the book's first three parts, one module per topic (imports ``core`` only).

Foundations, the toy model of Erdil (2025) section 2: ``roofline``, ``latency_wall``,
``scaling``, ``moe``, ``architecture``.

Transformer inference on accelerators, the scaling book and Pope et al. (2023): ``intensity``,
``kv_cache``, ``sharding``, ``serving``.

From first principles to dollars, the Tensor Economics posts: ``dense_economics``,
``deepseek_serving``, ``embeddings``, ``rollouts``.

The full model of the fourth part derives its terms in :mod:`inference_math.fullmodel`.

Two of the paper's side arguments have their own modules: ``capacity`` (memory capacity against
speed, section 3.5) and ``acceptance`` (the acceptance rate of speculative decoding estimated from
log-probabilities, section 4.1). ``queueing`` gives the time to first token a benchmark reports,
a mean or a quantile over its requests, from how they arrive (a concurrency with its initial
burst, or a rate).
"""
