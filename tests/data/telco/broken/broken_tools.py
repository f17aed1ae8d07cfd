"""A tools file with an import-time bug: the module it needs does not exist."""

from telco_helpers_that_do_not_exist import lookup  # noqa: F401


def get_line(db, line_id: str) -> dict:
    """A line."""
    return lookup(db, line_id)
