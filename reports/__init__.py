"""usersim: reports."""
