"""Reading production conversations into one neutral model (`Conversation`) and drafting static
cases from it: OpenAI chat-format JSONL (`openai_jsonl`), LangSmith run/thread exports
(`langsmith`), LangGraph checkpointer threads (`langgraph`; both read LangChain messages through
`lc_history`), OTLP JSON traces after the OpenTelemetry GenAI conventions (`otlp`); `drafts`
writes the cases, `pii` masks personal data. Personas are drafted one layer up
(usersim.personas.draft)."""
