"""What one episode's research holds, by concern: the pages it has seen and read, the searches it
has run, the values it noted, what it wants next (its agenda), the sources it weighed against
each other, and what it will say. `oracle.Research` composes them; a compaction (`state.forget`)
cuts each to what the research notes carry, through their own `forget`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .narrator import Event, Narrator
from .reading import Page
from .sources import ListReader


@dataclass(eq=False)
class PagesRead:
    """The pages the research has seen (addresses its observations showed) and read."""

    seen: set[str] = field(default_factory=set)  # addresses an observation showed (only those are opened)
    read: dict[str, Page] = field(default_factory=dict)
    # an archived snapshot or a copy, when the live page never loaded
    fallback: dict[str, Page] = field(default_factory=dict)
    tries: Counter = field(default_factory=Counter)
    failed: set[str] = field(default_factory=set)
    purpose_of: dict[str, str] = field(default_factory=dict)  # what a page was last opened for (list, check, row, ...)
    # (article URL, its text's length) -> the profile or official site it links
    own: dict[tuple, list[str]] = field(default_factory=dict)
    # a profile or site an article sent the research to -> its entity
    beside_name: dict[str, str] = field(default_factory=dict)
    # article URL -> the profile an attribute it leaves out was read on (the state names that
    # profile with the entity's name and the value, so the article need not be opened again)
    profile_of: dict[str, str] = field(default_factory=dict)
    # (article URL, attribute key) the article was read without: a note that names the profile
    # keeps it, so after a compaction the research goes to the profile, not back to the article
    off_article: set[tuple[str, tuple]] = field(default_factory=set)
    # entity name (normalised) -> article URL, from links and results
    name_url: dict[str, str] = field(default_factory=dict)
    link_names: dict[str, str] = field(default_factory=dict)  # URL -> the name its links or results gave it
    full_lists: dict[str, ListReader] = field(default_factory=dict)
    forgotten: set[str] = field(default_factory=set)  # addresses known before a compaction that its state did not carry
    state_misses: int = 0  # times it needed one of those
    set_aside: set[str] = field(default_factory=set)  # older duplicates it has said it will not use

    def forget(self, urls: set[str]) -> None:
        """Keep only the addresses a note carries (`urls`): every page read before is dropped."""
        self.forgotten |= self.seen - urls
        self.seen = set(urls)
        self.read.clear()
        self.fallback.clear()
        self.name_url = {k: u for k, u in self.name_url.items() if u in urls}
        self.profile_of = {a: p for a, p in self.profile_of.items() if p in urls}
        self.off_article = {(a, k) for a, k in self.off_article if a in self.profile_of}
        self.link_names = {u: n for u, n in self.link_names.items() if u in urls}


@dataclass(eq=False)
class SearchesRun:
    """The searches the research has run and the snippets their results showed."""

    results: dict[str, list] = field(default_factory=dict)  # query -> results
    search_tries: Counter = field(default_factory=Counter)
    searched_names: set[str] = field(default_factory=set)
    snippets: dict[str, list[str]] = field(default_factory=dict)  # URL -> the snippets its search results showed
    fresh_snippets: set[str] = field(default_factory=set)  # URLs whose results came in the last search
    snippet_read: set[tuple] = field(default_factory=set)  # (url, key) of the values snippets gave

    def forget(self) -> None:
        """Drop every result: a search that worked may be run again."""
        for key in [k for k in self.search_tries if k in self.results]:
            del self.search_tries[key]
        self.results.clear()
        self.snippets.clear()


@dataclass(eq=False)
class ValuesRead:
    """What pages gave: the research's notes by page, the values each label took, the counts."""

    memo: dict[tuple, tuple] = field(default_factory=dict)  # (page url, what) -> (label, what the page gave)
    vocab: dict[str, set[str]] = field(default_factory=dict)  # per label: the values pages read gave it
    counted: dict[tuple, int] = field(default_factory=dict)  # (entity's page, list label, current) -> how many it links
    # values read from snippets and pages, cross-checks of rejected candidates
    stats: Counter = field(default_factory=Counter)
    read_from: str | None = None  # the page the value being read came from
    from_snippet: bool = False  # the value just read came from a snippet, not the page
    notebook: object = None  # what the notes written so far carry (`state.Noted`)
    notes_by_page: dict = field(default_factory=dict)  # URL -> the values the notes give for it (`state.write_state`)


