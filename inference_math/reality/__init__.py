"""The curves against what real systems measure.

``measurements`` (the paper's and the scaling book's observed points against the full model),
``measured_points`` (public serving measurements, with their conditions, resolved to deployments),
``limit_check`` (no measurement above the limit), ``estimate_fit`` (the estimate's parameters
fitted on the public points, its held-out error and its band; and each engine family's own
efficiencies, pulled toward its stack's: the families are ``serving.engines``).

Imports ``core``, ``derivations``, ``presets``, ``fullmodel`` and ``serving``.
"""
