//! Reads the topology through NVML (`libnvidia-ml.so.1`, loaded at run time).
