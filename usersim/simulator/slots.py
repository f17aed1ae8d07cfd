"""Which user facts an agent reply asks for (slot detection, Chinese and English).

The rule simulator answers only what was asked (reveal_policy when_asked), so it needs to know
which slots a question is about: "你打算玩几天？" -> duration, "What's your budget?" -> budget.
Any persona fact is recognised too (FactMatcher): by its key, its aliases, its description and a
small multilingual paraphrase table of common concepts ("Could you provide your user ID?",
"您怎么称呼" ...), and so are the persona's unknown_info topics.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from usersim.lang.acts import agent_acts
from usersim.lang.resources import language_codes, resources
from usersim.personas.schema import Persona
from usersim.simulator import grounding, signals
from usersim.simulator.signals import unknown_topics


def _merged(key: str) -> dict[str, str]:
    """slot -> one regex: the `key` mapping of every language's acts.yaml, alternatives joined."""
    out: dict[str, list[str]] = {}
    for code in language_codes():
        for slot, pattern in (resources(code).get("acts", key, {}) or {}).items():
            out.setdefault(str(slot), []).append(str(pattern).removeprefix("re:"))
    return {slot: "|".join(parts) for slot, parts in out.items()}


def _listed(key: str) -> list[str]:
    return [str(w) for code in language_codes() for w in resources(code).get("acts", key, ()) or ()]


@dataclass(frozen=True, eq=False)  # hashed by identity: one object per resource generation
class Tables:
    """The language tables slot detection reads (acts.yaml of every language, merged), built for
    the resources in force: a resource folder added later (lang.add_resource_dir, a domain's
    lang/) reaches the next call."""

    slot_patterns: dict[str, str]  # slot -> one regex over an asking sentence (`builtin_slots`)
    compiled: dict[str, re.Pattern[str]]
    concepts: dict[str, tuple[set[str], str]]  # `fact_concepts`: concept -> (key words, question regex)
    concept_re: dict[str, re.Pattern[str]]
    generic_words: set[str]  # `fact_stopwords`
    info_request: re.Pattern[str] | None  # `info_requests`
    word_synonyms: dict[str, str]  # `word_synonyms`


_HELD: list[tuple[tuple[object, ...], Tables]] = []


def tables() -> Tables:
    """The tables for the resources in force (rebuilt when lang.resources is rebuilt)."""
    key = tuple(resources(code) for code in language_codes())
    if _HELD and len(_HELD[0][0]) == len(key) and all(a is b for a, b in zip(_HELD[0][0], key, strict=True)):
        return _HELD[0][1]
    patterns = _merged("builtin_slots")
    concepts = _fact_concepts()
    info = [p.removeprefix("re:") for p in _listed("info_requests")]
    built = Tables(
        slot_patterns=patterns,
        compiled={slot: re.compile(p, re.IGNORECASE) for slot, p in patterns.items()},
        concepts=concepts,
        concept_re={c: re.compile(p, re.IGNORECASE) for c, (_w, p) in concepts.items()},
        generic_words=set(_listed("fact_stopwords")),
        info_request=re.compile("|".join(info), re.IGNORECASE) if info else None,
        word_synonyms={
            str(k): str(v)
            for code in language_codes()
            for k, v in (resources(code).get("acts", "word_synonyms", {}) or {}).items()
        },
    )
    _HELD[:] = [(key, built)]
    return built


def slot_patterns() -> dict[str, str]:
    """slot -> regex over one asking sentence (acts.yaml `builtin_slots`, all languages)."""
    return tables().slot_patterns


def known_slots() -> list[str]:
    """The built-in slot names, sorted."""
    return sorted(tables().slot_patterns)


_GENERIC = {"preferences"}
_WORD = re.compile(r"[a-z][a-z0-9]+")


def asking_sentences(text: str) -> list[str]:
    """Sentences of an agent reply that ask the user something (read by lang.acts)."""
    return signals.asking_sentences(text)


def asked_slots(text: str) -> list[str]:
    """Slots the agent asks about, in the order it asks them (each once)."""
    found: list[tuple[int, int, str]] = []
    for n, sentence in enumerate(asking_sentences(text)):
        hits = [(n, m.start(), slot) for slot, p in tables().compiled.items() if (m := p.search(sentence))]
        # "对品牌有偏好吗" is about the brand: a generic slot yields to a specific one in its sentence
        if any(slot not in _GENERIC for _n, _p, slot in hits):
            hits = [h for h in hits if h[2] not in _GENERIC]
        found.extend(hits)
    ordered: list[str] = []
    for _n, _pos, slot in sorted(found):
        if slot not in ordered:
            ordered.append(slot)
    return ordered


def asks_anything(text: str) -> bool:
    """Whether the reply asks the user anything at all (even about a slot we cannot name)."""
    return bool(asking_sentences(text))


def asks_confirmation(text: str) -> bool:
    """Whether the reply asks the user's go-ahead ("需要我帮你预订吗？", "Is it OK if I ...?"): a
    confirmation request of lang.acts."""
    return signals.asks_confirmation(text)


