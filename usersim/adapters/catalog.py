"""Registers the built-in agent SPEC schemes. Imported by `adapters.base.load_agent`.

| SPEC | agent |
|---|---|
| `reference[:OPTIONS]` | the deterministic offline reference agent (`adapters/reference/`) |
| `openai:MODEL[?options]` | an OpenAI-compatible chat model (`adapters/openai_agent.py`) |
| `openai-responses:MODEL[?options]` | a model behind the OpenAI Responses API (`adapters/openai_responses.py`) |
| `a2a:URL[?options]` | an A2A agent, with the `a2a` extra (`adapters/a2a_agent.py`) |
| `python:module:function` | a Python callable (`adapters/python_fn.py`) |
| `callable:NAME` | a callable handed to `usersim.run(..., agent=fn)` in this process |
| `http://...`, `https://...` | an HTTP chat endpoint (`adapters/http_agent.py`) |
| `langgraph:module:attr[?mode=thread]` | a LangGraph graph / LangChain Runnable (`adapters/langgraph_agent.py`) |
| `langgraph-server:URL?assistant=ID` | a graph deployed on LangGraph Server (`adapters/langgraph_server.py`) |

Factories import their module lazily so that, e.g., a typo in a python: spec never costs the
import of LangChain.
"""

from __future__ import annotations

from usersim.adapters.base import AgentUnderTest, agent_registry


@agent_registry.register("reference")
def _reference(spec: str) -> AgentUnderTest:
    from usersim.adapters.reference.agent import ReferenceAgent

    return ReferenceAgent(spec)


@agent_registry.register("openai")
def _openai(spec: str) -> AgentUnderTest:
    from usersim.adapters.openai_agent import OpenAIAgent

    return OpenAIAgent(spec)


@agent_registry.register("openai-responses")
def _openai_responses(spec: str) -> AgentUnderTest:
    from usersim.adapters.openai_responses import OpenAIResponsesAgent

    return OpenAIResponsesAgent(spec)


@agent_registry.register("a2a")
def _a2a(spec: str) -> AgentUnderTest:
    from usersim.adapters.a2a_agent import A2AAgent

    return A2AAgent(spec)


@agent_registry.register("python")
@agent_registry.register("callable")
def _python(spec: str) -> AgentUnderTest:
    from usersim.adapters.python_fn import PythonFunctionAgent

    return PythonFunctionAgent(spec)


@agent_registry.register("http")
def _http(spec: str) -> AgentUnderTest:
    from usersim.adapters.http_agent import HttpAgent

    return HttpAgent(spec)


@agent_registry.register("langgraph")
def _langgraph(spec: str) -> AgentUnderTest:
    from usersim.adapters.langgraph_agent import LangGraphAgent

    return LangGraphAgent(spec)


@agent_registry.register("langgraph-server")
def _langgraph_server(spec: str) -> AgentUnderTest:
    from usersim.adapters.langgraph_server import LangGraphServerAgent

    return LangGraphServerAgent(spec)
