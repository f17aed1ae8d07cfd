"""usersim: graphs."""
