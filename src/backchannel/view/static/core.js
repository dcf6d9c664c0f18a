// Shared helpers of the viewer. Every model text reaches the page through text nodes
// (textContent), never as HTML; invisible and reordering characters are shown as marks.
"use strict";
(function () {
  const BC = (window.BC = window.BC || {});

  const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
  const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

  // Text as it will be shown: NUL and other C0 controls become control pictures (NUL -> ␀),
  // direction overrides and isolates become a visible [U+202E] mark so they cannot reorder.
  BC.visible = function (text) {
    if (text === null || text === undefined) return "";
    return String(text)
      .replace(CONTROL, (c) => String.fromCharCode(0x2400 + (c.charCodeAt(0) === 0x7f ? 0x21 : c.charCodeAt(0))))
      .replace(BIDI, (c) => "[U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "]");
  };

  // el("div", {class: "x", data: {agent: "A"}, on: {click: f}, title: "t"}, child, "text", ...)
  BC.el = function (tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "on") {
        for (const [name, handler] of Object.entries(value)) node.addEventListener(name, handler);
      } else if (key === "data") {
        for (const [name, v] of Object.entries(value)) node.dataset[name] = BC.visible(v);
      } else if (key === "href") {
        if (!String(value).startsWith("#")) throw new Error("only in-page links are made");
        node.setAttribute("href", value);
      } else if (key === "text") {
        node.textContent = BC.visible(value);
      } else if (key === "class") {
        node.className = value;
      } else if (/^on/i.test(key) || key === "style" || key === "src" || key === "srcdoc") {
        throw new Error("refusing attribute " + key);
      } else {
        node.setAttribute(key, value === true ? "" : BC.visible(value));
      }
    }
    BC.append(node, children);
    return node;
  };

  BC.append = function (node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(BC.visible(child)));
    }
    return node;
  };

  BC.clear = function (node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  };

  // Texts longer than FOLD characters are shown folded (a "show all" button draws the rest),
  // and a run of more than WORD characters without a space gets a <wbr> break opportunity every
  // WORD characters: a 200,000-character word or a 1 MB message draws in well under a second,
  // where the browser's own line breaking of such a word takes minutes.
  const FOLD = 4000;
  const WORD = 64;
  const LONG_RUN = new RegExp("\\S{" + (WORD + 1) + ",}", "g");

  BC.breakable = function (node, text) {
    let last = 0;
    LONG_RUN.lastIndex = 0;
    for (let m = LONG_RUN.exec(text); m !== null; m = LONG_RUN.exec(text)) {
      if (m.index > last) node.appendChild(document.createTextNode(text.slice(last, m.index)));
      const run = m[0];
      for (let i = 0; i < run.length; i += WORD) {
        if (i) node.appendChild(document.createElement("wbr"));
        node.appendChild(document.createTextNode(run.slice(i, i + WORD)));
      }
      last = m.index + run.length;
    }
    if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
    return node;
  };

  // A block of model text: pre-wrapped, isolated direction, shown exactly (as text), folded
  // when long. options.inline: a short text becomes a span.
  BC.textBlock = function (text, cls, options) {
    const shown = text === "" ? "(empty)" : BC.visible(text);
    if (options && options.inline && shown.length <= WORD && !shown.includes("\n")) {
      return BC.el("span", { class: "part-text " + (cls || "") }, shown);
    }
    const node = BC.el("div", { class: "text " + (cls || ""), dir: "auto" });
    if (shown.length <= FOLD) return BC.breakable(node, shown);
    let cut = FOLD;
    if (/[\uD800-\uDBFF]/.test(shown[cut - 1])) cut -= 1; // never split a surrogate pair
    BC.breakable(node, shown.slice(0, cut));
    const unfold = function (e) {
      if (e.type === "keydown" && e.key !== "Enter" && e.key !== " ") return;
      e.stopPropagation(); // inside an event's button: show the text, do not open the event
      e.preventDefault();
      BC.clear(node);
      BC.breakable(node, shown);
      node.classList.remove("folded");
      node.classList.add("unfolded");
    };
    const more = BC.el("span", { role: "button", tabindex: "0", class: "show-all",
      title: "draw the whole text (" + shown.length.toLocaleString("en") + " characters)",
      on: { click: unfold, keydown: unfold } }, "… show all (" + shown.length.toLocaleString("en") + " characters)");
    node.classList.add("folded");
    node.appendChild(more);
    return node;
  };

  BC.num = function (value, digits) {
    if (value === null || value === undefined || value === "") return "–";
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value)) return value.toLocaleString("en");
    return value.toFixed(digits === undefined ? 3 : digits);
  };

  BC.json = function (value) {
    return JSON.stringify(value, null, 2);
  };

  BC.chip = function (label, kind) {
    if (label === null || label === undefined) return null;
    return BC.el("span", { class: "chip " + (kind || "") + " label-" + String(label).replace(/[^a-z_]/gi, "") }, String(label));
  };

  BC.hash = function (path, params) {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== null && v !== undefined && v !== "") query.set(k, v);
    }
    const text = query.toString();
    return "#" + path + (text ? "?" + text : "");
  };

  BC.route = function () {
    const raw = location.hash.replace(/^#/, "") || "/";
    const at = raw.indexOf("?");
    const path = at < 0 ? raw : raw.slice(0, at);
    const params = new URLSearchParams(at < 0 ? "" : raw.slice(at + 1));
    return { path: path, params: params };
  };

  BC.errorPage = function (container, message) {
    BC.clear(container);
    BC.append(container, [
      BC.el("section", { class: "error-page", role: "alert" },
        BC.el("h1", {}, "Cannot show this page"),
        BC.el("p", { class: "error" }, message),
        BC.el("p", {}, BC.el("a", { href: "#/" }, "Back to the run"))),
    ]);
  };

  // The label one judge gave an event (null when it failed or is missing).
  BC.labelOf = function (event, judge) {
    const found = (event.labels || []).filter((x) => !judge || x.judge === judge);
    if (!found.length) return null;
    return found[0].status === "ok" ? found[0].label : null;
  };
})();
