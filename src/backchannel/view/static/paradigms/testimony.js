// Testimony: the state chain with each role's observation windows, the testimonies (direct or
// broadcast) and the discussion, and every agent's private vote at T0, T1, R1..RK.
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
    container.append(
      chainSection(meta),
      el("section", {}, el("h2", {}, "Private votes"),
        el("p", { class: "note" }, timeline.map((t) => t.checkpoint + ": " + t.outcome + " (" + t.true + " true, " + t.decoy + " decoy of " + t.voters + ")").join(" · ")),
        el("table", { class: "grid votes" }, el("thead", {}, el("tr", {}, el("th", {}, "agent"), checkpoints.map((c) => el("th", {}, c)))), el("tbody", {}, voteRows))),
      el("section", {}, el("h2", {}, "Testimonies and discussion"),
        el("table", { class: "grid messages" }, el("thead", {}, el("tr", {}, ["round", "from", "kind", "text"].map((h) => el("th", {}, h)))), el("tbody", {}, shown))));
  }

  BC.views.register("testimony", { render: render });
})();
