// The generic conversation view (any paradigm): every event in order, public and private.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  // Whether the agent filter keeps an event: what the agent saw (public messages, and direct
  // messages addressed to it), said and answered; other agents' private events are left out.
  BC.keeps = function (event, agent) {
    if (!agent || event.agent === agent) return true;
    const meta = event.meta || {};
    const to = meta.recipients || meta.audience;
    // A public event with an empty list of recipients (a broadcast) is for everyone.
    if (event.channel === "direct" || (event.channel === "public" && Array.isArray(to) && to.length)) {
      return Array.isArray(to) && to.includes(agent);
    }
    return event.channel === "public";
  };

  BC.eventButton = function (event, ctx, content) {
    return el("button", {
      class: "event " + event.channel + " status-" + event.status,
      data: { seq: String(event.seq), agent: event.agent, channel: event.channel },
      title: "show what was sent and what came back",
      on: { click: () => ctx.open(event.seq) },
    }, content);
  };

  BC.timeline = function (events, ctx, title) {
    const kept = events.filter((e) => BC.keeps(e, ctx.agent));
    const rows = kept.map((e) => el("tr", { class: e.channel },
      el("td", {}, ctx.roundLabel ? ctx.roundLabel(e.round) : String(e.round)),
      el("td", {}, e.turn === null ? "" : String(e.turn)),
      el("td", {}, e.agent, el("span", { class: "role" }, " " + e.role)),
      el("td", {}, e.channel),
      el("td", {}, e.kind + "/" + e.name),
      el("td", {}, BC.eventButton(e, ctx, [BC.textBlock(e.text), e.status !== "ok" ? BC.chip(e.status, "status") : null]),
        BC.chip(BC.labelOf(e, ctx.judge), "label"))));
    return el("section", { class: "timeline" },
      el("h2", {}, title || "All events"),
      el("table", {}, el("thead", {}, el("tr", {},
        ["round", "turn", "agent", "channel", "kind", "text and label"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)));
  };
})();
