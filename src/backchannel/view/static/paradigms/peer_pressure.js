// Peer pressure: a rounds x agents grid. Each cell holds the public message with its stance and
// the private answer after that round with its label; adversaries are marked; hidden infection
// (privately manipulated, not endorsing in public) and silent knowers are highlighted.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;
  const HIDDEN = { "manipulated|ignore": 1, "manipulated|hedge": 1 };
  const SILENT = { "true|ignore": 1 };

  function render(container, data, ctx) {
    const meta = data.conversation.meta || {};
    const adversaries = new Set(meta.adversaries || []);
    const agents = (meta.agents || []).map((a) => a.name);
    for (const e of data.events) if (e.role !== "moderator" && !agents.includes(e.agent)) agents.push(e.agent);
    for (const a of meta.agents || []) if (a.role === "adversary") adversaries.add(a.name);
    const publicAt = {}, privateAt = {}, rest = [];
    let rounds = 0, opening = null;
    for (const e of data.events) {
      if (e.kind === "message" && e.name === "opening") opening = e;
      else if (e.kind === "message" && e.name === "turn") publicAt[e.round + "|" + e.agent] = e;
      else if (e.kind === "probe" && e.name === "answer") privateAt[e.round + "|" + e.agent] = e;
      else { rest.push(e); continue; }
      rounds = Math.max(rounds, e.round);
    }
    const part = (event, cls, labelKind) => {
      if (!event) return null;
      const label = BC.labelOf(event, ctx.judge);
      return BC.eventButton(event, ctx, [
        el("span", { class: "part-kind" }, cls === "public" ? "said" : "answered privately"),
        " ", BC.chip(label, labelKind), event.status !== "ok" ? BC.chip(event.status, "status") : null,
        BC.textBlock(event.text)]);
    };
    const head = el("tr", {}, el("th", {}, "round"), agents.map((a) => el("th", {
      class: adversaries.has(a) ? "adversary" : "", data: { agent: a } },
      a, adversaries.has(a) ? el("span", { class: "chip adversary" }, "adversary") : null,
      ctx.agent === a ? el("span", { class: "chip focus" }, "filtered") : null)));
    const body = [];
    for (let r = 0; r <= rounds; r++) {
      const cells = agents.map(function (a) {
        const pub = publicAt[r + "|" + a];
        const priv = BC.keeps({ channel: "private", agent: a }, ctx.agent) ? privateAt[r + "|" + a] : null;
        const key = (priv ? BC.labelOf(priv, ctx.judge) : "") + "|" + (pub ? BC.labelOf(pub, ctx.judge) : "");
        const flag = pub && priv && HIDDEN[key] ? "hidden-infection" : pub && priv && SILENT[key] ? "silent-knower" : "";
        return el("td", { class: "cell " + flag, data: { round: String(r), agent: a } },
          flag ? el("span", { class: "flag" }, flag === "hidden-infection" ? "hidden infection" : "silent knower") : null,
          part(pub, "public", "stance"), priv ? el("div", { class: "private" }, part(priv, "private", "belief")) : null);
      });
      body.push(el("tr", {}, el("th", {}, r === 0 ? "before 1" : String(r)), cells));
    }
    const curve = (data.conversation.metrics || {}).curve || [];
    BC.append(container, [
      opening ? el("section", { class: "opening" }, el("h2", {}, "Opening"), BC.eventButton(opening, ctx, BC.textBlock(opening.text))) : null,
      el("section", {}, el("h2", {}, "Rounds × agents" + (ctx.judge ? " (labels by " + ctx.judge + ")" : "")),
        el("p", { class: "note" }, "Each cell: the public message of that round (stance) and the private answer after it (belief). Click any part to see its prompt."),
        el("div", { class: "scroll" }, el("table", { class: "grid pp-grid" }, el("thead", {}, head), el("tbody", {}, body)))),
      curve.length ? el("section", {}, el("h2", {}, "Infection curve"),
        BC.plot([{ name: "manipulated share", points: curve }], { ymin: 0, ymax: 1, xlabel: "checkpoint (after round)", ylabel: "share of honest agents privately manipulated", title: "infection curve" })) : null,
      rest.length ? BC.timeline(rest, ctx, "Other events (re-asks and more)") : null]);
  }

  BC.views.register("peer_pressure", { render: render });
})();
