"""The simulated web of a world: the page plan, the template and vLLM page writers, the
render stage that stores pages with provenance, and the search engine with its tools.

`render_world(world_dir)` is the stage's entry point; `SearchEngine` serves the tools."""

from .claims import ClaimCheck, Vocabulary
from .grammar import BANKS, bank_forms, phrase_label, prose_sentences, skeleton, word
from .llm import LLMStats, chat_fitting, check_model, close_llm, load_llm, prompts_fit, strip_reasoning
from .pages import Sites, full_list_elsewhere, predicate_meta, slug, slugs
from .report import web_report
from .search import DUCKDB_MEMORY, MAX_RESULTS, TOOLS, SearchEngine, check_url, cut_snippet, engine_query, search_arguments
from .stage import RenderReport, render_world
from .store import damaged_pages, held_out_facts, is_rendered, page_files, pages_stating, parquet_list, read_report, require_rendered
from .text import UNFILLED_SLOT, Fact, dates_in, format_date, format_number, numbers_in, same_on_page, scaled_in

__all__ = [
    "BANKS", "ClaimCheck", "DUCKDB_MEMORY", "Fact", "LLMStats", "MAX_RESULTS", "RenderReport", "SearchEngine", "Sites",
    "TOOLS", "UNFILLED_SLOT", "Vocabulary", "bank_forms", "chat_fitting", "check_model", "check_url", "close_llm",
    "cut_snippet", "damaged_pages", "dates_in", "engine_query", "format_date", "format_number",
    "full_list_elsewhere", "held_out_facts", "is_rendered", "load_llm", "numbers_in", "page_files",
    "pages_stating", "parquet_list", "phrase_label", "predicate_meta", "prompts_fit", "prose_sentences",
    "read_report", "render_world", "require_rendered", "same_on_page", "scaled_in", "search_arguments",
    "skeleton", "slug", "slugs", "strip_reasoning", "web_report", "word",
]
