"""The case file format (YAML on disk, validated here).

A case keeps what the simulated user may see (`input`, `persona`, `goal`) apart from what only
the judges see (`judging`). Every field carries a description so `usersim schema case` documents
the format for users.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from usersim.cases.environment import Environment, build_tools
from usersim.cases.grading import GradingSpec
from usersim.cases.history import history_writes, normalize_history
from usersim.core.defaults import new_dict, new_list
from usersim.core.messages import Message

CASE_SCHEMA_VERSION = 1

Difficulty = Literal["easy", "medium", "hard"]
_DIFFICULTY_ALIASES = {"简单": "easy", "中等": "medium", "困难": "hard"}

ScoringMethod = Literal["auto", "llm_judge", "human"]
_SCORING_ALIASES = {"自动": "auto", "llm-judge": "llm_judge", "llm": "llm_judge", "人工": "human"}

LengthName = Literal["4k", "16k", "32k"]
Position = Literal["beginning", "middle", "end"]
LENGTH_TOKENS: dict[str, int] = {"4k": 4096, "16k": 16384, "32k": 32768}


class Strict(BaseModel):
    # built on first use, not at import: a command pays only for the models it validates (the
    # sub-models a parent embeds are built inside its schema; alone, only if validated alone)
    model_config = ConfigDict(extra="forbid", defer_build=True)


class ImageRef(Strict):
    """An image the user sends: a file and/or the seed's caption (text-only agents get the caption)."""

    path: str | None = Field(default=None, description="Image file, relative to the case file.")
    caption: str = Field(description="What the image shows, as described in the seed.")


class CaseContext(Strict):
    """The agent's world at the start of the conversation."""

    current_date: str | None = Field(default=None, description="Sandbox clock date, YYYY-MM-DD.")
    memory: list[str] = Field(default_factory=new_list, description="Agent memory entries about the user.")
    images: list[ImageRef] = Field(
        default_factory=new_list, description="Images attached to the current message."
    )
    notes: str | None = Field(
        default=None, description="Free-text context from the seed (e.g. '无历史对话')."
    )


class CaseInput(Strict):
    """What is replayed to the agent (static) or how the conversation opens (organic)."""

    history: list[Message] = Field(
        default_factory=new_list,
        description="Fixed prior conversation, replayed verbatim to the agent: usersim's message shape or "
        "OpenAI chat format as exported (assistant `tool_calls` with `function: {name, arguments}`, `tool` "
        "messages with `tool_call_id`). Calls to environment tools are replayed on the state first.",
    )
    message: str | None = Field(default=None, description="The current user message the agent must answer.")

    @field_validator("history", mode="before")
    @classmethod
    def _openai_history(cls, v: Any) -> Any:
        return normalize_history(v)

    script: list[str] = Field(
        default_factory=new_list,
        description="Further scripted user turns, answered live in order. Static: the whole script. "
        "Organic: a replayed prefix (a promoted failure's recorded turns after `message`); the persona's "
        "simulator continues once it is used up.",
    )


class SkillsConfig(Strict):
    """Which skills the agent has (seed: skill_enabled / active_skills, Group A/B)."""

    skill_enabled: bool = Field(default=False, description="Whether any skill is exposed to the agent.")
    active_skills: list[str] = Field(default_factory=new_list, description="Names of skills exposed.")
    groups: list[Literal["A", "B"]] = Field(
        default_factory=new_list,
        description="Skill-impact groups to run: A = skills off, B = active_skills on (seed 002).",
    )
    exempt_from_delta: bool = Field(
        default=False, description="Excluded from skill_impact_delta (seed 002 exemptions)."
    )


class InterceptCondition(Strict):
    param: str = Field(description="Argument name to match.")
    value: Any = Field(description="Argument value that triggers the intercept.")


class InjectedResult(Strict):
    is_error: bool = Field(default=False, description="Whether the injected result is an error.")
    content: str = Field(description="The injected tool result text (often JSON).")


