"""Specs checked up front: an endpoint that lists its models refuses a model it does not serve
before the first conversation (a bogus --judge-model used to fail once per conversation)."""

from __future__ import annotations

from aiohttp import web

from tests.support.cli import usersim
from tests.support.openai_stub import OpenAIStub


class ListingStub(OpenAIStub):
    """The stub plus GET /v1/models listing `served`."""

    def __init__(self, served: list[str]) -> None:
        super().__init__()
        self.served = served
        self.model_lists = 0

    async def _list(self, request: web.Request) -> web.Response:
        self.model_lists += 1
        return web.json_response(
            {"object": "list", "data": [{"id": m, "object": "model"} for m in self.served]}
        )

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._list)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


def test_a_judge_model_the_endpoint_does_not_serve_is_refused_before_any_conversation(tmp_path, monkeypatch):
    with ListingStub(["gpt-judge-1", "gpt-agent-1"]) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-listing-1234")
        out = tmp_path / "run"
        res = usersim(
            "run", "--id", "B1-EI-01", "--judge-model", "gpt-judg-1", "--out", str(out), check=False
        )
        assert res.returncode == 2
        assert "judge model 'gpt-judg-1' at" in res.stderr
        assert "does not serve model 'gpt-judg-1'. Did you mean 'gpt-judge-1'?" in res.stderr
        assert stub.requests == [] and not out.exists()  # no conversation, no folder
        res = usersim(
            "run",
            "--id",
            "B1-EI-01",
            "--agent",
            "openai:bogus",
            "--out",
            str(out),
            "--no-progress",
            check=False,
        )
        assert res.returncode == 2 and "agent model 'bogus'" in res.stderr and stub.requests == []
        assert stub.model_lists == 2


def test_an_endpoint_without_a_model_list_is_not_refused(tmp_path, monkeypatch):
    """The plain stub has no /v1/models: the check cannot tell, so the run goes ahead."""
    with OpenAIStub() as stub:
        stub.responder = lambda body: {"content": '{"verdicts": []}'}
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("USERSIM_LLM_BACKOFF_S", "0.01")
        out = tmp_path / "run"
        usersim(
            "run",
            "--id",
            "B1-EI-01",
            "--judge-model",
            "any-judge",
            "--out",
            str(out),
            "--no-progress",
            check=False,
        )
        assert (out / "results.jsonl").is_file()
