"""`usersim import FILE... --to DIR`: production conversations (OpenAI chat JSONL, LangSmith
exports, LangGraph checkpointer threads, OTLP GenAI traces) as static cases, and with --persona a drafted persona and an organic
case that runs it. Every written file is validated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

FORMATS = ["openai-jsonl", "langsmith", "langgraph", "otel"]
ENV_STATE = "_environment_state.yaml"  # a leading _: not a case for `usersim validate DIR`


def _write(path: Path, data: dict[str, Any], header: str, force: bool) -> None:
    if path.exists() and not force:
        raise click.ClickException(f"{path} already exists; pass --force to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    body = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    path.write_text(comment + body, encoding="utf-8")


def _problems(cases: list[Path], personas: list[Path], root: Path) -> list[str]:
    from usersim.cases.loader import load_case
    from usersim.core.yamlfile import FileProblems
    from usersim.personas.loader import load_persona_file, persona_problems

    out: list[str] = []
    for p in personas:
        try:
            load_persona_file(p)
        except FileProblems as exc:
            out += [str(x) for x in exc.problems]
    for p in cases:
        try:
            case = load_case(p, root)
        except FileProblems as exc:
            out += [str(x) for x in exc.problems]
            continue
        out += [str(x) for x in persona_problems(case)]
    return out


@click.command("import")
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--to",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the cases into.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="The files' format (default: guessed from the content).",
)
@click.option(
    "--at",
    type=click.Choice(["last", "each"]),
    default="last",
    show_default=True,
    help="Draft a case at the last user turn, or at each.",
)
@click.option(
    "--persona",
    "with_persona",
    is_flag=True,
    help="Also draft a persona from the user's side and an organic case running it.",
)
@click.option(
    "--redact-pii",
    is_flag=True,
    help="Replace names, emails, phone numbers, card numbers, IBANs and street addresses by "
    "placeholders (<EMAIL_1>, the same value the same placeholder) before anything is drafted.",
)
@click.option(
    "--pii-surrogates",
    is_flag=True,
    help="With --redact-pii's detection, put a fictional value of the same shape in place of each "
    "personal value (user1@example.com, a Luhn-valid test card, '1 Sample Street, Springfield'), so an "
    "agent that checks what it is told still acts on the replayed conversation. Implies --redact-pii.",
)
@click.option(
    "--environment",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A case or suite file whose environment (state and tools), policy and context the cases use: "
    "the recording's calls to its tools run against it (history writes applied, final_state drafted).",
)
@click.option("--dimension", default="IMPORT", show_default=True, help="The cases' dimension.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def importer(
    files: tuple[Path, ...],
    out_dir: Path,
    fmt: str | None,
    at: str,
    with_persona: bool,
    redact_pii: bool,
    pii_surrogates: bool,
    environment: Path | None,
    dimension: str,
    force: bool,
) -> None:
    """Turn recorded conversations in FILE... into static cases under --to DIR (one per chosen user
    turn: the history before it replayed, the recorded tool results as mock tools, checks drafted
    from what the agent did and tagged `draft` for review)."""
    from usersim.cases.importers.conversation import ImportFormatError
    from usersim.cases.importers.drafts import DraftOptions, draft_cases, draft_organic
    from usersim.cases.importers.env_source import EnvSource
    from usersim.cases.importers.formats import read_conversations
    from usersim.cases.importers.redact import named_source, redact_conversations
    from usersim.cases.relocate import relative_to
    from usersim.lang.pii import Redactor
    from usersim.personas.draft import draft_note, draft_persona

    redactor = Redactor(surrogates=pii_surrogates) if redact_pii or pii_surrogates else None
    opts = DraftOptions(
        out_dir=out_dir, at=at, dimension=dimension, environment=environment, redactor=redactor
    )  # type: ignore[arg-type]
    try:
        # a drafted file names its input by the file name only, never the path it was read from
        convs = [named_source(c, f) for f in files for c in read_conversations(f, fmt)]
        source = EnvSource.read(environment, out_dir) if environment else None
    except ImportFormatError as exc:
        # the input cannot be read as asked (a usage error, like a malformed case): exit 2
        click.echo(f"Error: {exc}", err=True)
        raise SystemExit(2) from None
    if redactor is not None:  # once, before anything is drafted from the conversations
        convs = redact_conversations(convs, redactor)
        if source is not None and environment is not None:
            # the environment's rows get the same placeholders, written beside the cases
            source, state = source.redacted(redactor, ENV_STATE)
            if state:
                note = (
                    f"The state of {environment.name}'s environment, personal data replaced as in the cases."
                )
                _write(out_dir / ENV_STATE, state, f"Drafted by `usersim import`. {note}", force)
                click.echo(f"{out_dir / ENV_STATE}  environment state, redacted")
    cases: list[Path] = []
    personas: list[Path] = []
    for conv in convs:
        header = f"Drafted by `usersim import` from {conv.source}. Review the checks (tag: draft)."
        for data in draft_cases(conv, opts, source):
            path = out_dir / f"{data['id']}.yaml"
            _write(path, data, header, force)
            cases.append(path)
            click.echo(
                f"{path}  static, {len(data['input'].get('history', []))} history message(s), "
                f"{len(data['judging'].get('checks', []))} check(s), {len(data.get('mock_tools', []))} mock tool(s)"
            )
        if with_persona:
            from usersim.cases.importers.drafts import clean

            pdata = clean(draft_persona(conv), opts)
            ppath = out_dir / "personas" / f"{pdata['id']}.yaml"
            _write(ppath, pdata, f"{header}\n{draft_note(conv)}", force)
            personas.append(ppath)
            odata = draft_organic(
                conv, opts, relative_to(ppath, out_dir), source, opening=pdata.get("opening_message")
            )
            opath = out_dir / f"{odata['id']}.yaml"
            _write(opath, odata, header, force)
            cases.append(opath)
            click.echo(
                f"{ppath}  persona draft: {len(pdata.get('known_info', []))} known fact(s), "
                f"{len(pdata.get('unknown_info', []))} unknown candidate(s)"
            )
            click.echo(
                f"{opath}  organic, persona {pdata['id']}, {len(odata['judging'].get('checks', []))} check(s)"
            )
    if redactor is not None and redactor.counts():
        counts = sorted(redactor.counts().items())
        click.echo("redacted: " + ", ".join(f"{n} {kind} value(s)" for kind, n in counts))
    problems = _problems(cases, personas, out_dir)
    for p in problems:
        click.echo(p, err=True)
    click.echo(
        f"{len(cases)} case(s), {len(personas)} persona(s) from {len(convs)} conversation(s) -> {out_dir}; "
        f"{'all valid' if not problems else f'{len(problems)} problem(s)'}"
    )
    if problems:
        raise SystemExit(2)
