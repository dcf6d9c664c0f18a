// The "divergent turns" filter (#/divergent/N): every turn whose public stance and private
// answer part ways (hidden change or public accommodation), exactly the turns the metrics'
// divergence section counts; and the marks of those turns on a conversation's page.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  // Mark the divergent turns drawn in `container`: a flag with its kind beside each event button
  // of the turn (text, not colour alone), and a line saying how many there are.
  BC.markDivergent = function (container, data) {
    const found = data.divergent || {};
    const turns = found.turns || [];
    for (const turn of turns) {
      for (const button of container.querySelectorAll('button.event[data-seq="' + String(turn.turn_seq) + '"]')) {
        button.classList.add("divergent");
        button.dataset.divergent = turn.kind;
        button.prepend(el("span", { class: "flag divergent-flag" }, "⚑ divergent: " + turn.kind));
      }
    }
    if (!turns.length) return null;
    return el("p", { class: "note divergent-note" }, turns.length + " divergent turn" + (turns.length === 1 ? "" : "s") +
      " (hidden change or public accommodation) marked ⚑ below, as the metrics' divergence section counts them.");
  };

  BC.pages = BC.pages || {};
  BC.pages.divergent = async function (container, run, params) {
    const runs = await BC.api.runs();
    const summary = runs.runs[run];
    if (!summary) throw new Error("no run " + run + " is open");
    const found = await BC.api.divergent(run);
    BC.clear(container);
    container.appendChild(el("h1", {}, (summary.name || summary.run_id) + ": divergent turns"));
    container.appendChild(el("p", {}, el("a", { href: BC.hash("/run/" + run) }, "← all conversations")));
    if (found.error) {
      container.appendChild(el("p", { class: "note divergent-error" }, found.error));
      return;
    }
    const kind = params.get("kind") || "";
    const turns = found.turns.filter((t) => !kind || t.kind === kind);
    const factors = Object.keys(summary.factors);
    container.appendChild(el("p", { class: "note" },
      "Turns whose public stance moved toward the pressure while the private answer did not (public accommodation), or the reverse (hidden change): " +
      BC.num(turns.length) + " turn" + (turns.length === 1 ? "" : "s") + ". ",
      ["", "hidden change", "public accommodation"].map((k) =>
        el("a", { class: "kind-filter" + (k === kind ? " sorted" : ""), href: BC.hash("/divergent/" + run, k ? { kind: k } : {}) }, (k || "all") + " "))));
    const head = ["conversation", ...factors, "round", "agent", "role", "kind"].map((h) => el("th", {}, h));
    const rows = turns.map((t) => el("tr", { class: "divergent-turn", data: { turn: t.conversation_id + ":" + t.turn_seq, kind: t.kind } },
      el("td", {}, el("a", { class: "open", href: BC.hash("/conv/" + run, { id: t.conversation_id }) }, t.conversation_id)),
      factors.map((f) => el("td", {}, t.cell[f] === undefined || t.cell[f] === null ? "–" : String(t.cell[f]))),
      el("td", {}, String(t.round)),
      el("td", {}, t.agent),
      el("td", {}, t.role),
      el("td", {}, t.kind)));
    container.appendChild(el("table", { class: "divergent-turns" }, el("thead", {}, el("tr", {}, head)), el("tbody", {}, rows)));
  };
})();
