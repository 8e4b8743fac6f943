"""Small charts as inline SVG, drawn on the server (no script, no library)."""

from __future__ import annotations

from .markdown import escape

COLOURS = ("#3366cc", "#e08a1e", "#2e9e5b", "#b23b6b")


def grouped_bars(title: str, labels: list[str], series: dict[str, list[float]], *, percent: bool = True,
                 width: int = 560, height: int = 220) -> str:
    """Bars per label, one per series (e.g. this dataset beside WideSearch), with a legend."""
    top = max((v for vals in series.values() for v in vals), default=0) or 1
    pad_l, pad_b, pad_t = 40, 42, 40
    plot_w, plot_h = width - pad_l - 10, height - pad_b - pad_t
    n, k = max(len(labels), 1), max(len(series), 1)
    slot = plot_w / n
    bar = max(4.0, slot * 0.8 / k)
    parts = [f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="{pad_l}" y="16" class="ct">{escape(title)}</text>',
             f'<line x1="{pad_l}" y1="{pad_t + plot_h}" x2="{width - 10}" y2="{pad_t + plot_h}" stroke="#888"/>']
    for j, (name, vals) in enumerate(series.items()):
        colour = COLOURS[j % len(COLOURS)]
        for i, v in enumerate(vals):
            h = plot_h * (v / top)
            x = pad_l + i * slot + slot * 0.1 + j * bar
            shown = f"{100 * v:.0f} %" if percent else f"{v:g}"
            parts.append(f'<rect x="{x:.1f}" y="{pad_t + plot_h - h:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{colour}">'
                         f'<title>{escape(name)} · {escape(labels[i])}: {shown}</title></rect>')
        if k > 1:  # a legend under the title, one entry a series
            lx = pad_l + 130 * j
            parts.append(f'<rect x="{lx}" y="21" width="10" height="10" fill="{colour}"/>'
                         f'<text x="{lx + 14}" y="30" class="cl">{escape(name)}</text>')
    for i, lab in enumerate(labels):
        parts.append(f'<text x="{pad_l + i * slot + slot / 2:.1f}" y="{pad_t + plot_h + 16}" text-anchor="middle" class="cl">'
                     f'{escape(lab)}</text>')
    top_label = f"{100 * top:.0f} %" if percent else f"{top:g}"
    parts.append(f'<text x="{pad_l - 4}" y="{pad_t + 4}" text-anchor="end" class="cl">{top_label}</text>')
    parts.append(f'<text x="{pad_l - 4}" y="{pad_t + plot_h}" text-anchor="end" class="cl">0</text>')
    parts.append("</svg>")
    return "".join(parts)


def histogram(title: str, values: list[float], *, lo: float = 0.0, hi: float = 1.0, bins: int = 10,
              width: int = 560, height: int = 200) -> str:
    """Counts of `values` in `bins` equal bins over [lo, hi] (the last bin closed)."""
    counts = [0] * bins
    for v in values:
        if v is None:
            continue
        i = min(bins - 1, max(0, int((v - lo) / (hi - lo) * bins)))
        counts[i] += 1
    labels = [f"{lo + (hi - lo) * i / bins:.1f}" for i in range(bins)]
    return grouped_bars(title, labels, {"trajectories": [float(c) for c in counts]}, percent=False, width=width, height=height)