def _fact_concepts() -> dict[str, tuple[set[str], str]]:
    """concept -> (words of a fact's key that name it, a question pattern): acts.yaml
    `fact_concepts` of every language merged. A paraphrase table, not a closed list: any other fact
    is still recognised by its own key, aliases and description (and by meaning: grounding.py)."""
    out: dict[str, tuple[set[str], list[str]]] = {}
    for code in language_codes():
        for concept, spec in (resources(code).get("acts", "fact_concepts", {}) or {}).items():
            words, asks = out.setdefault(str(concept), (set(), []))
            words.update(str(w) for w in spec.get("keys", ()) or ())
            if spec.get("asks"):
                asks.append(str(spec["asks"]).removeprefix("re:"))
    return {c: (w, "|".join(a)) for c, (w, a) in out.items()}


def concept_of(key: str, extra: list[str] | tuple[str, ...] = ()) -> str | None:
    """The `fact_concepts` entry a fact key (or its aliases/description) names, e.g. zip_code -> zip."""
    return _concept_of(key, tuple(extra), tables())


@functools.lru_cache(maxsize=4096)
def _concept_of(key: str, extra: tuple[str, ...], held: Tables) -> str | None:
    """concept_of, remembered per tables (a persona's facts are matched on every turn)."""
    names = [key.lower(), *(e.lower() for e in extra)]
    for concept, (words, _p) in held.concepts.items():
        for n in names:
            if n in words or n.replace("-", "_").replace(" ", "_") in words:
                return concept
            if set(_WORD.findall(n.replace("_", " "))) & {w for w in words if w.isascii()}:
                return concept
            if any(not w.isascii() and w in n for w in words):
                return concept
    return None


def _stem(word: str) -> str:
    """A crude stem: cancel / cancellation / cancelled -> cancel, members -> member."""
    word = tables().word_synonyms.get(word, word)
    word = word[:-1] if len(word) > 4 and word.endswith("s") else word
    return word[:6]


def _content_words(text: str) -> set[str]:
    generic = tables().generic_words
    words = _WORD.findall(text.lower().replace("_", " "))
    return {_stem(w) for w in words if len(w) >= 3 and w not in generic} - generic


def _phrase_re(phrase: str) -> re.Pattern[str] | None:
    phrase = phrase.strip().lower().replace("_", " ")
    if not phrase:
        return None
    body = r"[\s_-]?".join(re.escape(p) for p in phrase.split())
    if phrase.isascii():
        return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])", re.IGNORECASE)
    return re.compile(body, re.IGNORECASE)


@dataclass
class _Target:
    """One thing an agent may ask about: a known fact, a built-in slot or an unknown_info topic."""

    key: str
    strong: list[re.Pattern[str]] = field(default_factory=list)  # a hit names the target
    words: set[str] = field(default_factory=set)  # content words: a hit is a weaker cue
    concepts: set[str] = field(default_factory=set)  # lang.concepts it means (employee_id -> id)
    own: set[str] = field(default_factory=set)  # tokens of its own words (key, label, aliases)
    undecided: bool = False  # a built-in slot the persona has no value for

    def score(self, sentence: str) -> int:
        if any(p.search(sentence) for p in self.strong):
            return 2
        hits = self.words & _content_words(sentence)
        return 1 if hits and len(hits) >= min(2, len(self.words)) else 0


UNKNOWN_PREFIX = "unknown:"
SAID_PREFIX = "said:"  # the user's own earlier words answer it: said:<the clause>


