"""The hardware catalogue: every fact gpuscale knows about accelerators and links, in one
place on the bottom floor (it imports nothing of gpuscale but the tables' constants).

* ``accelerators``: accelerator names as people and MLPerf submitters write them ->
  vendor, product, variant and family (``NVIDIA H100 80GB HBM3`` -> ``H100-SXM5-80GB``).
* ``peaks``: dense peak FLOP/s by device and precision, and MFU against them.
* ``power``: board power limits by device.
* ``links``: NVLink generations (and the GPUs that carry them), PCIe and network line
  rates, NCCL's bus-bandwidth model, the link presets of the advice and the interconnect
  check (bus bandwidth, latency), and published all-reduce measurements.

Each table cites its sources in its module's docstring. Nothing here reads or writes files.
"""
