"""Serving a workload: prompts and generated tokens on one deployment.

``prefill`` (a prompt's pass and the prefill:decode split), ``serving_rules`` (continuous
batching, chunked prefill, disaggregation), ``estimate_rules`` (the estimate's step in closed
form), ``step_time`` (one step's time under each curve: paper, physical, limit, estimate),
``predict`` (the full model at one given deployment, no search), ``serving_frontier`` (the
frontier of a workload with input and output lengths, TTFT and TPOT), ``engines`` (serving
engines named as families: the estimate's efficiencies by engine).

Imports ``core``, ``derivations``, ``presets`` and ``fullmodel``.
"""
