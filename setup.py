"""Build configuration beyond pyproject.toml: the optional C scanner.

``gpuscale.mlperf._scan`` speeds up reading MLPerf logs about 4x; ``optional=True``
means a machine without a C compiler still installs gpuscale, which then uses the
pure-Python scanner (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "gpuscale.mlperf._scan",
            sources=["src/gpuscale/mlperf/_scan.c"],
            optional=True,
        )
    ]
)
