"""The deterministic reference agent (SPEC `reference[:options]`); see agent.py.

Layout: lexicon / dates / slots read the user; context applies the context strategy; intents
pick what the user wants; planner holds the shared handler pieces; travel, trip and info are the
intent handlers; render writes tool results as answer lines; kb is the small built-in guide.
"""
