"""Is the interconnect healthy? Expected bandwidth with sources (``reference``), the
topology (``topology``; from NVML in ``nvml``), NCCL's settings and choices (``nccl``),
collectives sweeps as records (``records``) and the verdict (``verdict``). Nothing here
imports torch."""
