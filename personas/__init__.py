"""usersim: personas."""
