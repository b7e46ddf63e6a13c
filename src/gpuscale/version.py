"""The package version, in a module of its own so that any layer may read it."""

__version__ = "0.1.0"
VERSION_LINE = f"gpuscale {__version__}"  # what `gpuscale --version` prints
