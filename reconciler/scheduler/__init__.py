"""The scheduler: places workloads onto the capacity apply built (a separate watch loop)."""
