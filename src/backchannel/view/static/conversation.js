// The conversation page (the paradigm's view drawn by panels.js, or the generic timeline), the
// per-agent filter and the side-by-side comparison of two conversations.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  function agentsOf(data) {
    const names = [];
    for (const e of data.events) if (!names.includes(e.agent)) names.push(e.agent);
    return names;
  }

  function judgesOf(data) {
    const names = new Set();
    for (const e of data.events) for (const l of e.labels || []) names.add(l.judge);
    return [...names].sort();
  }

  function figure(v) {
    return typeof v === "number" ? BC.num(v) : v === null || v === undefined ? "–" : String(v);
  }

  function header(data, run) {
    const c = data.conversation;
    const metrics = Object.entries(c.metrics || {}).filter(([k, v]) => k !== "_note" && (v === null || typeof v !== "object"));
    const badges = [...(c.badges || []), ...((data.page && data.page.badges) || [])];
    return el("section", { class: "conv-head" },
      el("h1", {}, c.conversation_id),
      el("p", { class: "sub" }, "item " + c.item_id + " · replicate " + c.replicate + " · seed " + c.seed + " · ", el("strong", { class: "status-" + c.status }, c.status)),
      c.error ? el("p", { class: "error" }, c.error) : null,
      el("p", {}, Object.entries(c.cell).map(([k, v]) => el("span", { class: "chip factor" }, k + " = " + JSON.stringify(v)))),
      c.meta && c.meta.item && c.meta.item.question ? BC.textBlock(c.meta.item.question, "question") : null,
      badges.length ? el("p", { class: "badges" }, badges.map(BC.chipOf)) : null,
      metrics.length ? el("p", { class: "conv-metrics" }, metrics.map(([k, v]) => el("span", { class: "chip metric", data: { key: k } }, k + " " + figure(v)))) : null,
      c.metrics && c.metrics._note ? el("p", { class: "note metrics-note" }, c.metrics._note) : null,
      el("p", {}, el("a", { href: BC.hash("/run/" + run) }, "← all conversations")));
  }

  // Draw one conversation into `container`; `agent` filters, `judge` picks the labels.
  BC.drawConversation = function (container, data, run, options) {
    const labels = data.round_labels || {};
    const ctx = {
      run: run,
      agent: options.agent || null,
      judge: (data.page && data.page.judge) || options.judge || data.primary_judge || judgesOf(data)[0] || null,
      open: (seq) => BC.showEvent(run, data.conversation.conversation_id, seq),
      roundLabel: (number) => (String(number) in labels ? labels[String(number)] : String(number)),
    };
    const body = el("div", { class: "conv-body" });
    BC.renderPage(body, data, ctx);
    const note = BC.markDivergent(body, data);
    if (note) container.appendChild(note);
    container.appendChild(body);
    return ctx;
  };

  BC.pages = BC.pages || {};
  BC.pages.conversation = async function (container, run, params) {
    const id = params.get("id");
    if (!id) throw new Error("no conversation given: open one from the conversations table");
    const data = await BC.api.conversation(run, id, params.get("judge") || "");
    BC.clear(container);
    container.appendChild(header(data, run));
    const agent = params.get("agent") || "";
    const judges = judgesOf(data);
    const judge = params.get("judge") || data.primary_judge || judges[0] || "";
    const set = (changes) => { location.hash = BC.hash("/conv/" + run, Object.assign({ id: id, agent: agent, judge: params.get("judge") }, changes)); };
    const toolbar = el("p", { class: "toolbar" },
      el("label", {}, "agent ", el("select", { id: "agent-filter", on: { change: (e) => set({ agent: e.target.value }) } },
        el("option", { value: "", selected: !agent }, "all agents"),
        agentsOf(data).map((a) => el("option", { value: a, selected: a === agent }, a)))),
      judges.length > 1 ? el("label", {}, " judge ", el("select", { on: { change: (e) => set({ judge: e.target.value }) } },
        judges.map((j) => el("option", { value: j, selected: j === judge }, j)))) : null,
      " ",
      el("a", { href: BC.hash("/compare", { a: run + ":" + id }) }, "compare with another conversation"));
    container.appendChild(toolbar);
    if (agent) container.appendChild(el("p", { class: "note filter-note" }, "Showing what " + agent + " saw, said and answered: other agents' private answers are hidden."));
    BC.drawConversation(container, data, run, { agent: agent, judge: judge });
  };

  function parseRef(ref) {
    if (!ref) return null;
    const at = ref.indexOf(":");
    return { run: Number(ref.slice(0, at)), id: ref.slice(at + 1) };
  }

  BC.pages.compare = async function (container, params) {
    const a = parseRef(params.get("a")), b = parseRef(params.get("b"));
    BC.clear(container);
    container.appendChild(el("h1", {}, "Compare two conversations"));
    const form = el("form", { class: "filters", on: { submit: (e) => {
      e.preventDefault();
      const data = new FormData(form);
      location.hash = BC.hash("/compare", { a: data.get("a"), b: data.get("b") });
    } } },
      el("label", {}, "left ", el("input", { name: "a", value: params.get("a") || "", size: 50, placeholder: "RUN:CONVERSATION_ID" })),
      el("label", {}, " right ", el("input", { name: "b", value: params.get("b") || "", size: 50, placeholder: "RUN:CONVERSATION_ID" })),
      el("button", { type: "submit" }, "Compare"));
    container.appendChild(form);
    if (!a || !b) {
      container.appendChild(el("p", { class: "note" }, "Give two conversations as RUN:ID (run numbers start at 0), or tick two in a conversations table."));
      return;
    }
    const [left, right] = await Promise.all([BC.api.conversation(a.run, a.id), BC.api.conversation(b.run, b.id)]);
    const pane = (data, ref) => {
      const box = el("div", { class: "pane" });
      box.appendChild(header(data, ref.run));
      BC.drawConversation(box, data, ref.run, {});
      return box;
    };
    container.appendChild(el("div", { class: "compare" }, pane(left, a), pane(right, b)));
  };
})();
