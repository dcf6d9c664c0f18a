// Dyad: two lanes of messages with their ACCEPT / REJECT / IGNORE tags, each role's private
// ratings, and a plot of both roles' aligned ratings and interaction states over rounds.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;
  const ROLES = ["discussant", "opponent"];

  function render(container, data, ctx) {
    const byRound = {};
    let rounds = 0;
    for (const e of data.events) {
      (byRound[e.round] = byRound[e.round] || []).push(e);
      rounds = Math.max(rounds, e.round);
    }
    const lane = (events, role) => events.filter((e) => e.role === role && BC.keeps(e, ctx.agent)).map(function (e) {
      const shown = e.kind === "message" && e.meta && e.meta.argument !== undefined ? e.meta.argument : e.text;
      const tag = e.kind === "message" && e.name === "turn" ? (e.status === "ok" ? e.value : null) : null;
      return BC.eventButton(e, ctx, [
        el("span", { class: "part-kind" }, e.channel === "public" ? e.name : "private rating"),
        " ", tag ? BC.chip(tag, "category") : null,
        e.kind === "rating" ? BC.chip(e.status === "ok" ? "rating " + e.value : null, "belief") : null,
        e.status !== "ok" ? BC.chip(e.status, "status") : null,
        BC.textBlock(shown)]);
    });
    const rows = [];
    for (let r = 0; r <= rounds; r++) {
      const events = byRound[r] || [];
      rows.push(el("tr", { data: { round: String(r) } }, el("th", {}, String(r)),
        ROLES.map((role) => el("td", { class: "lane " + role }, lane(events, role)))));
    }
    const m = data.conversation.metrics || {};
    const series = [];
    if (m.aligned) {
      series.push({ name: "Discussant rating", points: m.aligned.discussant });
      series.push({ name: "Opponent rating", points: m.aligned.opponent });
    }
    if (m.states) {
      series.push({ name: "Discussant state", points: m.states.discussant.map((v, i) => [i, v]), dashed: true });
      series.push({ name: "Opponent state", points: m.states.opponent.map((v, i) => [i, v]), dashed: true });
    }
    BC.append(container, [
      el("section", {}, el("h2", {}, "Ratings and interaction states"),
        el("p", { class: "note" }, "Ratings aligned on the first statement's axis (6 = strongest support); states follow the ACCEPT/REJECT/IGNORE tags."),
        series.length ? BC.plot(series, { ymin: 0, ymax: 6, xlabel: "round", ylabel: "aligned rating", title: "ratings and states" }) : el("p", { class: "note" }, "No ratings to plot.")),
      el("section", {}, el("h2", {}, "Lanes"),
        el("table", { class: "grid dyad-lanes" }, el("thead", {}, el("tr", {}, el("th", {}, "round"), el("th", {}, "Discussant"), el("th", {}, "Opponent"))), el("tbody", {}, rows)))]);
  }

  BC.views.register("dyad", { render: render });
})();
