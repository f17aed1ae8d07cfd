"""usersim: the tool sandbox - simulated tools over fixture data, fault injection, and skills.

Entry point: `sandbox.base.open_sandbox(case)`; judges reuse `sandbox.places.normalize_place` and
`sandbox.catalog.lookup_items`. See sandbox/README.md.
"""
