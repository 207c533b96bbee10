"""The ONNX bench's PNG chart: per case, each peer's median latency with its p10-p90 range
(log scale: cases span three orders of magnitude), and max_c's latency over ONNX Runtime's
with the target where there is one (on the GPU: over PyTorch's). Failed cases show as a gap
marked 'failed'; a peer that only gave reference outputs (untimed) has no bar."""
import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

COLORS = {"max_c": "#1f77b4", "onnxruntime": "#ff7f0e", "torch": "#2ca02c"}


def _label(case):
    return f"{case['case']}\nb{case['batch']} t{case['threads']}"


def _latencies(ax, cases, peers):
    x = np.arange(len(cases))
    width = 0.8 / len(peers)
    for i, peer in enumerate(peers):
        res = [c["peers"].get(peer, {}) for c in cases]
        med = np.array([r["median_ms"] if "median_ms" in r else np.nan for r in res])
        lo = np.array([r["median_ms"] - r["p10_ms"] if "median_ms" in r else 0 for r in res])
        hi = np.array([r["p90_ms"] - r["median_ms"] if "median_ms" in r else 0 for r in res])
        pos = x + (i - (len(peers) - 1) / 2) * width
        ax.bar(pos, med, width, yerr=[lo, hi], capsize=2, label=peer, color=COLORS.get(peer))
        for p, r in zip(pos, res):
            if r and not r.get("ok"):
                ax.annotate("failed", (p, 0), xycoords=("data", "axes fraction"), rotation=90,
                            ha="center", va="bottom", fontsize=7, color="red")
    ax.set_yscale("log")
    ax.set_ylabel("latency, ms (median, p10-p90)")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)


def _ratios(ax, cases, peer="onnxruntime", name="ONNX Runtime"):
    x = np.arange(len(cases))
    ratio = np.array([c["ratio"].get(peer, np.nan) for c in cases])
    colors = ["#2ca02c" if r <= 1 else "#d62728" for r in np.nan_to_num(ratio, nan=2)]
    ax.bar(x, ratio, 0.6, color=colors)
    ax.axhline(1.0, color="black", linewidth=0.8)
    for i, c in enumerate(cases):
        t = c["targets"].get("latency_ratio")
        if t:
            ax.plot([i - 0.4, i + 0.4], [t["at_most"]] * 2, color="black", linestyle="--")
        if not np.isnan(ratio[i]):
            ax.annotate(f"{ratio[i]:.2f}", (i, ratio[i]), ha="center", va="bottom", fontsize=7)
    ax.set_ylabel(f"max_c / {name}\n(dashes: target)")
    ax.set_xticks(x, [_label(c) for c in cases], fontsize=7)


def draw(data, path):
    cases = data["cases"]
    peers = list(dict.fromkeys(p for c in cases for p, r in c["peers"].items()
                               if not r.get("reference_only")))
    gpu = data["machine"].get("gpu")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8, 0.9 * len(cases) + 2), 8),
                                      sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    _latencies(top, cases, peers)
    m = data["machine"]
    if gpu:
        _ratios(bottom, cases, "torch", "PyTorch")
        top.set_title(f"max_c vs PyTorch on ONNX models, {gpu}, float32 (host {m['cpu']}, "
                      f"load {data['load_average_start'][0]:.1f})", fontsize=9)
    else:
        _ratios(bottom, cases)
        top.set_title(f"max_c vs ONNX Runtime on ONNX models ({m['cpu']}, {m['cores']} cores, "
                      f"load {data['load_average_start'][0]:.1f})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
