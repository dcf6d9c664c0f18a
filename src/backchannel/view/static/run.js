// The run page: design, models and endpoints, counts, usage and headline metrics, one column
// per open run.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  function table(head, rows) {
    return el("table", {}, el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c))))));
  }

  function jsonTree(value) {
    if (value === null || typeof value !== "object") {
      return el("span", { class: "leaf" }, typeof value === "number" ? BC.num(value) : String(value));
    }
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    return el("ul", { class: "tree" }, entries.map(([k, v]) =>
      v !== null && typeof v === "object"
        ? el("li", {}, el("details", {}, el("summary", {}, k), jsonTree(v)))
        : el("li", {}, el("span", { class: "key" }, k + ": "), jsonTree(v))));
  }

  function runCard(summary, index) {
    const counts = summary.counts;
    const total = { calls: 0, cache_hits: 0, prompt_tokens: 0, completion_tokens: 0, retries: 0, reasks: 0, failures: 0, parse_failures: 0, cost: 0 };
    for (const u of summary.usage) for (const k of Object.keys(total)) total[k] += u[k] || 0;
    const metricsBox = el("div", { class: "metrics" });
    const button = el("button", { on: { click: async function () {
      BC.clear(metricsBox).appendChild(el("p", { class: "note" }, "Computing the headline metrics (reads every event)…"));
      try {
        const result = await BC.api.metrics(index);
        BC.clear(metricsBox);
        metricsBox.appendChild(result.error ? el("p", { class: "error" }, result.error) : jsonTree(result.metrics));
      } catch (error) {
        BC.clear(metricsBox).appendChild(el("p", { class: "error" }, error.message));
      }
    } } }, "Show headline metrics");
    return el("section", { class: "run-card", data: { run: String(index) } },
      el("h1", {}, summary.name || summary.run_id),
      el("p", { class: "sub" }, summary.run_id + " · " + summary.paradigm + " · " + summary.directory),
      el("p", {}, el("a", { class: "to-list", href: BC.hash("/run/" + index) }, "Conversations (" + BC.num(counts.total) + ") →")),
      el("h2", {}, "Conversations"),
      table(["done", "incomplete", "failed", "total"], [[BC.num(counts.done), BC.num(counts.incomplete), BC.num(counts.failed), BC.num(counts.total)]]),
      el("h2", {}, "Design"),
      table(["factor", "levels"], Object.entries(summary.factors).map(([f, levels]) => [f, levels.map((l) => JSON.stringify(l)).join(", ")])),
      el("h2", {}, "Models and endpoints"),
      summary.endpoints.length
        ? table(["models", "base_url", "max in flight", "key from"], summary.endpoints.map((e) => [String(e.models), String(e.base_url || ""), String(e.max_in_flight || ""), String(e.api_key_env || "–")]))
        : el("p", { class: "note" }, "No endpoints: the run's models are built in (sim) or embedded (local)."),
      el("h2", {}, "Calls"),
      table(["model", "calls", "cache hits", "prompt tok", "completion tok", "retries", "re-asks", "failures", "parse failures", "cost"],
        [...summary.usage, Object.assign({ model: "total" }, total)].map((u) => [u.model, BC.num(u.calls), BC.num(u.cache_hits), BC.num(u.prompt_tokens), BC.num(u.completion_tokens), BC.num(u.retries), BC.num(u.reasks), BC.num(u.failures), BC.num(u.parse_failures), "$" + (u.cost || 0).toFixed(4)])),
      el("h2", {}, "Headline metrics"), button, metricsBox);
  }

  BC.pages = BC.pages || {};
  BC.pages.run = async function (container) {
    const data = await BC.api.runs();
    BC.clear(container);
    container.appendChild(el("div", { class: "runs" }, data.runs.map(runCard)));
  };
})();