@dataclass(eq=False)
class Agenda:
    """What the research wants next and why: pages and searches, what each is for, and how it
    spends a turn's calls (searches ahead of a label, every slot once it goes round in circles)."""

    wants: dict[str, tuple] = field(default_factory=dict)  # URL -> purpose, in the order the research needs them
    rereads: set[str] = field(default_factory=set)  # list pages wanted again for the addresses a note left out
    search_wants: dict[str, str] = field(default_factory=dict)  # query -> purpose
    asking: list[tuple] = field(default_factory=list)  # pages and searches the evaluation under way asked for
    why: tuple[str, str] = ("entity", "")  # what pages wanted now are for (check, hop, row, linked, entity)
    figure_need: dict[str, str] = field(default_factory=dict)  # URL -> a date or figure label its page is wanted for
    other_need: set[str] = field(default_factory=set)  # URLs wanted for anything else (a snippet cannot stand in)
    deciding: set[str] = field(default_factory=set)  # URLs a condition's date, figure or value is wanted from
    asking_figure: str | None = None  # the figure label the page being asked for is for
    # a search ahead -> (the candidate's article, its name)
    verifying: dict[str, tuple[str, str]] = field(default_factory=dict)
    # pages that failed last turn: (move, url, slots)
    trouble: list[tuple[str, str, dict]] = field(default_factory=list)
    turn_out: bool = False
    pressed: bool = False  # a research state came round again: every slot of a turn from now on
    # names searched ahead with a label, and values the snippets gave for it: a label the snippets
    # seldom state is no longer searched ahead (its pages are opened straight away)
    ahead_tried: Counter = field(default_factory=Counter)
    ahead_hit: Counter = field(default_factory=Counter)
    on_article: Counter = field(default_factory=Counter)  # label -> articles read that state it
    off_count: Counter = field(default_factory=Counter)  # label -> articles read that leave it to a profile
    calls_made: Counter = field(default_factory=Counter)
    turns_taken: int = 0

    def forget(self) -> None:
        """Nothing wanted survives a note: what the research needs next is decided from the notes."""
        self.verifying.clear()
        self.wants.clear()
        self.search_wants.clear()
        self.trouble, self.asking = [], []


@dataclass(eq=False)
class Comparisons:
    """Second sources weighed against an entity's article, and the conflicts found."""

    second: dict[str, str] = field(default_factory=dict)  # article -> a second source about the same entity, to compare
    second_of: dict[str, str] = field(default_factory=dict)  # a second source opened -> the article it is compared with
    dated_profiles: dict[str, list[str]] = field(default_factory=dict)  # a name -> dated profiles of it read
    weighed: set[tuple[str, str]] = field(default_factory=set)  # (article, dated profile) compared already
    conflicts: int = 0

    def forget(self) -> None:
        self.second.clear()
        self.second_of.clear()


@dataclass(eq=False)
class Narration:
    """What the research will say next turn (events as they happen, the counts its text states,
    its decisions) and what it has said already."""

    voice: Narrator
    notes: list[Event] = field(default_factory=list)  # what to say next turn (observations, as they happen)
    claims: list[tuple] = field(default_factory=list)  # the counts this turn's text states
    decisions: list[tuple[str, dict]] = field(default_factory=list)
    plan_said: bool = False
    listing_said: set[str] = field(default_factory=set)  # conditions it has said a list's column settles
    progress_said: int = 0  # candidates decided when the research last took stock (a progress sentence)

    def take_claims(self) -> list[tuple]:
        out, self.claims = self.claims, []
        return out

    def note(self, move: str, claims: list | None = None, **slots) -> None:
        """Say a move next turn; `claims`: the counts it may state, as (kind, value, ref, slot),
        kept where the clause drawn states that slot, and checked against the trajectory's
        actions at export (`grounding.py`)."""
        if any(e.move == move and e.slots == slots for e in self.notes):
            return
        self.notes.append(Event(move, slots, list(claims or ())))

    def speak(self, events: list[Event], opening: bool = False) -> str:
        """A turn's message from its events (`narrator.Narrator.compose`), its claims kept."""
        text, claims = self.voice.compose(events, opening)
        self.claims += claims
        return text

    def forget(self) -> None:
        """What was to be said is in the note now."""
        self.notes, self.decisions = [], []
