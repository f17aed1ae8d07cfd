"""usersim: judges."""
