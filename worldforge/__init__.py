"""worldforge: fictional-world synthetic data for training search and browsing agents."""

__version__ = "0.1.0"
