// A small SVG line chart (no library): series of [x, y] points, y null where unknown.
"use strict";
(function () {
  const BC = window.BC;
  const NS = "http://www.w3.org/2000/svg";

  function svg(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = BC.visible(text);
    return node;
  }

  // options: {ymin, ymax, xlabel, ylabel, title}; series: [{name, points, cls, dashed}]
  BC.plot = function (series, options) {
    const width = 560, height = 240, left = 48, right = 130, top = 24, bottom = 36;
    const xs = series.flatMap((s) => s.points.map((p) => p[0]));
    const xmin = Math.min(...xs, 0), xmax = Math.max(...xs, 1);
    const ymin = options.ymin, ymax = options.ymax;
    const X = (x) => left + ((x - xmin) / (xmax - xmin || 1)) * (width - left - right);
    const Y = (y) => top + (1 - (y - ymin) / (ymax - ymin || 1)) * (height - top - bottom);
    const root = svg("svg", { class: "plot", viewBox: "0 0 " + width + " " + height, role: "img" });
    root.appendChild(svg("title", {}, options.title || ""));
    for (let i = 0; i <= 4; i++) {
      const y = ymin + ((ymax - ymin) * i) / 4;
      root.appendChild(svg("line", { x1: left, x2: width - right, y1: Y(y), y2: Y(y), class: "grid" }));
      root.appendChild(svg("text", { x: left - 6, y: Y(y) + 4, "text-anchor": "end", class: "tick" }, BC.num(y, 2)));
    }
    const step = Math.max(1, Math.ceil((xmax - xmin) / 10));
    for (let x = xmin; x <= xmax; x += step) {
      root.appendChild(svg("text", { x: X(x), y: height - bottom + 16, "text-anchor": "middle", class: "tick" }, String(x)));
    }
    root.appendChild(svg("text", { x: (left + width - right) / 2, y: height - 4, "text-anchor": "middle", class: "axis" }, options.xlabel || ""));
    root.appendChild(svg("text", { x: 12, y: top - 8, class: "axis" }, options.ylabel || ""));
    series.forEach(function (s, index) {
      const cls = "series s" + index + (s.dashed ? " dashed" : "");
      let path = "";
      let pen = false;
      for (const [x, y] of s.points) {
        if (y === null || y === undefined) { pen = false; continue; }
        path += (pen ? " L" : " M") + X(x).toFixed(1) + " " + Y(y).toFixed(1);
        pen = true;
        root.appendChild(svg("circle", { cx: X(x), cy: Y(y), r: 3, class: cls }));
      }
      if (path) root.appendChild(svg("path", { d: path.trim(), class: cls, fill: "none" }));
      const ly = top + 14 * index + 6;
      root.appendChild(svg("line", { x1: width - right + 10, x2: width - right + 28, y1: ly, y2: ly, class: cls }));
      root.appendChild(svg("text", { x: width - right + 32, y: ly + 4, class: "legend" }, s.name));
    });
    return root;
  };
})();
