"""From the calibration to the advice in one pass: predict (with intervals), reconcile with
the measurements, decide, derive the numbers the words read."""
