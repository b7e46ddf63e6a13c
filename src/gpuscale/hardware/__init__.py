"""The hardware catalogue: every fact gpuscale knows about accelerators and links, in one
place on the bottom floor (it imports nothing of gpuscale but the tables' constants).

* ``catalogue``: the device catalogue, one table read once (``gpuscale/data/devices.csv``,
  each value's datasheet in ``device_sources.csv``): the GPUs people train on, datacenter,
  workstation and consumer, with their dense peaks by precision, memory and bandwidth,
  board power, links and whether the driver allows P2P.
* ``device_names``: the one resolver of what people, torch and NVML call a device
  (``4090``, ``NVIDIA A100-SXM4-80GB``, ``H100`` -> its SXM part, said), used by ``topo``,
  ``collectives`` and ``advise`` alike.
* ``peaks``: MFU against the catalogue's peaks; ``power``: its board powers.
* ``links``: NVLink generations, PCIe and network line rates, NCCL's bus-bandwidth model,
  the link presets of the advice and the interconnect check, the usual link of a part,
  and published all-reduce measurements.
* ``accelerators``: accelerator names as MLPerf submitters write them -> vendor, product,
  variant and family (``NVIDIA H100 80GB HBM3`` -> ``H100-SXM5-80GB``).

Each table cites its sources. Nothing here writes files.
"""
