// A layered graph drawn as SVG (no library): nodes at the positions the server computed, edges
// as curves from a node to the earlier one it points to. Every text goes in as textContent.
"use strict";
(function () {
  const BC = window.BC;
  const NS = "http://www.w3.org/2000/svg";
  const HEAD = 26; // room above the nodes for the column titles
  let drawn = 0; // marker ids stay unique when several graphs share a page

  function svg(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, BC.visible(v));
    if (text !== undefined) node.textContent = BC.visible(text);
    return node;
  }

  function clip(text, length) {
    const shown = BC.visible(text);
    return shown.length > length ? shown.slice(0, length - 1) + "…" : shown;
  }

  // spec: {width, height, node_width, node_height, title, columns: [{x, label}],
  //   nodes: [{id, x, y, lines: [..], cls, title, data: {..}}],
  //   edges: [{source, target, cls, marker, title}]} (marker: one of `kinds`, default cls)
  // kinds: the edge classes that get an arrow head of their own; open(node): a node was chosen.
  BC.graph = function (spec, kinds, open) {
    const id = "g" + ++drawn;
    const w = spec.node_width, h = spec.node_height;
    const root = svg("svg", { class: "graph", viewBox: "0 0 " + spec.width + " " + (spec.height + HEAD),
      width: spec.width, height: spec.height + HEAD, role: "group" });
    root.appendChild(svg("title", {}, spec.title || "graph"));
    const defs = svg("defs");
    for (const kind of kinds) {
      const marker = svg("marker", { id: id + "-" + kind, class: "arrow " + kind, viewBox: "0 0 10 10",
        refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
      marker.appendChild(svg("path", { d: "M 0 0 L 10 5 L 0 10 z" }));
      defs.appendChild(marker);
    }
    root.appendChild(defs);
    for (const column of spec.columns || []) {
      root.appendChild(svg("text", { x: column.x, y: 16, "text-anchor": "middle", class: "column" }, column.label));
    }
    const body = svg("g", { transform: "translate(0 " + HEAD + ")" });
    root.appendChild(body);
    const at = {};
    for (const node of spec.nodes) at[node.id] = node;
    const edges = svg("g", { class: "edges" });
    for (const edge of spec.edges) {
      const from = at[edge.source], to = at[edge.target];
      if (!from || !to) continue;
      const sx = from.x - w / 2, sy = from.y, tx = to.x + w / 2, ty = to.y;
      const bend = Math.max(30, Math.abs(sx - tx) / 2);
      const path = svg("path", { class: "edge " + edge.cls, d: "M " + sx + " " + sy + " C " + (sx - bend) + " " + sy +
        ", " + (tx + bend) + " " + ty + ", " + tx + " " + ty, "marker-end": "url(#" + id + "-" + (edge.marker || edge.cls) + ")",
        "data-source": edge.source, "data-target": edge.target });
      path.appendChild(svg("title", {}, edge.title));
      edges.appendChild(path);
    }
    body.appendChild(edges);
    for (const node of spec.nodes) {
      const group = svg("g", { class: "gnode " + node.cls, role: "button", tabindex: "0",
        transform: "translate(" + (node.x - w / 2) + " " + (node.y - h / 2) + ")" });
      for (const [k, v] of Object.entries(node.data || {})) group.dataset[k] = BC.visible(v);
      group.appendChild(svg("title", {}, node.title));
      group.appendChild(svg("rect", { width: w, height: h, rx: 6, ry: 6 }));
      node.lines.forEach(function (line, i) {
        if (line) group.appendChild(svg("text", { x: 8, y: 17 + i * 16, class: "line" + i }, clip(line, i === 0 ? 21 : 27)));
      });
      group.addEventListener("click", () => open(node));
      group.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(node); }
      });
      body.appendChild(group);
    }
    return root;
  };
})();
