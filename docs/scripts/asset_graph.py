"""Draw the asset graph of a project config (default: the bundled sample) from the Dagster Definitions' asset
dependencies, one column per depth and one colour per asset group, as docs/img/asset-graph.png:

    python docs/scripts/asset_graph.py [--config examples/sample.yaml] [--output docs/img/asset-graph.png]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def asset_edges(config: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(asset name -> group, [(upstream, downstream)]) of the code location built from ``config``."""
    sys.path.insert(0, str(ROOT))
    from pipelines.definitions import build_definitions

    graph = build_definitions(config).resolve_asset_graph()
    groups, edges = {}, []
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        name = key.to_user_string()
        groups[name] = node.group_name or "default"
        edges += [(parent.to_user_string(), name) for parent in node.parent_keys]
    return groups, edges


def draw(groups: dict[str, str], edges: list[tuple[str, str]], output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(groups)
    g.add_edges_from(edges)
    columns = list(nx.topological_generations(g))
    pos = {}
    for x, column in enumerate(columns):
        ordered = sorted(column, key=lambda n: (groups[n], n))
        for y, node in enumerate(ordered):
            pos[node] = (x * 3.2, -(y - (len(ordered) - 1) / 2) * 0.55)
    names = sorted(set(groups.values()))
    cmap = plt.get_cmap("tab20")
    colour = {name: cmap(i % 20) for i, name in enumerate(names)}
    height = max(len(c) for c in columns) * 0.6 + 1.5
    fig, ax = plt.subplots(figsize=(len(columns) * 1.3 + 2, height))
    nx.draw_networkx_edges(g, pos, ax=ax, edge_color="#999999", arrows=True, arrowsize=7, width=0.6,
                           node_size=60, connectionstyle="arc3,rad=0.04")
    for node, (x, y) in pos.items():
        ax.text(x, y, node, fontsize=6.5, ha="center", va="center",
                bbox={"boxstyle": "round,pad=0.25", "fc": colour[groups[node]], "ec": "none", "alpha": 0.9})
    handles = [plt.Line2D([], [], marker="s", ls="", color=colour[n], label=n) for n in names]
    ax.legend(handles=handles, title="asset group", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7,
              title_fontsize=7, frameon=False)
    ax.set_axis_off()
    fig.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "examples" / "sample.yaml"))
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "img" / "asset-graph.png")
    args = parser.parse_args()
    groups, edges = asset_edges(args.config)
    draw(groups, edges, args.output)
    print(f"{len(groups)} assets, {len(edges)} dependencies -> {args.output} ({args.output.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