class InjectInstruction(Strict):
    """Instruction text inserted into a real tool result (a prompt-injection attack through the tool
    channel). The result is kept; the text goes at `position`, dressed as `disguise`."""

    template: str = Field(
        min_length=1,
        description="A template name from the language's `injections.yaml` (usersim/lang/data/<code>/; "
        "extend it in a `lang/` folder beside the cases), or the instruction text itself. "
        "{placeholders} are filled from `args`, then from the templates file's `defaults`.",
    )
    position: Literal["start", "end", "field"] = Field(
        default="end",
        description="start / end of the result text, or `field`: inside a JSON result's string field.",
    )
    field: str | None = Field(
        default=None,
        description="With position `field`: the dotted path of the field (`outbound.0.notes`); default: "
        "the first string field of the result.",
    )
    disguise: Literal["none", "system", "note", "html_comment", "json_field"] = Field(
        default="none",
        description="How the text is dressed: as is, as a system message, a note to the assistant, an "
        "HTML comment, or a JSON key of its own.",
    )
    language: Literal["zh", "en"] | None = Field(
        default=None, description="Template language (default: the case's language)."
    )
    args: dict[str, Any] = Field(
        default_factory=new_dict, description="Values of the template's placeholders."
    )

    @field_validator("template")
    @classmethod
    def _named(cls, v: str) -> str:
        from usersim.cases.injections import name_problem

        problem = name_problem(v, None)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _known(self) -> InjectInstruction:
        from usersim.cases.injections import template_problem

        problem = template_problem(self.template, self.language, self.args)
        if problem:
            raise ValueError(problem)
        if self.field is not None and self.position != "field":
            raise ValueError(f"`field` is only read with position: field (got position: {self.position})")
        return self


class ToolIntercept(Strict):
    """Fault injection, exactly the seeds' `tool_intercept` JSON, plus latency / timeout."""

    type: Literal["tool_intercept"] = Field(default="tool_intercept", description="Always tool_intercept.")
    intercept_tool: str = Field(description="Tool whose result is replaced.")
    intercept_condition: InterceptCondition | None = Field(
        default=None, description="Only when this argument has this value."
    )
    intercept_on_call_number: int | None = Field(
        default=None, ge=1, description="Only on this call number (1-based) of the tool in the conversation."
    )
    inject_tool_result: InjectedResult | None = Field(
        default=None, description="The result to return instead of the real tool's."
    )
    inject_instruction: InjectInstruction | None = Field(
        default=None,
        description="Prompt injection: the real tool runs and this instruction text is inserted into its "
        "result (usersim/sandbox/injection.py).",
    )
    latency_s: float | None = Field(default=None, ge=0, description="Extra delay before the result.")
    timeout: bool = Field(default=False, description="The call times out (an error result after latency).")

    @model_validator(mode="after")
    def _one_result(self) -> ToolIntercept:
        if self.inject_tool_result is not None and self.inject_instruction is not None:
            raise ValueError("give inject_tool_result or inject_instruction, not both")
        return self


class MockResponse(Strict):
    """One answer of a case-defined mock tool."""

    when: dict[str, Any] = Field(
        default_factory=new_dict,
        description="Argument values that select this answer (all must match; strings compare trimmed and "
        "case-insensitively). Empty = the default answer.",
    )
    content: Any = Field(description="The result: text, or any JSON value (sent to the agent as JSON).")
    is_error: bool = Field(default=False, description="Whether this answer is an error result.")


