"""From the calibration to the advice: predictions and intervals, the decision,
break-even and equilibrium, findings."""
