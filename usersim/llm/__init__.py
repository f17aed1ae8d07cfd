"""The LLM layer: one OpenAI-compatible client (retries, JSON mode), its call cache, per-endpoint
rate limits and prices. Used by the agent adapters, the LLM simulator and the LLM judges."""
