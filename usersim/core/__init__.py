"""The bottom layer: types every other package shares (messages, events, usage, verdicts, the run
record), the plugin registry, secret redaction and the YAML reader. Imports nothing of usersim."""
