"""The step model: the step formula, the network, convergence, the fixed cost,
the hardware's limits and power, the priors (each constant once, with its source)."""
