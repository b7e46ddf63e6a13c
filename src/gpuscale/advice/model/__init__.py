"""The step model: the step formula, the network, the fixed cost, the hardware's limits
and power, the priors and the convergence (each constant once, with its source)."""
