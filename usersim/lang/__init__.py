"""The language layer: everything usersim knows about how people and agents say things.

Rule checks, fidelity checks, the rule simulator and the reference agent read text through this
one layer, never through tables of their own. The knowledge is data: one folder of YAML files per
language (`usersim/lang/data/<code>/<topic>.yaml`), extended without code by the user's own resource
folders (`USERSIM_LANG_PATH`, or a `lang/` folder inside a domain folder passed to `usersim run`).
A language is a plugin: an entry point in the group `usersim.languages` names a `Language` (its
code and data folder); zh and en are built in the same way.

Modules (each a small typed API over the resources; see docs/design.md "Language layer"):
- `resources` — languages, their resource files, user extensions, cues naming the entry that fired;
- `segment` — a reply cut into sentences and clauses, its Markdown reading (markup blanked);
- `layout` — Markdown items: lists (numbered, bulleted, emoji, bold, headings), table rows or
  columns, ✅/❌ verdicts, lead-in lines and the items they govern;
- `polarity` — how a mention stands (recommended, excluded, rejected, negated, asked about,
  hypothetical, neutral) with its cue and confidence (`cues` matches, `item_polarity` reads items);
- `lexicon` — synonym sets of common domain concepts (驾车 = 开车 = driving ...);
- `quantity` — numbers, money, units and durations, normalised;
- `dates` / `calendar` — dates, weekdays and the ONE holiday calendar;
- `acts` — the dialogue acts of a turn (request, confirmation request, offer, inform, clarify, close).
"""

from usersim.lang.resources import Cue, Language, Resources, detect, language_codes, resources

__all__ = ["Cue", "Language", "Resources", "detect", "language_codes", "resources"]
