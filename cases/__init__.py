"""usersim: cases."""
