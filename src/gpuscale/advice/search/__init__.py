"""From the calibration to the advice in one pass: predict (with intervals), rest the rows
measured outside them on the measurements, decide, derive the numbers the words read."""
