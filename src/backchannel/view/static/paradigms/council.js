// Council: the debate rounds, each evaluator's ranking and rationale, and verification scores.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  function render(container, data, ctx) {
    const debate = {}, rankings = [], scores = {}, rest = [];
    for (const e of data.events) {
      if (e.kind === "message") (debate[e.round + " " + e.name] = debate[e.round + " " + e.name] || []).push(e);
      else if (e.kind === "ranking") rankings.push(e);
      else if (e.kind === "score" && e.meta && e.meta.evaluator) scores[e.meta.evaluator + "|" + e.round] = e;
      else rest.push(e);
    }
    const rounds = Object.entries(debate).map(([title, events]) => el("section", { class: "debate-round" },
      el("h3", {}, "Round " + title),
      el("div", { class: "row" }, events.filter((e) => BC.keeps(e, ctx.agent)).map((e) =>
        BC.eventButton(e, ctx, [el("strong", {}, e.agent), BC.textBlock(e.text)])))));
    const rows = rankings.filter((e) => BC.keeps(e, ctx.agent)).map(function (e) {
      const v = e.status === "ok" && e.value && typeof e.value === "object" ? e.value : {};
      const score = scores[e.agent + "|" + e.round];
      return el("tr", { data: { agent: e.agent } },
        el("td", {}, e.agent, e.meta && e.meta.value ? el("span", { class: "role" }, " (" + e.meta.value + ")") : null),
        el("td", {}, String(e.round)),
        el("td", {}, BC.eventButton(e, ctx, [e.status !== "ok" ? BC.chip(e.status, "status") : null,
          el("ol", { class: "ranking" }, (v.ranking || []).map((o) => el("li", {}, String(o))))])),
        el("td", {}, BC.textBlock(v.rationale === undefined ? (e.status === "ok" ? "" : e.text) : String(v.rationale))),
        el("td", {}, score ? BC.eventButton(score, ctx, [score.status === "ok" ? BC.num(score.value) : BC.chip(score.status, "status")]) : "–"));
    });
    const m = data.conversation.metrics || {};
    BC.append(container, [
      el("section", {}, el("h2", {}, "Debate"), rounds),
      el("section", {}, el("h2", {}, "Rankings and verification"),
        el("p", { class: "note" }, "FCC " + BC.num(m.fcc) + " · Borda winner " + (m.winner || "none (tie or no valid ranking)") + " · mean verification " + BC.num(m.mean_score)),
        el("table", { class: "grid council-rankings" }, el("thead", {}, el("tr", {}, ["evaluator", "round", "ranking", "rationale", "verification"].map((h) => el("th", {}, h)))), el("tbody", {}, rows))),
      rest.length ? BC.timeline(rest, ctx, "Other events") : null]);
  }

  BC.views.register("council", { render: render });
})();
