"""Optional question paraphrase through vLLM, in one batch.

Every question goes to `LLM.chat` with the same system prompt first (prefix caching) and
the question last. A rewrite is accepted only if it still names every column and every
constraint value (names, categories, numbers and years, compared case-insensitively), asks for
a markdown table, and names nothing the question does not (`web.Vocabulary.novel`: a
capitalised word, or in Chinese a run of characters, that neither the question nor the
language's question grammar has: "in New York", "在纽约"); otherwise the template question stays. Counts of accepted and
rejected rewrites go to the tasks report.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..plumbing import stable_hash
from ..web import close_llm, load_llm, strip_reasoning
from ..world import RenderOptions

SYSTEM = ("You rewrite search task questions. Keep the meaning exactly: every name, category, number, year and "
          "column name must appear unchanged, and the question must still ask for one markdown table with the "
          "named columns. Vary the wording and sentence order only. Reply with the rewritten question alone.")


def question_vocabulary(language: str):
    """The words a question in `language` may use beyond its own: its grammar (`questions/<lang>.yaml`)
    and the language's file."""
    from ..web import Vocabulary
    from .banks import question_bank

    return Vocabulary.of(language, question_bank(language))


def faithful(original: dict, text: str, vocabulary=None) -> bool:
    """Does a rewrite keep every column name and constraint value, still ask for a markdown table,
    and (given the language's `question_vocabulary`) name nothing the question does not?"""
    low = " ".join(text.lower().split())
    if not low or "markdown" not in low or "table" not in low:
        return False
    for v in [*original.get("columns", []), *original.get("constraint_values", [])]:
        if " ".join(str(v).lower().split()) not in low:
            return False
    # no number may appear that the original does not have
    nums = set(re.findall(r"\d[\d,.]*\d|\d", original["query"]))
    if not all(n in nums for n in re.findall(r"\d[\d,.]*\d|\d", text)):
        return False
    return vocabulary is None or not vocabulary.novel(text, [original["query"]])


def paraphrase_records(records: list[dict], render: RenderOptions, *, model: str | None = None, llm=None,
                       seed: int = 0, on_progress: Callable[[str, int, int], None] | None = None) -> tuple[int, int]:
    """Rewrite `query` in place where the rewrite is faithful; returns (accepted, rejected)."""
    if not records:
        return 0, 0
    from vllm import SamplingParams

    own = llm is None
    if own:
        llm = load_llm(render, model)
    try:
        s = render.sampling
        convs = [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": r["query"]}] for r in records]
        params = [SamplingParams(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k, max_tokens=256,
                                 seed=stable_hash(seed, "paraphrase", r["instance_id"]) % (2**31)) for r in records]
        outs = llm.chat(convs, params, use_tqdm=False, chat_template_kwargs={"enable_thinking": render.enable_thinking})
    finally:
        if own:
            close_llm(llm)
    accepted = 0
    vocabularies: dict[str, object] = {}
    for r, o in zip(records, outs):
        text = strip_reasoning(o.outputs[0].text) if o.outputs else ""
        lang = r.get("language") or "en"
        if lang not in vocabularies:
            vocabularies[lang] = question_vocabulary(lang)
        if o.outputs and o.outputs[0].finish_reason == "stop" and faithful(r, text, vocabularies[lang]):
            r["template_query"] = r["query"]
            r["query"] = " ".join(text.split())
            accepted += 1
    if on_progress:
        on_progress("paraphrase", len(records), len(records))
    return accepted, len(records) - accepted
