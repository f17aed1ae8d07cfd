"""Reading production conversations into one neutral model (`Conversation`) and drafting static
cases from it: OpenAI chat-format JSONL (`openai_jsonl`), LangSmith run/thread exports
(`langsmith`), OTLP JSON traces after the OpenTelemetry GenAI conventions (`otlp`); `drafts`
writes the cases, `pii` masks personal data. Personas are drafted one layer up
(usersim.personas.draft)."""
