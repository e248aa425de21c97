"""The report's plots (matplotlib, Agg: no display needed), as PNG files."""
from pathlib import Path
from typing import Optional



def _pyplot():
    """matplotlib, imported when a plot is drawn: judging claims (the evaluation's adaptive rounds) draws none,
    and the evaluating process stays small (Linux counts its memory in each child's ru_maxrss)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def bars(path: Optional[Path], title: str, ylabel: str, groups: list, series: list, values: dict,
         reference=None) -> Optional[Path]:
    """Grouped bars: values[(group, series)] = Summary (median or estimate, low, high) or None;
    the whiskers span low-high. reference draws a horizontal line (e.g. 1.0). path None: nothing drawn."""
    if path is None:
        return None
    plt = _pyplot()
    width = 0.8 / max(1, len(series))
    drawn = False
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 0.9 * len(groups) * max(1, len(series)) * 0.35), 4.0))
    for i, name in enumerate(series):
        xs, heights, low, high = [], [], [], []
        for g, group in enumerate(groups):
            summary = values.get((group, name))
            if summary is None:
                continue
            xs.append(g - 0.4 + width * (i + 0.5))
            heights.append(summary.median)
            low.append(summary.median - summary.low)
            high.append(summary.high - summary.median)
        if xs:
            ax.bar(xs, heights, width, label=name, yerr=[low, high], capsize=2)
            drawn = True
    medians = [v.median for v in values.values() if v is not None and v.median > 0]
    if medians and max(medians) / min(medians) > 30:  # one outlier would flatten every other bar
        ax.set_yscale("log")
        ylabel += " (log scale)"
    if reference is not None:
        ax.axhline(reference, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([str(g) for g in groups], rotation=20 if len(groups) > 4 else 0, ha="right"
                       if len(groups) > 4 else "center")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if drawn:
        ax.legend(fontsize=7, ncol=min(4, len(series)))
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def scatter(path: Optional[Path], title: str, xlabel: str, ylabel: str, points: dict) -> Optional[Path]:
    """points[label] = [(x, y), ...], one colour per label. path None: nothing drawn."""
    if path is None:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    drawn = False
    for label, xy in points.items():
        if xy:
            ax.scatter([p[0] for p in xy], [p[1] for p in xy], label=label, s=18)
            drawn = True
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if drawn:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


VERDICT_COLOURS = {"held": "#1a7f37", "not held": "#c62828", "inconclusive": "#b58900", "not measured": "#888888"}


def forest(path: Optional[Path], rows: list) -> Optional[Path]:
    """One line per estimate: rows = [(label, Estimate, criterion, verdict)], drawn on a shared log axis (every
    quantity here is a ratio); the criterion's threshold is a black tick on its own line, an equivalence margin a
    grey band. Estimates that are not positive (a correlation) are left out."""
    rows = [x for x in rows if x[1] is not None and x[1].low > 0]
    if not rows or path is None:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 0.8 + 0.28 * len(rows)))
    for i, (_label, e, criterion, verdict) in enumerate(reversed(rows)):
        colour = VERDICT_COLOURS.get(verdict, "black")
        ax.plot([e.low, e.high], [i, i], color=colour, linewidth=2)
        ax.plot([e.value], [i], "o", color=colour, markersize=4)
        if hasattr(criterion, "threshold"):
            ax.plot([criterion.threshold], [i], "|", color="black", markersize=12)
        else:
            ax.fill_betweenx([i - 0.35, i + 0.35], criterion.low, criterion.high, color="#cccccc", zorder=0)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([x[0] for x in reversed(rows)], fontsize=7)
    ax.set_xlabel("ratio and 95% interval (log scale)\nblack tick: the claim's threshold; grey: its margin", fontsize=8)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
