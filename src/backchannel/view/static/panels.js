// The one renderer of paradigm views: draws the panels a paradigm's `view` hook returns
// (tables whose cells hold event references, chips and text; graphs; plots; event lists) with
// DOM calls only. It knows no paradigm: everything it shows comes from the page's data.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;
  const TONES = ["positive", "negative", "warning", "info", "accent", "muted", "highlight"];
  const BORDERS = ["strong", "dashed", "dotted"];

  const tone = (t) => (TONES.includes(t) ? " tone-" + t : "");
  const word = (s) => String(s || "").replace(/[^A-Za-z0-9_ -]/g, "");

  function chip(c) {
    return el("span", { class: "chip" + tone(c.tone) + (c.kind ? " chip-" + word(c.kind) : "") }, c.label);
  }

  // Whether the viewer shows event `seq` under the agent filter (unknown events: yes).
  function shown(seq, ctx) {
    const e = ctx.bySeq[seq];
    return !e || BC.keeps(e, ctx.agent);
  }

  function parts(list, ctx) {
    return (list || []).map((p) => part(p, ctx));
  }

  function part(p, ctx) {
    if (typeof p === "string") return document.createTextNode(BC.visible(p));
    if (!p || typeof p !== "object") return null;
    if (p.type === "chip") return chip(p);
    if (p.type === "text") {
      return BC.textBlock(p.text, "part" + (p.strong ? " strong" : ""), { inline: true });
    }
    if (p.type === "eventref") {
      const event = ctx.bySeq[p.seq];
      if (!event) return el("span", { class: "missing-event" }, parts(p.parts, ctx));
      if (!BC.keeps(event, ctx.agent)) return null;
      const body = p.body === false ? null : BC.textBlock(event.text);
      return BC.eventButton(event, ctx, [parts(p.parts, ctx), body,
        p.body !== false && event.status !== "ok" ? BC.chip(event.status, "status") : null]);
    }
    return null;
  }

  function dataOf(data) {
    const out = {};
    for (const [k, v] of Object.entries(data || {})) if (/^[a-z][a-z0-9]*$/.test(k)) out[k] = String(v);
    return out;
  }

  function cell(c, ctx) {
    const marked = (c.requires || []).every((seq) => shown(seq, ctx));
    const cls = "cell" + (marked ? tone(c.tone || "") + (c.flag ? " flagged" : "") : "");
    return el(c.header ? "th" : "td", { class: cls, data: dataOf(c.data) },
      marked && c.flag ? el("span", { class: "flag" }, c.flag) : null, parts(c.parts, ctx));
  }

  function heading(p) {
    return [p.title ? el("h2", {}, p.title) : null, p.note ? el("p", { class: "note" }, p.note) : null];
  }

  function table(p, ctx) {
    const rows = (p.rows || []).filter((r) => r.event === undefined || r.event === null || shown(r.event, ctx));
    const head = (p.head || []).length ? el("thead", {}, el("tr", {}, p.head.map((c) => cell(Object.assign({ header: true }, c), ctx)))) : null;
    return el("section", { class: "panel panel-table" }, heading(p),
      el("div", { class: "scroll" }, el("table", { class: "grid " + word(p.name) },
        head, el("tbody", {}, rows.map((r) => el("tr", { data: dataOf(r.data) }, r.cells.map((c) => cell(c, ctx))))))));
  }

  function graph(p, ctx) {
    const kept = p.nodes.filter((n) => n.event === undefined || n.event === null || shown(n.event, ctx));
    const ids = new Set(kept.map((n) => n.id));
    const style = (t, b) => (TONES.includes(t) ? "tone-" + t : "tone-none") + (BORDERS.includes(b) ? " border-" + b : "");
    const spec = {
      width: p.width, height: p.height, node_width: p.node_width || 180, node_height: p.node_height || 72, title: p.title,
      columns: (p.columns || []).map(([x, label]) => ({ x: x, label: label })),
      nodes: kept.map((n) => ({ id: n.id, x: n.x, y: n.y, lines: n.lines || [], cls: style(n.tone, n.border),
        title: n.title || "", data: Object.assign(dataOf(n.data), n.event === undefined || n.event === null ? {} : { event: String(n.event) }) })),
      edges: p.edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map((e) => ({
        source: e.source, target: e.target, title: e.title || "", cls: (TONES.includes(e.tone) ? e.tone : "none") + (e.dashed ? " dashed" : ""),
        marker: TONES.includes(e.tone) ? e.tone : "none" })),
    };
    const hidden = p.nodes.length - kept.length;
    const open = (node) => { if (node.data.event !== undefined) ctx.open(Number(node.data.event)); };
    return el("section", { class: "panel panel-graph" },
      p.title ? el("h3", {}, p.title) : null,
      p.note ? el("p", { class: "note graph-note" }, p.note) : null,
      el("div", { class: "scroll" }, BC.graph(spec, ["none", ...TONES], open)),
      hidden ? el("p", { class: "note graph-filter-note" }, hidden + " node(s) " + ctx.agent + " did not see are left out, with their arrows.") : null,
      (p.legend || []).length ? el("ul", { class: "graph-legend" }, p.legend.map((l) => el("li", {},
        l.tone || l.border ? el("span", { class: "swatch " + style(l.tone, l.border) }) : null, l.text))) : null);
  }

  function plot(p) {
    const series = p.series.map((s) => ({ name: s.name, points: s.points, dashed: !!s.dashed }));
    return el("section", { class: "panel panel-plot" }, heading(p),
      BC.plot(series, { ymin: p.ymin === undefined ? 0 : p.ymin, ymax: p.ymax === undefined ? 1 : p.ymax,
        xlabel: p.xlabel || "", ylabel: p.ylabel || "", title: p.title }));
  }

  function timeline(p, ctx, data) {
    const wanted = new Set(p.events);
    const section = BC.timeline(data.events.filter((e) => wanted.has(e.seq)), ctx, p.title);
    if (p.note) section.insertBefore(el("p", { class: "note" }, p.note), section.children[1] || null);
    return section;
  }

  function prose(p) {
    return el("section", { class: "panel panel-prose" }, p.title ? el("h2", {}, p.title) : null,
      el("p", { class: "note" + tone(p.tone) + (p.tone === "negative" ? " error" : "") }, p.text));
  }

  function choice(p, ctx, data) {
    const box = el("div", { class: "switch-box" });
    const draw = (index) => { BC.clear(box); BC.append(box, p.choices[index].panels.map((q) => panel(q, ctx, data))); };
    const section = el("section", { class: "panel panel-switch " + word(p.name) }, heading(p),
      p.choices.length > 1 ? el("p", {}, el("label", {}, p.label + " ", el("select", { class: word(p.name),
        on: { change: (e) => draw(Number(e.target.value)) } },
        p.choices.map((c, i) => el("option", { value: String(i) }, c.label))))) : null, box);
    if (p.choices.length) draw(0);
    return section;
  }

  function panel(p, ctx, data) {
    switch (p.type) {
      case "table": return table(p, ctx);
      case "graph": return graph(p, ctx);
      case "plot": return plot(p);
      case "timeline": return timeline(p, ctx, data);
      case "prose": return prose(p);
      case "switch": return choice(p, ctx, data);
      default: return el("p", { class: "error" }, "this viewer cannot draw a panel of type " + String(p.type));
    }
  }

  BC.chipOf = chip;

  // Draw the paradigm's page of one conversation (or the generic timeline without a view).
  BC.renderPage = function (container, data, ctx) {
    ctx.bySeq = {};
    for (const e of data.events) ctx.bySeq[e.seq] = e;
    const page = data.page;
    if (!page) { container.appendChild(BC.timeline(data.events, ctx, "Events")); return; }
    if (page.error) {
      container.appendChild(el("p", { class: "error view-error", role: "alert" }, page.error));
      container.appendChild(BC.timeline(data.events, ctx, "Events"));
      return;
    }
    BC.append(container, (page.panels || []).map((p) => panel(p, ctx, data)));
  };
})();
