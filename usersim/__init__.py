"""usersim: command line, plugin registry and configuration glue."""

__version__ = "0.1.0"
