"""Workload traces: the native format, flat CSV, and Alibaba's openb pod list."""