class FactMatcher:
    """Which of a persona's facts (and unknown topics) an agent reply asks about, in order.

    Yields fact keys, built-in slots the persona's domain uses, "name", `unknown:<topic>` for an
    unknown_info topic, and `unknown:` for a request for information the persona does not have.
    A matcher never changes once built (`asked` only reads it): `matcher_for` shares one per persona.
    """

    def __init__(self, persona: Persona) -> None:
        self.targets: list[_Target] = []
        keys = []
        for fact in persona.known_info:
            if fact.slot not in keys:
                keys.append(fact.slot)
        by_key: dict[str, list] = {}
        for fact in persona.known_info:
            by_key.setdefault(fact.slot, []).append(fact)
        held = tables()
        travel = any(k in held.slot_patterns and k != "name" for k in keys)
        for key in keys:
            facts = by_key[key]
            aliases = [a for f in facts for a in f.aliases]
            descriptions = [f.description for f in facts if f.description]
            labels = [f.label for f in facts if f.label]
            t = _Target(key)
            if key in held.compiled:
                t.strong.append(held.compiled[key])
            concept = concept_of(key, labels + aliases)
            if concept:
                t.strong.append(held.concept_re[concept])
            for phrase in [key, *labels, *aliases]:
                if (r := _phrase_re(phrase)) is not None and len(phrase.strip()) >= 2:
                    t.strong.append(r)
            for d in descriptions:
                if not d.isascii() and len(d) <= 8 and (r := _phrase_re(d)):
                    t.strong.append(r)
            t.words = _content_words(" ".join([key, *labels, *descriptions]))
            t.concepts = grounding.fact_concepts(key, labels + aliases + descriptions, facts[0].value)
            t.own = grounding.tokens(" ".join([key.replace("_", " "), *labels, *aliases]))
            self.targets.append(t)
        if "name" not in keys:
            self.targets.append(_Target("name", strong=[held.compiled["name"]], concepts={"name"}))
        if travel:  # undecided travel/shopping slots still get an honest "not decided yet"
            for slot, pattern in held.compiled.items():
                if slot not in keys and slot != "name":
                    self.targets.append(_Target(slot, strong=[pattern], concepts={slot}, undecided=True))
        for topic in unknown_topics(persona):
            t = _Target(UNKNOWN_PREFIX + topic)
            if (r := _phrase_re(topic)) is not None:
                t.strong.append(r)
            t.words = _content_words(topic)
            t.concepts = grounding.fact_concepts(topic, [])
            t.own = grounding.tokens(topic)
            self.targets.append(t)

    def open_question(self, text: str) -> bool:
        """Whether the reply asks what else the user wants ("Anything else?", "还有什么需要吗？")."""
        return any(grounding.open_question(s) for s in asking_sentences(text))

    def _by_concept(self, sentence: str, concept: str) -> _Target | None:
        """The target a concept the sentence asks for grounds to: one repeating its own words first,
        then the most specific (fewest concepts), then the first listed."""
        low = grounding.tokens(sentence)
        scored = [
            (-len(t.own & low), len(t.concepts), i, t)
            for i, t in enumerate(self.targets)
            if concept in t.concepts and not t.undecided
        ]
        return min(scored, key=lambda s: s[:3])[3] if scored else None

    def asked(self, text: str, said: list[str] | tuple[str, ...] = ()) -> list[str]:
        """The targets the reply asks about, in the order it asks them (each once). `said`: the
        user's own earlier messages; a question about something said there (and not a fact) is
        answered from it (`said:<clause>`)."""
        found: list[tuple[int, int, str]] = []
        for n, act in enumerate(a for a in agent_acts(text or "") if a.asking):
            sentence = act.text
            if grounding.open_question(sentence):
                continue  # "What else can I do for you?" asks for the goal, not a slot
            # a go-ahead question names what it proposes, it does not ask for it
            info = act.kind in ("request", "clarify")
            focus, mentioned = grounding.asked_hits(sentence) if info else ([], [])
            grounded = [(h.cue.start, t.key) for h in focus if (t := self._by_concept(sentence, h.concept))]
            plain = grounding.blank_spans(sentence, mentioned)  # nothing counts inside a modifier
            scored = [(t.score(plain), i, t.key) for i, t in enumerate(self.targets)]
            scored = [s for s in scored if s[0]]
            if grounded or any(sc == 2 for sc, _i, _k in scored):
                scored = [s for s in scored if s[0] == 2]  # a named target beats loose word overlaps
            keys = [k for _sc, _i, k in scored]
            specific = [k for k in keys if k not in _GENERIC]
            if specific:  # "对品牌有偏好吗" is about the brand, not the generic preferences
                keys = specific
            undecided = {t.key for t in self.targets if t.undecided}
            if info and said and all(k in undecided for k in keys) and not grounded:
                if (clause := grounding.recall(sentence, said)) is not None:
                    keys, scored = [SAID_PREFIX + clause], []
            info_request = tables().info_request
            if not keys and not grounded and info_request is not None and info_request.search(sentence):
                keys = [UNKNOWN_PREFIX]
            for pos, k in grounded:
                found.append((n, pos, k))
            for k in keys:
                m = next((p.search(plain) for t in self.targets if t.key == k for p in t.strong), None)
                found.append((n, m.start() if m else 0, k))
        ordered: list[str] = []
        for _n, _pos, key in sorted(found):
            if key not in ordered:
                ordered.append(key)
        return ordered


class Matchers:
    """A bounded cache of FactMatchers, one per persona content, language tables in force and
    matcher class (a matcher never changes once built; building one costs about as much as reading a
    whole conversation). Keyed by the persona's JSON, so a changed or varied persona gets its own;
    the oldest entry goes first. The judges and the simulator each hold their own."""

    def __init__(self, held: int) -> None:
        self.held = held
        self._built: dict[tuple[str, Tables, type[FactMatcher]], FactMatcher] = {}

    def get(self, persona: Persona, cls: type[FactMatcher]) -> FactMatcher:
        key = (persona.model_dump_json(), tables(), cls)
        hit = self._built.get(key)
        if hit is None:
            hit = cls(persona)
            if len(self._built) >= self.held:
                del self._built[next(iter(self._built))]
            self._built[key] = hit
        return hit


# personas whose matchers the judges keep (a run has a few per case; a sweep, its variants)
_JUDGES_MATCHERS = Matchers(256)


def matcher_for(persona: Persona) -> FactMatcher:
    """The judges' FactMatcher of `persona` for the language tables in force, built once per persona
    content (the fidelity judge reads every conversation of a case with the same persona), of the
    module's FactMatcher class at the time of the call (a test's own class gets its own)."""
    return _JUDGES_MATCHERS.get(persona, FactMatcher)
