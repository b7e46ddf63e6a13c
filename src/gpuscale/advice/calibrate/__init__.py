"""From the request and the data to the calibration: usable runs, fits, measured
terms, families, the link."""
