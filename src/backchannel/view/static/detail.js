// The event panel: exactly what was sent (the prompt as the model received it) and what came
// back, with every judge's label and rationale.
"use strict";
(function () {
  const BC = window.BC;
  const el = BC.el;

  function field(name, value) {
    return [el("dt", {}, name), el("dd", {}, value === null || value === undefined ? "–" : value)];
  }

  // Transport retries of the call (rate limits, server errors, dropped connections); runs
  // written before they were recorded per event say so rather than showing 0.
  function retriesText(event) {
    if (!event.model) return null;
    if (event.retries === null || event.retries === undefined) return "not recorded (an older run: see the run page's per-model count)";
    return String(event.retries);
  }

  BC.showEvent = async function (run, conversationId, seq) {
    const panel = document.getElementById("detail");
    BC.clear(panel);
    panel.hidden = false;
    panel.appendChild(el("p", { class: "note" }, "Loading event " + seq + "…"));
    let event;
    try {
      event = await BC.api.event(run, conversationId, seq);
    } catch (error) {
      BC.clear(panel);
      panel.appendChild(el("button", { class: "close", on: { click: () => (panel.hidden = true) } }, "close"));
      panel.appendChild(el("p", { class: "error", role: "alert" }, error.message));
      return;
    }
    BC.clear(panel);
    const meta = event.meta || {};
    const attempts = meta.attempts || 1;
    panel.appendChild(el("button", { class: "close", on: { click: () => (panel.hidden = true) } }, "close"));
    panel.appendChild(el("h2", {}, event.agent + " · " + event.kind + "/" + event.name));
    panel.appendChild(el("dl", { class: "facts" },
      field("round", String(event.round)),
      field("turn", event.turn === null ? null : String(event.turn)),
      field("role", event.role),
      field("channel", event.channel),
      field("status", event.status),
      field("model", event.model || "(no model call)"),
      field("tokens", BC.num(event.prompt_tokens) + " prompt, " + BC.num(event.completion_tokens) + " completion"),
      field("latency", BC.num(event.latency_s, 3) + " s"),
      field("re-asks", String(attempts - 1)),
      field("retries", retriesText(event)),
      field("cache hit", event.cached ? "yes" : "no"),
      meta.error ? field("error", meta.error) : null));
    panel.appendChild(el("h3", {}, "Prompt (as the model received it)"));
    if (event.prompt && event.prompt.length) {
      panel.appendChild(el("ol", { class: "prompt" }, event.prompt.map((m) =>
        el("li", { class: "message role-" + m.role.replace(/[^a-z]/g, "") },
          el("span", { class: "role" }, m.role), BC.textBlock(m.content)))));
    } else {
      panel.appendChild(el("p", { class: "note" }, event.model
        ? "This run did not record prompts (it was written by an older backchannel)."
        : "No model was called for this event (a computed value or a scripted message)."));
    }
    panel.appendChild(el("h3", {}, "Raw answer"));
    panel.appendChild(BC.textBlock(event.text, "raw"));
    if (event.reasoning) {
      panel.appendChild(el("h3", {}, "Reasoning (never shown to other agents)"));
      panel.appendChild(BC.textBlock(event.reasoning, "reasoning"));
    }
    panel.appendChild(el("h3", {}, "Parsed value"));
    panel.appendChild(BC.textBlock(event.value === null ? "(none)" : BC.json(event.value), "value"));
    const extra = Object.assign({}, meta);
    delete extra.error;
    delete extra.attempts;
    if (Object.keys(extra).length) {
      panel.appendChild(el("h3", {}, "Meta"));
      panel.appendChild(BC.textBlock(BC.json(extra), "value"));
    }
    panel.appendChild(el("h3", {}, "Judge labels"));
    if (!event.labels.length) panel.appendChild(el("p", { class: "note" }, "No judge labelled this event."));
    for (const label of event.labels) {
      panel.appendChild(el("div", { class: "judge-label" },
        el("p", {}, el("strong", {}, label.judge), " ", BC.chip(label.label || label.status, "label"),
          " ", label.status, " · ", label.model || ""),
        BC.textBlock(label.text, "rationale")));
    }
    panel.focus();
  };
})();
