"""usersim: simulator."""
