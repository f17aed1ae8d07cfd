"""usersim: adapters."""
