// Testimony: the state chain with each role's observation windows, the testimonies (direct or
// broadcast) and the discussion, every agent's private vote at T0, T1, R1..RK, and the citation
// graph (statements -> the testimonies and earlier statements they cite) with its true and
// false roots.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  function kindOf(value, env) {
    if (typeof value !== "string") return "failed";
    if (value === env.endpoint) return "true";
    if (value === env.decoy) return "decoy";
    return value === "UNKNOWN" ? "unknown" : "other";
  }

  function chainSection(meta) {
    const env = meta.environment || (meta.item && meta.item.environment) || {};
    const chain = env.chain || [];
    if (!chain.length) return el("p", { class: "note" }, "This conversation stores no state chain.");
    const windows = env.windows || {};
    const roles = env.roles || Object.keys(windows);
    const roleOf = {};
    for (const a of meta.agents || []) roleOf[a.name] = a.role;
    const head = el("tr", {}, el("th", {}, "role"), chain.map((node, i) => el("th", {
      class: "node" + (i === chain.length - 1 ? " endpoint" : "") + (node.container === env.decoy && i === chain.length - 2 ? " decoy" : "") },
      "l" + i + " " + node.container, node.actor ? el("span", { class: "actor" }, " ← " + node.actor) : null)));
    const rows = roles.map((role) => el("tr", { data: { agent: role } },
      el("th", {}, role, roleOf[role] ? el("span", { class: "chip" }, roleOf[role]) : null),
      chain.map((_, i) => {
        const seen = (windows[role] || []).some(([s, e]) => s <= i && i <= e);
        return el("td", { class: seen ? "window" : "" }, seen ? "seen" : "");
      })));
    return el("section", {}, el("h2", {}, "State chain and observation windows"),
      el("p", { class: "note" }, "True endpoint " + env.endpoint + "; decoy " + env.decoy + ". A shaded cell: the role saw the object in that node."),
      el("div", { class: "scroll" }, el("table", { class: "grid chain" }, el("thead", {}, head), el("tbody", {}, rows))));
  }

  const REASONS = {
    malformed: "not of the form [T:Name] or [S:Name@Rk]",
    unknown_source: "no testimony from that name, or no statement by it in that round",
    self: "the speaker's own statement",
    later_round: "a statement of the same or a later round",
    repeated: "the same source cited again in this statement",
    source_not_in_conversation: "the cited testimony or statement is not stored in this conversation",
  };
  const FAILURES = {
    parse_failure: "the extractor's answer could not be read",
    no_statement: "the statement itself failed, so there is nothing to extract",
    not_labelled: "this judge did not label the statement",
  };
  const ROOT_TEXT = { "true": "TRUE ROOT", "false": "FALSE ROOT" };

  function carriesKind(node) {
    if (node.kind === "testimony") return node.root || "other";
    const c = node.carries || [];
    return c.length === 2 ? "both" : c.length ? c[0] : "none";
  }

  function carriesText(node) {
    const c = node.carries || [];
    if (c.length === 2) return "holds true + false roots";
    return c.length ? "holds the " + c[0] + " root" : "holds no root";
  }

  function nodeSpec(node) {
    const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
    if (node.kind === "testimony") {
      const how = node.channel === "direct" ? "direct" : "broadcast";
      return {
        id: node.id, x: node.x, y: node.y, cls: "testimony root-" + (node.root || "other"),
        lines: [node.agent, "testimony · " + how, node.supports ? "supports " + node.supports : "supports no container",
          ROOT_TEXT[node.root] || "other testimony"],
        title: node.agent + " (" + node.role + "): testimony, " + how + (node.supports ? ", supports " + node.supports : "") +
          " · " + (node.root ? node.root + " root" : "not a root of the lineage measures"),
        data: { seq: String(node.seq), agent: node.agent, kind: "testimony", root: node.root || "other" },
      };
    }
    const failed = node.extraction !== "ok";
    const second = node.phase + " · " + (failed ? "no claims" : plural(node.claims, "citation"));
    const third = failed ? (node.extraction === "not_labelled" ? "not labelled" : "extraction failed") : carriesText(node);
    const fourth = failed ? node.extraction : node.unresolved ? "⚠ " + node.unresolved + " unresolved" : "";
    return {
      id: node.id, x: node.x, y: node.y,
      cls: "statement carries-" + carriesKind(node) + (failed ? " extraction-failed" : "") + (node.unresolved ? " has-unresolved" : ""),
      lines: [node.agent, second, third, fourth],
      title: node.agent + " (" + node.role + ") at " + node.phase + ": " + [second, third, fourth].filter(Boolean).join(" · "),
      data: { seq: String(node.seq), agent: node.agent, kind: "statement", carries: carriesKind(node) },
    };
  }

  function drawGraph(box, graph, data, ctx) {
    BC.clear(box);
    if (graph.error) { box.appendChild(el("p", { class: "error graph-error", role: "alert" }, graph.error)); return; }
    const bySeq = {};
    for (const e of data.events) bySeq[e.seq] = e;
    const kept = graph.nodes.filter((n) => !bySeq[n.seq] || BC.keeps(bySeq[n.seq], ctx.agent));
    const ids = new Set(kept.map((n) => n.id));
    const at = {};
    for (const n of graph.nodes) at[n.id] = n;
    const edges = graph.edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map((e) => ({
      source: e.source, target: e.target, cls: carriesKind(at[e.target]),
      title: at[e.source].agent + " (" + at[e.source].phase + ") cites " + e.cited + (e.supports ? ", supporting " + e.supports : ""),
    }));
    const columns = graph.columns.map((c) => ({ x: c.x, label: c.label === "T1" ? "testimonies (T1)" : c.label }));
    const spec = {
      width: graph.width, height: graph.height, node_width: graph.node_width, node_height: graph.node_height,
      title: "citation graph (" + graph.judge + ")", columns: columns, nodes: kept.map(nodeSpec), edges: edges,
    };
    const hidden = graph.nodes.length - kept.length;
    BC.append(box, [
      graph.edges.length ? null : el("p", { class: "note no-citations" }, "No statement of this conversation cites a testimony or an earlier statement (under " + graph.judge + ")."),
      el("div", { class: "scroll" }, BC.graph(spec, ["true", "false", "both", "none", "other"], (node) => ctx.open(Number(node.data.seq)))),
      hidden ? el("p", { class: "note graph-filter-note" }, hidden + " testimony node(s) " + ctx.agent + " did not receive are left out, with their citations.") : null,
      el("ul", { class: "graph-legend" },
        el("li", {}, el("span", { class: "swatch root-true" }), "TRUE ROOT: the second-key's testimony (solid green)"),
        el("li", {}, el("span", { class: "swatch root-false" }), "FALSE ROOT: the key role's false testimony, in C1 (dashed red)"),
        el("li", {}, el("span", { class: "swatch root-other" }), "other testimony"),
        el("li", {}, "A statement holds a root when its citations reach it through any number of hands; an arrow points to what is cited and is coloured by the root it carries (green true, red false, purple both, grey none). Click a node to see its event."))
    ]);
    const unresolved = graph.unresolved.filter((u) => ids.has(u.from));
    if (unresolved.length) {
      BC.append(box, [el("h3", {}, "Citations that could not be resolved"),
        el("table", { class: "grid unresolved" },
          el("thead", {}, el("tr", {}, ["statement", "citation", "reason"].map((t) => el("th", {}, t)))),
          el("tbody", {}, unresolved.map((u) => el("tr", { data: { seq: String(u.seq), reason: u.reason } },
            el("td", {}, BC.eventButton(bySeq[u.seq], ctx, u.agent + " · " + u.phase)),
            el("td", {}, BC.textBlock(u.text)),
            el("td", {}, el("strong", {}, u.reason), " ", REASONS[u.reason] || "")))))]);
    }
    const failed = graph.failed.filter((f) => ids.has("e" + f.seq));
    if (failed.length) {
      BC.append(box, [el("h3", {}, "Statements without extracted claims"),
        el("table", { class: "grid extraction-failures" },
          el("thead", {}, el("tr", {}, ["statement", "status"].map((t) => el("th", {}, t)))),
          el("tbody", {}, failed.map((f) => el("tr", { data: { seq: String(f.seq), status: f.status } },
            el("td", {}, BC.eventButton(bySeq[f.seq], ctx, f.agent + " · " + f.phase)),
            el("td", {}, el("strong", {}, f.status), " ", FAILURES[f.status] || "")))))]);
    }
  }

  function citationSection(data, ctx) {
    let found = (data.details || {}).citation_graph;
    const section = el("section", { class: "citations" }, el("h2", {}, "Citation graph"));
    if (!found) found = { note: "This copy of the conversation carries no citation graph." };
    if (found.note) { section.appendChild(el("p", { class: "note no-citations" }, found.note)); return section; }
    const box = el("div", { class: "graph-box" });
    const judges = found.judges.filter((j) => found.graphs[j]);
    let judge = judges[0];
    BC.append(section, [
      el("p", { class: "note" }, "Who cited whom: testimonies on the left, then each round's statements; claims as the citation judge extracted them." +
        (data.conversation.status !== "done" ? " This conversation is " + data.conversation.status + ": the graph shows what it stored." : "")),
      judges.length > 1 ? el("p", {}, el("label", {}, "citation judge ", el("select", { class: "citation-judge", on: { change: (e) => { judge = e.target.value; drawGraph(box, found.graphs[judge], data, ctx); } } },
        judges.map((j) => el("option", { value: j }, j))))) : null,
      box]);
    drawGraph(box, found.graphs[judge], data, ctx);
    return section;
  }

  function render(container, data, ctx) {
    const meta = data.conversation.meta || {};
    const env = meta.environment || (meta.item && meta.item.environment) || {};
    const agents = (meta.agents || []).map((a) => a.name);
    const checkpoints = [];
    const votes = {};
    const messages = [];
    for (const e of data.events) {
      if (e.kind === "probe" && e.name === "vote") {
        const label = (e.meta && e.meta.checkpoint) || String(e.round);
        if (!checkpoints.includes(label)) checkpoints.push(label);
        votes[e.agent + "|" + label] = e;
      } else if (e.kind === "message") messages.push(e);
    }
    const voteRows = agents.map((a) => el("tr", { data: { agent: a } }, el("th", {}, a),
      checkpoints.map((c) => {
        const e = votes[a + "|" + c];
        if (!e || !BC.keeps(e, ctx.agent)) return el("td", {}, "");
        const kind = kindOf(e.status === "ok" ? e.value : null, env);
        return el("td", { class: "vote vote-" + kind, data: { checkpoint: c } },
          BC.eventButton(e, ctx, [BC.chip(kind, "belief"), BC.textBlock(e.status === "ok" ? String(e.value) : e.text)]));
      })));
    const shown = messages.filter((e) => BC.keeps(e, ctx.agent)).map((e) => {
      const m = e.meta || {};
      const to = m.kind === "direct" ? "to " + (m.recipients || m.audience || []).join(", ") : m.kind === "broadcast" ? "to everyone" : "";
      return el("tr", {}, el("td", {}, String(e.round)), el("td", {}, e.agent),
        el("td", {}, e.name, to ? el("span", { class: "chip" }, to) : null, m.truthful === false ? el("span", { class: "chip adversary" }, "false testimony") : null,
          m.supports ? el("span", { class: "chip" }, "supports " + m.supports) : null),
        el("td", {}, BC.eventButton(e, ctx, BC.textBlock(e.text))));
    });
    const timeline = (data.conversation.metrics || {}).timeline || [];
    BC.append(container, [
      chainSection(meta),
      el("section", {}, el("h2", {}, "Private votes"),
        el("p", { class: "note" }, timeline.map((t) => t.checkpoint + ": " + t.outcome + " (" + t.true + " true, " + t.decoy + " decoy of " + t.voters + ")").join(" · ")),
        el("table", { class: "grid votes" }, el("thead", {}, el("tr", {}, el("th", {}, "agent"), checkpoints.map((c) => el("th", {}, c)))), el("tbody", {}, voteRows))),
      el("section", {}, el("h2", {}, "Testimonies and discussion"),
        el("table", { class: "grid messages" }, el("thead", {}, el("tr", {}, ["round", "from", "kind", "text"].map((h) => el("th", {}, h)))), el("tbody", {}, shown))),
      citationSection(data, ctx)]);
  }

  BC.views.register("testimony", { render: render });
})();
