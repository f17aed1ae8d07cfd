"""Golden files for the language layer's segmentation and polarity (tests/lang/golden/<code>_polarity.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.lang.polarity import Reader
from usersim.lang.segment import clauses

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*_polarity.yaml"))


def _load(kind: str) -> list[tuple[str, dict]]:
    out = []
    for path in FILES:
        for i, entry in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))[kind]):
            out.append((f"{path.stem}#{i}", entry))
    return out


def test_every_language_has_a_golden_file():
    assert {p.stem.split("_")[0] for p in FILES} >= {"zh", "en"}


@pytest.mark.parametrize(("name", "entry"), _load("segmentation"), ids=[n for n, _ in _load("segmentation")])
def test_segmentation(name, entry):
    text = entry["text"]
    if "clauses" in entry:
        assert [c.text for c in clauses(text)] == entry["clauses"], name
    if "items" in entry:
        got = [[i.kind, i.label.text] for i in Reader(text).layout.items]
        assert got == [list(x) for x in entry["items"]], name


@pytest.mark.parametrize(("name", "entry"), _load("polarity"), ids=[n for n, _ in _load("polarity")])
def test_polarity(name, entry):
    text, mention = entry["text"], entry["mention"]
    at = -1
    for _ in range(entry.get("nth", 0) + 1):
        at = text.index(mention, at + 1)
    reading = Reader(text).at(at, at + len(mention))
    assert (reading.polarity, reading.confidence) == (entry["polarity"], entry["confidence"]), (
        name,
        reading.describe(),
    )
    if "cue" in entry:
        assert reading.cues and reading.cues[0].entry.startswith(entry["cue"]), (name, reading.describe())
        assert (
            reading.cues[0].text == text[reading.cues[0].start : reading.cues[0].end]
            or reading.cues[0].text.strip()
        )
    if entry["confidence"] != "none":
        assert reading.cues, (name, "a reading that is not neutral names its cue")
