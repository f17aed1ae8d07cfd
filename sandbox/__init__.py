"""usersim: sandbox."""
