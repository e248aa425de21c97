"""The report's plots (matplotlib, Agg: no display needed), as PNG files."""
import textwrap
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


DPI = 90
FOREST_MAX_PX = 1200
ROW_IN, FOREST_PAD_IN = 0.42, 1.9
FOREST_ROWS = int((FOREST_MAX_PX / DPI - FOREST_PAD_IN) / ROW_IN)   # the most rows one forest plot holds


def _log_axis(axis) -> None:
    """A log scale labelled in plain numbers (0.5, 1, 2), not powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def forest(path: Optional[Path], rows: list, title: str = "") -> Optional[Path]:
    """One line per estimate: rows = [(label, Estimate, criterion, verdict)], drawn on a shared log axis (every
    quantity here is a ratio), its scale at the top and the bottom; the criterion's threshold is a black tick on
    its own line, an equivalence margin a grey band. Estimates that are not positive (a correlation) are left out.
    At most FOREST_ROWS rows (the caller splits): the plot stays under FOREST_MAX_PX tall."""
    rows = [x for x in rows if x[1] is not None and x[1].low > 0][:FOREST_ROWS]
    if not rows or path is None:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11.0, FOREST_PAD_IN + ROW_IN * len(rows)))
    for i, (_label, e, criterion, verdict) in enumerate(reversed(rows)):
        colour = VERDICT_COLOURS.get(verdict, "black")
        ax.plot([e.low, e.high], [i, i], color=colour, linewidth=2)
        ax.plot([e.value], [i], "o", color=colour, markersize=4)
        if hasattr(criterion, "threshold"):
            ax.plot([criterion.threshold], [i], "|", color="black", markersize=12)
        else:
            ax.fill_betweenx([i - 0.35, i + 0.35], criterion.low, criterion.high, color="#cccccc", zorder=0)
    _log_axis(ax.xaxis)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([x[0] for x in reversed(rows)], fontsize=8)
    ax.tick_params(axis="x", top=True, labeltop=True, labelsize=8)
    ax.set_xlabel("ratio (log scale); dot: estimate; line: its interval at the level the claim is judged\n"
                  "(95%, or Bonferroni-corrected per program); black tick: the claim's threshold; grey: its margin\n"
                  "colour: the side the interval lies on (green: held, red: not held, amber: neither)", fontsize=8)
    if title:
        fig.suptitle(textwrap.fill(title, 120), fontsize=10)
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def paper_vs_ours(path: Optional[Path], points: list) -> Optional[Path]:
    """One dot per claim with a paper figure: points = [(number, paper value, Estimate, verdict)]; the paper's
    value across, ours up with its interval, the diagonal where they agree; log axes (ratios)."""
    points = [x for x in points if x[1] > 0 and x[2] is not None and x[2].low > 0]
    if not points or path is None:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 6.0))
    for number, paper, e, verdict in points:
        colour = VERDICT_COLOURS.get(verdict, "black")
        ax.errorbar([paper], [e.value], yerr=[[e.value - e.low], [e.high - e.value]], fmt="o", color=colour,
                    markersize=5, capsize=3)
        ax.annotate(str(number), (paper, e.value), textcoords="offset points", xytext=(5, 4), fontsize=8)
    values = [x[1] for x in points] + [x[2].low for x in points] + [x[2].high for x in points]
    low, high = min(values) / 1.15, max(values) * 1.15
    ax.plot([low, high], [low, high], color="black", linewidth=0.8, linestyle="--")
    _log_axis(ax.xaxis)
    _log_axis(ax.yaxis)
    ax.set_xlim(low, high)
    ax.set_ylim(low, high)
    ax.set_xlabel("the paper's figure (ratio, log scale)", fontsize=9)
    ax.set_ylabel("ours: estimate and interval (ratio, log scale)", fontsize=9)
    ax.set_title("paper against measurement (dashed: where they agree; colour: verdict)", fontsize=10)
    ax.grid(linestyle=":", linewidth=0.5)
    for verdict, colour in VERDICT_COLOURS.items():
        if any(x[3] == verdict for x in points):
            ax.plot([], [], "o", color=colour, label=verdict)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
