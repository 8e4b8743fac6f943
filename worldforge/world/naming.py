"""Drawing the world's names: each type's names from its name grammar (parts, choices, fakers,
numbers, syllables; a `via` part read from a related entity), names derived from another
entity's (a sequel's "II"), namesakes and near-names on purpose, and aliases (initials, short
forms, former names, transliterations). The planner (`planner._Generator`) calls
`NamePlanner.make_name`, `derive_names` and `make_aliases` in dependency order.
"""

from __future__ import annotations

import string

import numpy as np
import polars as pl

from ..errors import PlanError
from ..plumbing import stable_hash
from .pack import CategoricalAttr
from .sampling import (
    NameSampler,
    child_rng,
    edition_words,
    entity_ids,
    has_cjk,
    pinyin_names,
    sample_days,
)

_ROMAN = ["", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV", "XVI",
          "XVII", "XVIII", "XIX", "XX"]  # a longer chain's later entries read XX


def _take_from(v, copies: np.ndarray, sources: np.ndarray):
    """A kept name-part array with the copies' entries taken from their sources."""
    if isinstance(v, pl.Series):
        a = v.to_numpy().astype(object)
        a[copies] = a[sources]
        return pl.Series(v.name, a.tolist(), dtype=v.dtype)
    a = np.array(v, dtype=object, copy=True)
    a[copies] = a[sources]
    return a if isinstance(v, np.ndarray) else list(a)