class MockTool(Strict):
    """A tool defined by the case itself, for agents whose tools the sandbox does not simulate.
    A mock tool with a sandbox tool's name replaces that tool in this case."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$", description="Tool name the agent calls.")
    description: str = Field(description="Tool description shown to the agent.")
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the arguments (OpenAI tools format); `required` is enforced.",
    )
    responses: list[MockResponse] = Field(min_length=1, description="Answers, first match wins.")
    writes: bool = Field(
        default=False,
        description="Whether a call changes something outside the conversation (a booking, a payment, a "
        "message sent): `no_unauthorized_action` counts its calls as writes.",
    )


class ScoringSpec(Strict):
    """How the seed scores the case (评分方式)."""

    methods: list[ScoringMethod] = Field(description="auto / llm_judge / human, in the seed's order.")
    note: str | None = Field(
        default=None, description="The seed's own wording, e.g. 自动（检查工具调用类型）."
    )

    @field_validator("methods", mode="before")
    @classmethod
    def _aliases(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = [p.strip() for p in v.replace("＋", "+").split("+")]
        if not isinstance(v, list):
            return v  # pydantic reports the wrong type
        return [
            _SCORING_ALIASES.get(m.lower(), _SCORING_ALIASES.get(m, m)) if isinstance(m, str) else m
            for m in v
        ]

    @property
    def label(self) -> str:
        return "+".join(self.methods)


class Milestone(Strict):
    """A step of the task; `requires` makes the DAG (milestones judge)."""

    id: str = Field(description="Milestone id, unique in the case.")
    description: str = Field(default="", description="What reaching it means.")
    check: dict[str, Any] = Field(
        description="A rule check (same form as `judging.checks`) that marks it reached."
    )
    requires: list[str] = Field(
        default_factory=new_list, description="Milestones that must be reached before."
    )

    @field_validator("check")
    @classmethod
    def _one_key(cls, v: dict[str, Any]) -> dict[str, Any]:
        if len(v) != 1:
            raise ValueError(
                f"must be a one-key mapping {{check_type: params}}, got {sorted(map(str, v))[:8]}"
            )
        return v


class Criterion(Strict):
    """One criterion for the LLM judge, with its polarity: a requirement must hold; a failure is an
    event that must not happen (the seeds' Fail conditions). A plain string in YAML is a requirement."""

    text: str = Field(min_length=1, description="The criterion in the case's language.")
    polarity: Literal["requirement", "failure"] = Field(
        default="requirement",
        description="requirement: passes when it holds; failure: passes when the event did NOT happen.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, v: Any) -> Any:
        return {"text": v} if isinstance(v, str) else v


class Judging(Strict):
    """What only the judges see: the seed's expected behaviour, criteria and machine checks."""

    expected_behavior: list[str] = Field(default_factory=new_list, description="期望行为, one item a line.")
    pass_criteria: list[str] = Field(default_factory=new_list, description="判定标准 Pass conditions.")
    fail_criteria: list[str] = Field(default_factory=new_list, description="判定标准 Fail conditions.")
    scoring: ScoringSpec = Field(description="评分方式.")
    checks: list[dict[str, Any]] = Field(
        default_factory=new_list,
        description="Machine checks, each a one-key mapping {check_type: params}; see `usersim judges list`.",
    )
    rubric: list[Criterion] = Field(
        default_factory=new_list,
        description="Criteria for the LLM judge, each a string (a requirement) or {text, polarity}; "
        "defaults to the pass criteria.",
    )
    milestones: list[Milestone] = Field(
        default_factory=new_list, description="Milestone DAG with partial credit."
    )
    minefields: list[dict[str, Any]] = Field(
        default_factory=new_list, description="Rule checks that must never pass (any hit voids the score)."
    )
    human_review: list[str] = Field(
        default_factory=new_list, description="Criteria left to human review (人工)."
    )
    drift_threshold: int | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Minimum anchoring score (seed 003 scale 100/70/30/0) every assistant turn must keep; enables the drift judge.",
    )
    grading: GradingSpec | None = Field(
        default=None,
        description="Seed 003's graded score (conflict 100/80/40/0, implicit 100/0, reference and topic "
        "switch 100/80/60), decided by the case's `graded` check.",
    )

    @field_validator("checks", "minefields")
    @classmethod
    def _one_key(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, item in enumerate(v):
            if len(item) != 1:
                raise ValueError(
                    f"item {i} must be a one-key mapping {{check_type: params}}, got {sorted(map(str, item))[:8]}"
                )
        return v

    @model_validator(mode="after")
    def _graded(self) -> Judging:
        graded = sum(1 for c in self.checks if "graded" in c)
        if graded and self.grading is None:
            raise ValueError("judging.checks has a `graded` check but judging.grading (its scale) is missing")
        if self.grading is not None and graded != 1:
            raise ValueError(
                f"judging.grading needs exactly one `graded` check in judging.checks (found {graded})"
            )
        return self


class KeyInfo(Strict):
    """A piece of key information in a long-context case (seed 000)."""

    fact: str = Field(description="The key fact, e.g. 对海鲜过敏.")
    keywords: list[str] = Field(
        default_factory=new_list, description="Words that identify the fact (for filler checks)."
    )
    turn: int = Field(description="Index into input.history of the message that carries it.")
    position: Position | None = Field(
        default=None,
        description="This fact's own position when the case scatters facts (used when no position is "
        "requested); null = the length's position.",
    )


class GradientSpec(Strict):
    """Where the key information sits at one target length (seed 000's position table)."""

    position: Position = Field(description="beginning / middle / end.")
    turn_range: tuple[int, int] | None = Field(
        default=None, description="The seed's user-turn band, inclusive."
    )


class LongContextSpec(Strict):
    """How a C5 case expands to 4k/16k/32k tokens."""

    scenario: str = Field(description="Filler scenario key (e.g. japan_trip, laptop_shopping).")
    seed_length: LengthName = Field(default="32k", description="The length the seed describes (上下文长度).")
    lengths: dict[LengthName, GradientSpec] = Field(
        default_factory=new_dict, description="Per target length: where key information goes."
    )
    key_info: list[KeyInfo] = Field(
        default_factory=new_list, description="Key facts and the history turns carrying them."
    )


class SlaThreshold(Strict):
    """A business SLA for a decay curve (seed 003: "客服 Agent ≥ 80% @ 10 轮"): at `at_turn` turns
    the dimension's score must be at least `min_score`. Read by `usersim decay --sla`."""

    dimension: Literal["memory", "reference", "switch", "conflict", "drift"] = Field(
        description="The decay dimension: memory, reference, switch, conflict or drift."
    )
    min_score: float = Field(ge=0, le=1, description="Lowest acceptable score, 0-1 (0.8 = 80%).")
    at_turn: int = Field(ge=1, description="Conversation length (turns) the SLA is stated for.")
    scenario: str | None = Field(default=None, description="Whose SLA, e.g. 客服 Agent.")


class ShrinkInfo(Strict):
    """How a regression case was shrunk from its failing record (`usersim shrink`, `promote --shrink`)."""

    shrunk: str = Field(description="What was dropped, e.g. '9 turns → 3, 12 facts → 2'.")
    check: str = Field(description="The failing check the shrunk case still fails (judge and criterion).")
    against: str | None = Field(default=None, description="Agent SPEC the shrunk case still passes with.")
    sizes: dict[str, list[int]] = Field(
        default_factory=new_dict, description="Per dimension: [original size, shrunk size]."
    )
    runs_used: int = Field(ge=0, description="Conversations run by the search.")
    budget: int = Field(ge=1, description="The most runs the search was allowed.")
    complete: bool = Field(description="False: the budget ran out first; a smaller case may exist.")


class PromotedFrom(Strict):
    """Where a promoted regression case came from."""

    run_id: str = Field(description="Run the record belongs to.")
    record_id: str = Field(description="Record id in that run.")
    case_id: str = Field(description="The original case.")
    agent: str = Field(description="Agent SPEC that produced the transcript.")
    simulator: str | None = Field(default=None, description="Simulator SPEC (organic source).")
    status: str = Field(description="The record's status when promoted.")
    form: Literal["prefix", "strict"] = Field(
        default="prefix",
        description="prefix: the recorded user turns up to the failing turn are replayed, then the persona "
        "simulates on (organic); strict: a static case judging only the reply at the failing turn.",
    )
    failing_turn: int | None = Field(default=None, ge=1, description="First failing user turn (1-based).")
    failing: list[str] = Field(
        default_factory=new_list, description="The criteria that failed in the record (judge: reason)."
    )
    persona: str | None = Field(default=None, description="Persona variant id the record ran with.")
    seed: int | None = Field(
        default=None, description="The record's conversation seed; the simulator reuses it (pinned wording)."
    )
    shrink: ShrinkInfo | None = Field(
        default=None, description="Set when the case was shrunk (`usersim shrink`)."
    )


class Case(Strict):
    """One test case: a static replay or an organic (simulated-user) conversation."""

    schema_version: int = Field(default=CASE_SCHEMA_VERSION, description="Case file format version.")
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$", description="Unique id, e.g. B1-EI-01.")
    dimension: str = Field(description="Framework dimension: B1, C1, C2, C5, MT (seed 003) ...")
    category: str | None = Field(default=None, description="Sub-dimension code, e.g. EI, CL, IF.")
    category_name: str | None = Field(default=None, description="Sub-dimension name, e.g. 精确意图.")
    title: str = Field(description="Case title from the seed.")
    difficulty: Difficulty | None = Field(default=None, description="easy / medium / hard (简单/中等/困难).")
    mode: Literal["static", "organic"] = Field(default="static", description="static replay or organic.")
    context_type: str | None = Field(default=None, description="Seed 上下文类型: synthetic / organic / ...")
    version: str = Field(default="1", description="Version of this case's content.")
    source: str | None = Field(default=None, description="Seed file the case comes from.")
    tags: list[str] = Field(default_factory=new_list, description="Free tags, e.g. red_line, multimodal.")
    steps: int | None = Field(
        default=None,
        ge=1,
        description="Task steps (seed 001 复杂度衰减: C2-CD 2/5/8/10); summary.json's complexity curve "
        "plots success rate against it.",
    )

    # --- what the agent / simulated user see -------------------------------------------------
    input: CaseInput = Field(default_factory=CaseInput, description="History and current message.")
    context: CaseContext = Field(default_factory=CaseContext, description="Date, memory, images.")
    persona: str | None = Field(default=None, description="Persona id (organic), from personas/.")
    persona_overrides: dict[str, Any] = Field(
        default_factory=new_dict, description="Persona fields to override."
    )
    goal: str | None = Field(default=None, description="Task goal the simulated user pursues (任务目标).")
    max_turns: int | None = Field(default=None, ge=1, description="Maximum user turns (organic).")
    skills: SkillsConfig = Field(default_factory=SkillsConfig, description="Skill configuration.")
    tools: list[str] | None = Field(default=None, description="Tools available; null = the default tool set.")
    tool_intercepts: list[ToolIntercept] = Field(default_factory=new_list, description="Fault injection.")
    mock_tools: list[MockTool] = Field(
        default_factory=new_list,
        description="Tools defined by this case (always available in it, intercepts apply).",
    )
    long_context: LongContextSpec | None = Field(default=None, description="Long-context expansion (C5).")
    environment: Environment | None = Field(
        default=None,
        description="A stateful domain: tables of records and tools that read/write them, fresh per "
        "conversation (judged by `final_state`). Usually shared through a suite file (`include:`).",
    )
    language: Literal["zh", "en"] | None = Field(
        default=None,
        description="Language of the agent-facing context (prompt headers); null = detected from the case text.",
    )
    system_prompt: str | None = Field(
        default=None,
        description="The agent's system prompt template (replaces the built-in one). Placeholders: "
        "{current_date} {weekday} {policy} {memory} {images} {skills}; a missing {policy} is appended.",
    )
    policy: str | None = Field(
        default=None,
        description="Domain policy the agent must follow, given in its system prompt; text, or a .md/.txt "
        "file relative to the case file.",
    )

    # --- what only the judges see ------------------------------------------------------------
    judging: Judging = Field(description="Expected behaviour, criteria, scoring and checks.")
    notes: str | None = Field(default=None, description="备注 from the seed.")
    promoted_from: PromotedFrom | None = Field(
        default=None, description="Set on regression cases promoted from a run record (`usersim promote`)."
    )
    sla: list[SlaThreshold] = Field(
        default_factory=new_list,
        description="Business SLAs for the decay curves (`usersim decay --sla FILE`); usually shared "
        "through a suite file (`include:`), e.g. [{dimension: memory, min_score: 0.8, at_turn: 10}].",
    )
    reference_transcript: list[Message] = Field(
        default_factory=new_list,
        description="The recorded conversation a promoted case came from; replays are compared to it (divergence).",
    )
    _file: Path | None = PrivateAttr(default=None)  # the file it was loaded from (load_case sets it)

    @field_validator("reference_transcript", mode="before")
    @classmethod
    def _openai_transcript(cls, v: Any) -> Any:
        return normalize_history(v)  # the same two message shapes as input.history

    def __eq__(self, other: object) -> bool:  # the same case content, wherever it was loaded from
        if type(other) is not type(self):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable model: unhashable, as pydantic's default

    @property
    def file(self) -> Path | None:
        """The case file this case was loaded from (None when built in code); `persona:` paths and
        persona folders are found relative to it."""
        return self._file

    @field_validator("difficulty", mode="before")
    @classmethod
    def _difficulty_alias(cls, v: Any) -> Any:
        return _DIFFICULTY_ALIASES.get(v, v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _mode_fields(self) -> Case:
        if self.mode == "organic":
            if not self.persona:
                raise ValueError("organic cases need `persona` (a persona id from personas/)")
            if not self.max_turns:
                raise ValueError("organic cases need `max_turns`")
            if self.input.script and self.input.message is None:
                raise ValueError(
                    "organic cases replay `input.script` after `input.message`; set `input.message`"
                )
        elif not (self.input.message or self.input.script or self.input.history):
            raise ValueError("static cases need `input.message`, `input.script` or `input.history`")
        return self

    @model_validator(mode="after")
    def _history_state(self) -> Case:
        """The writes of the recorded history are applied to this case's environment (a copy of
        its own, so a shared environment object is never changed for another case)."""
        env = self.environment
        if env is None or not any(m.tool_calls for m in self.input.history):
            return self
        try:
            writes = history_writes(env, self.input.history)
        except ValueError as exc:
            raise ValueError(f"input.history {exc}") from None
        if writes:
            self.environment = env = env.model_copy()
            env._prelude = writes
        return self

    @field_validator("policy")
    @classmethod
    def _policy_file(cls, v: str | None, info: Any) -> str | None:
        if v and "\n" not in v and v.strip().endswith((".md", ".txt")):
            from pathlib import Path

            path = Path(v.strip())
            path = path if path.is_absolute() else Path((info.context or {}).get("case_dir") or ".") / path
            if not path.is_file():
                raise ValueError(f"policy file not found: {path}")
            from usersim.core.yamlfile import read_text_file

            return read_text_file(path)  # not UTF-8, too big: a ValueError naming the file
        return v

    @property
    def own_tool_names(self) -> list[str]:
        """Tools the case defines itself: mock tools and environment tools."""
        names = [t.name for t in self.mock_tools]
        if self.environment is not None:
            names += [n for n in build_tools(self.environment) if n not in names]
        return names

    @property
    def scoring_label(self) -> str:
        return self.judging.scoring.label
