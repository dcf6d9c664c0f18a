// The conversations table: paged, sortable, filterable (factor levels, status, item, text),
// with each paradigm's per-conversation metrics; refreshes itself while a run is being written.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;
  let timer = null;

  function value(v) {
    if (v === null || v === undefined) return "–";
    return typeof v === "number" ? BC.num(v) : String(v);
  }

  BC.pages = BC.pages || {};
  BC.pages.list = async function (container, run, params) {
    if (timer) clearInterval(timer);
    const runs = await BC.api.runs();
    const summary = runs.runs[run];
    if (!summary) throw new Error("no run " + run + " is open");
    const query = Object.fromEntries(params.entries());
    query.limit = query.limit || "50";
    const page = await BC.api.page(run, query);
    const go = (changes) => { location.hash = BC.hash("/run/" + run, Object.assign({}, query, changes)); };
    BC.clear(container);

    const form = el("form", { class: "filters", on: { submit: (e) => {
      e.preventDefault();
      const data = new FormData(form);
      const next = { limit: query.limit, sort: query.sort, desc: query.desc, offset: 0 };
      for (const [k, v] of data.entries()) next[k] = v;
      location.hash = BC.hash("/run/" + run, next);
    } } });
    const select = (name, options, current) => el("select", { name: name },
      options.map(([v, text]) => el("option", { value: v, selected: v === (current || "") }, text)));
    form.appendChild(el("label", {}, "status ", select("status", [["", "any"], ["done", "done"], ["incomplete", "incomplete"], ["failed", "failed"]], query.status)));
    for (const [factor, levels] of Object.entries(summary.factors)) {
      form.appendChild(el("label", {}, factor + " ", select("f." + factor, [["", "any"], ...levels.map((l) => [JSON.stringify(l), String(l)])], query["f." + factor])));
    }
    form.appendChild(el("label", {}, "item ", el("input", { name: "item", value: query.item || "", size: 14 })));
    form.appendChild(el("label", {}, "search ", el("input", { name: "q", type: "search", value: query.q || "", size: 18, placeholder: BC.api.staticMode ? "ids, items, questions" : "any text" })));
    const figures = Object.keys(query).filter((k) => k.startsWith("m.") && query[k] !== "");
    for (const key of figures) form.appendChild(el("input", { type: "hidden", name: key, value: query[key] }));
    form.appendChild(el("button", { type: "submit" }, "Apply"));
    if (BC.api.staticMode) form.appendChild(el("p", { class: "note" }, "In this static copy search covers ids, items and questions; `backchannel view RUN` searches every message."));

    const columns = [["conversation_id", "conversation"], ["item_id", "item"],
      ...Object.keys(summary.factors).map((f) => ["factor:" + f, f]), ["replicate", "rep"], ["status", "status"]];
    const header = columns.map(([key, title]) => el("th", {},
      el("a", { href: BC.hash("/run/" + run, Object.assign({}, query, { sort: key, desc: query.sort === key && query.desc !== "1" ? "1" : "", offset: 0 })), class: query.sort === key ? "sorted" : "" },
        title + (query.sort === key ? (query.desc === "1" ? " ▼" : " ▲") : ""))));
    const shownColumns = summary.columns.filter((c) => c.shown !== false);
    const titles = Object.fromEntries(summary.columns.map((c) => [c.key, c.title]));
    const figureNote = figures.length ? el("p", { class: "figure-filter" }, "Only conversations whose ",
      figures.map((k, i) => [i ? " and " : "", el("strong", {}, titles[k.slice(2)] || k.slice(2)), " is ", el("code", {}, query[k])]),
      " · ", el("a", { href: BC.hash("/run/" + run, Object.fromEntries(Object.entries(query).filter(([k]) => !k.startsWith("m.")))) }, "show all")) : null;
    const withBadges = page.conversations.some((c) => (c.badges || []).length);
    const metricHeads = shownColumns.map((c) => {
      const key = "metric:" + c.key;
      return el("th", { title: c.help }, el("a", { href: BC.hash("/run/" + run, Object.assign({}, query, { sort: key, desc: query.sort === key && query.desc !== "1" ? "1" : "", offset: 0 })), class: query.sort === key ? "sorted" : "" },
        c.title + (query.sort === key ? (query.desc === "1" ? " ▼" : " ▲") : "")));
    });
    const chosen = [];
    const compare = el("button", { type: "button", disabled: true, on: { click: () => {
      location.hash = BC.hash("/compare", { a: run + ":" + chosen[0], b: run + ":" + chosen[1] });
    } } }, "Compare the two ticked");
    const rows = page.conversations.map((c) => el("tr", { class: "status-" + c.status, data: { id: c.conversation_id } },
      el("td", {}, el("input", { type: "checkbox", title: "tick two to compare", on: { change: (e) => {
        if (e.target.checked) chosen.push(c.conversation_id); else chosen.splice(chosen.indexOf(c.conversation_id), 1);
        compare.disabled = chosen.length !== 2;
      } } })),
      el("td", {}, el("a", { class: "open", href: BC.hash("/conv/" + run, { id: c.conversation_id }) }, c.conversation_id)),
      el("td", {}, c.item_id),
      Object.keys(summary.factors).map((f) => el("td", {}, value(c.cell[f]))),
      el("td", {}, String(c.replicate)),
      el("td", { title: c.error || "" }, c.status),
      shownColumns.map((m) => el("td", { class: "metric", title: c.metrics._note || "", data: { key: m.key } }, value(c.metrics[m.key]))),
      withBadges ? el("td", { class: "badges" }, (c.badges || []).map(BC.chipOf)) : null));
    const offset = Number(page.offset), limit = Number(page.limit);
    const pager = el("p", { class: "pager" },
      el("button", { type: "button", disabled: offset === 0, on: { click: () => go({ offset: Math.max(0, offset - limit) }) } }, "← previous"),
      " rows " + (page.total ? offset + 1 : 0) + "–" + Math.min(offset + limit, page.total) + " of " + BC.num(page.total) + " ",
      el("button", { type: "button", disabled: offset + limit >= page.total, on: { click: () => go({ offset: offset + limit }) } }, "next →"),
      " ", compare);
    const live = el("p", { class: "note live", "aria-live": "polite" });
    container.append(
      el("h1", {}, (summary.name || summary.run_id) + ": conversations"),
      form,
      el("p", { class: "divergent-link" }, "Filter: ", el("a", { href: BC.hash("/divergent/" + run) }, "divergent turns"),
        " (public stance and private answer part ways)"),
      figureNote, pager,
      el("table", { class: "conversations" }, el("thead", {}, el("tr", {}, el("th", {}, ""), header, metricHeads, withBadges ? el("th", {}, "") : null)), el("tbody", {}, rows)),
      live);
    if (!BC.api.staticMode) {
      const seen = summary.counts.total;
      timer = setInterval(async function () {
        if (!document.body.contains(live)) { clearInterval(timer); return; }
        try {
          const now = (await BC.api.runs()).runs[run].counts.total;
          if (now !== seen) { clearInterval(timer); BC.render(); }
        } catch (error) {
          live.textContent = "cannot reach the viewer's server: " + error.message;
        }
      }, 3000);
    }
  };
})();