class NamePlanner:
    """Draws the names and aliases of the world's types for the planner `g` (whose entities,
    seeds, name parts and date bounds it reads)."""

    def __init__(self, g):
        self.g = g

    def name_sampler(self, t: str, ambiguous: tuple[str, ...] = ()) -> NameSampler:
        et = self.g.types[t]
        context = {}
        for k, part in et.name.parts.items():
            if part.given is not None:
                context[k] = self.g.given_values(t, part.given)
            elif part.via is not None:
                rs = self.g.relations[part.via]
                context[k] = self.g.along(t, part.via, self.g.out.entities[rs.target][part.attribute].cast(pl.String))
            elif part.edition is not None:
                context[k] = edition_words(self.g.editions[t]["year" if part.edition in ("year", "season") else "ordinal"],
                                           part.edition, self.g.spec.language)
        return NameSampler(t, et.name, self.g.spec.locale, self.g.seed, context, ambiguous)

    def make_name(self, t: str) -> None:
        et = self.g.types[t]
        n = self.g.out.entities[t].height
        keep = tuple(sorted({a.given.split(".", 1)[1] for a in et.attributes.values()
                             if isinstance(a, CategoricalAttr) and a.given and a.given.startswith("name.")}))
        res = self.name_sampler(t, keep).unique(n, child_rng(self.g.seed, "names", t), keep=keep)
        names, kept = res if keep else (res, {})
        ids = entity_ids(t, names, self.g.seed)
        if ids.n_unique() != n:
            raise PlanError(f"id collision in type '{t}'; change the seed")
        if et.namesakes or et.near_names:  # ids stay those of the drawn (unique) names
            names, kept = self._namesakes(t, names, kept)
        self.g.out.entities[t] = pl.concat([pl.DataFrame({"id": ids, "name": names}), self.g.out.entities[t]], how="horizontal")
        for k, v in kept.items():
            self.g.name_parts[(t, k)] = v

    def derive_names(self, t: str) -> None:
        """`name.derived`: an entity linked by `via` takes a name made from the linked entity's
        ({name}), the first of its chain's ({root}: a sequel's sequel is named after the
        original) and its place in the chain ({n}, {roman}); chains are named level by level, so
        {name} is the parent's final name. A derived name another entity of the type holds
        keeps the drawn one. Ids stay those of the drawn names."""
        dn = self.g.types[t].name.derived
        parent, target_t = self.g.whole_index(t, dn.via)
        df = self.g.out.entities[t]
        n = df.height
        names = df["name"].clone()
        linked = parent >= 0
        depth = linked.astype(np.int64)
        root = np.where(linked, parent, np.arange(n))
        if target_t == t:  # chains of the type's own entities (acyclic: validated)
            cur = parent.copy()
            cur[~linked] = -1
            cur = np.where(cur >= 0, parent[np.maximum(cur, 0)], -1)
            while (cur >= 0).any():
                on = cur >= 0
                root[on] = cur[on]
                depth[on] += 1
                cur = np.where(on, parent[np.maximum(cur, 0)], -1)
            target_names = None
        else:
            target_names = self.g.out.entities[target_t]["name"]
        rng = child_rng(self.g.seed, "derived-names", t)
        tmpls = list(dn.templates)
        w = np.asarray(list(dn.templates.values()), float)
        pick = rng.choice(len(tmpls), size=n, p=w / w.sum())[root]  # one style a chain ("II", "III"; not "II", "Vol. 3")
        clashed = 0
        for level in range(1, int(depth.max(initial=0)) + 1):
            rows = np.flatnonzero(depth == level)
            src = names if target_names is None else target_names
            cols = {"name": src.gather(parent[rows]), "root": src.gather(root[rows]) if target_names is None else src.gather(parent[rows]),
                    "n": pl.Series(depth[rows] + 1).cast(pl.String), "roman": pl.Series(_ROMAN, dtype=pl.String).gather(np.minimum(depth[rows] + 1, len(_ROMAN) - 1))}
            frame = pl.DataFrame(cols)
            made = pl.Series([None] * len(rows), dtype=pl.String)
            for i, tmpl in enumerate(tmpls):
                sel = np.flatnonzero(pick[rows] == i)
                if len(sel):
                    pieces = [e for lit, field, _, _ in string.Formatter().parse(tmpl)
                              for e in ((pl.lit(lit) if lit else None), (pl.col(field) if field is not None else None)) if e is not None]
                    made = made.scatter(sel, frame[sel].select(pl.concat_str(pieces).alias("v"))["v"])
            others = names.gather(np.flatnonzero(depth != level))
            taken = made.is_in(others.implode()) | made.is_duplicated()
            clashed += int(taken.sum())
            ok = ~taken.to_numpy()
            names = names.scatter(rows[ok], made.filter(pl.Series(ok)))
        self.g.out.repairs[f"{t} derived names: kept the drawn name (the derived one was taken)"] = clashed
        self.g.out.entities[t] = df.with_columns(names.alias("name"))

    def _namesakes(self, t: str, names: pl.Series, kept: dict) -> tuple[pl.Series, dict]:
        """Give `namesakes` x n entities the name of another (disjoint sources; kept name parts
        follow, so attributes chosen by a name word stay consistent) and `near_names` x n a
        name one edit from another's (a vowel of the first word, or the first character of a
        CJK name), never equal to an existing name."""
        et = self.g.types[t]
        n = len(names)
        k, k2 = int(round(et.namesakes * n)), int(round(et.near_names * n))
        if 2 * (k + k2) > n:
            k = k2 = 0
        if not k and not k2:
            return names, kept
        rng = child_rng(self.g.seed, "namesakes", t)
        # Pairs share whatever the name's parts are chosen by (an industry word, a town), so a
        # copied name still agrees with its new bearer: shuffle, group by that context, pair
        # neighbours within a group, then draw the pairs wanted.
        ctx = []
        for part in et.name.parts.values():
            if part.given is not None:
                ctx.append(pl.Series(self.g.given_values(t, part.given)).cast(pl.String).fill_null(""))
            elif part.via is not None:
                rs = self.g.relations[part.via]
                ctx.append(pl.Series(self.g.along(t, part.via, self.g.out.entities[rs.target][part.attribute].cast(pl.String))).fill_null(""))
        perm = rng.permutation(n)
        if ctx:
            key = pl.DataFrame({f"c{i}": c for i, c in enumerate(ctx)}).select(pl.concat_str(pl.all(), separator="\x1f")).to_series()
            perm = perm[np.argsort(key.to_numpy()[perm], kind="stable")]
            keys = key.to_numpy()[perm]
        else:
            keys = np.zeros(n, dtype=np.int8)
        a_, b_ = perm[0:n - 1:2], perm[1:n:2]
        ok = keys[0:n - 1:2] == keys[1:n:2]
        a_, b_ = a_[ok], b_[ok]
        pick = rng.permutation(len(a_))
        k = min(k, len(a_))
        k2 = min(k2, len(a_) - k)
        copies, sources = a_[pick[:k]], b_[pick[:k]]
        near, near_src = a_[pick[k:k + k2]], b_[pick[k:k + k2]]
        arr = names.to_numpy().astype(object)
        arr[copies] = arr[sources]
        kept = {p: _take_from(v, copies, sources) for p, v in kept.items()}
        taken = set(arr.tolist())
        vowels = "aeiou"
        cjk = sorted({c for x in arr[: min(n, 2000)] for c in x[:1] if "\u4e00" <= c <= "\u9fff"})
        # a name that opens with a word chosen by an attribute (a first name of the person's gender)
        # keeps it: the edit goes to a later word ('Maria Stokes' -> 'Maria Stukes', not 'Mario Stokes')
        keyed = [k for k, part in et.name.parts.items() if part.given is not None or part.fakers is not None]
        skip = int(any(et.name.opens_with(k) for k in keyed))
        for i, j in zip(near.tolist(), near_src.tolist()):
            src = arr[j]
            h = stable_hash("near", self.g.seed, t, src)
            if src[:1] and "\u4e00" <= src[0] <= "\u9fff" and len(cjk) > 1:
                c = cjk[h % len(cjk)]
                new = (c if c != src[0] else cjk[(h + 1) % len(cjk)]) + src[1:]
            else:  # a vowel of the first word that has one past its first letter ('FC Veur' -> 'FC Vuur')
                words = src.split(" ")
                w = next((i for i, x in enumerate(words) if i >= skip and any(ch.lower() in vowels for ch in x[1:])), None)
                if w is None:
                    words[-1] += words[-1][-1:]
                else:
                    x = words[w]
                    pos = [q for q, ch in enumerate(x) if ch.lower() in vowels and q > 0]
                    q = pos[h % len(pos)]
                    alt = vowels[(vowels.index(x[q].lower()) + 1 + h % 4) % 5]
                    words[w] = x[:q] + (alt.upper() if x[q].isupper() else alt) + x[q + 1:]
                new = " ".join(words)
            if new not in taken:
                taken.add(new)
                arr[i] = new
        return pl.Series(names.name, arr.tolist(), dtype=pl.String), kept

    def make_aliases(self, t: str) -> None:
        et = self.g.types[t]
        frame = self.g.out.entities[t]
        names = frame["name"]
        n = frame.height
        parts = []
        for i, al in enumerate(et.name.aliases):
            rng = child_rng(self.g.seed, "alias", t, i)
            sel = np.nonzero(rng.random(n) < al.rate)[0] if al.rate < 1 else np.arange(n)
            nm = names.gather(sel)
            valid_to = pl.Series([None] * len(sel), dtype=pl.Date)
            if al.kind == "initials":
                tok = nm.str.split(" ")
                alias = pl.select(
                    pl.when(pl.lit(tok).list.len() >= 2)
                    .then(pl.lit(tok).list.first().str.slice(0, 1) + pl.lit(". ") + pl.lit(tok).list.last())
                ).to_series()
            elif al.kind == "abbreviation":
                caps = nm.str.extract_all(r"\b[A-Z]")
                alias = pl.select(pl.when(pl.lit(caps).list.len() >= 2).then(pl.lit(caps).list.join(""))).to_series()
            elif al.kind == "short":
                import re

                # Chinese words are not delimited by spaces: they drop wherever they occur.
                if any(has_cjk(w) for w in al.drop):
                    pat = "|".join(re.escape(w) if has_cjk(w) else r"\b" + re.escape(w) + r"\b" for w in al.drop)
                else:
                    pat = r"\b(?:" + "|".join(re.escape(w) for w in al.drop) + r")\b"
                alias = nm.str.replace_all(pat, "").str.replace_all(r"\s{2,}", " ").str.strip_chars(" ,&-")
            elif al.kind == "pinyin":
                alias = pinyin_names(nm, surname=al.surname, translate=al.translate)
            elif al.kind == "pattern":
                pre, _, post = al.template.partition("{name}")
                alias = pre + nm + post
            else:  # former name
                alias = self.name_sampler(t).draw(sel, rng)
                lo = self.g.attr_bound(t, al.after, "after")[sel] if al.after else np.full(len(sel), self.g.span_start)
                lo = np.clip(lo, self.g.span_start, self.g.as_of)
                valid_to = pl.Series(sample_days(lo, np.full(len(sel), self.g.as_of), rng).astype(np.int32)).cast(pl.Date)
            parts.append(pl.DataFrame({
                "entity_id": frame["id"].gather(sel), "alias": alias.cast(pl.String), "kind": pl.Series([al.kind] * len(sel), dtype=pl.String),
                "valid_to": valid_to,
            }))
        if not parts:
            return
        df = pl.concat(parts).drop_nulls("alias").filter(pl.col("alias").str.len_chars() > 0)
        # An alias must never be another entity's (or its own) primary name of the same type.
        df = df.join(frame.select(pl.col("name").alias("alias")), on="alias", how="anti")
        df = df.unique(["entity_id", "alias"], keep="first", maintain_order=True)
        before = sum(p.height for p in parts)
        self.g.out.repairs[f"{t} aliases: dropped (clash with a name or empty)"] = before - df.height
        self.g.out.aliases.append(df.with_columns(pl.lit(t).alias("entity_type")))
