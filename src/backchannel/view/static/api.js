// Where the data comes from: the local server's JSON API, or the data files of a static copy
// (loaded as scripts, since a page opened from file:// may not fetch files).
"use strict";
(function () {
  const BC = window.BC;
  const staticMode = document.body.dataset.mode === "static";
  const waiting = {};
  const delivered = {};

  BC.deliver = function (key, data) {
    delivered[key] = data;
    (waiting[key] || []).forEach((w) => w.resolve(data));
    delete waiting[key];
  };

  function load(key, src) {
    if (key in delivered) return Promise.resolve(delivered[key]);
    return new Promise(function (resolve, reject) {
      const first = !waiting[key];
      (waiting[key] = waiting[key] || []).push({ resolve: resolve, reject: reject });
      if (!first) return;
      const script = document.createElement("script");
      script.src = src;
      script.onerror = function () {
        (waiting[key] || []).forEach((w) => w.reject(new Error("the static copy lacks " + src)));
        delete waiting[key];
      };
      document.head.appendChild(script);
    });
  }

  async function get(path, params) {
    const query = new URLSearchParams(params || {}).toString();
    const response = await fetch("/api/" + path + (query ? "?" + query : ""), { cache: "no-store" });
    let body;
    try {
      body = await response.json();
    } catch (e) {
      throw new Error("the viewer's server sent no readable answer (" + response.status + ")");
    }
    if (!response.ok) throw new Error(body.error || "request failed (" + response.status + ")");
    return body;
  }

  // A filter's value is JSON (`3`, `"C1"`); the server refuses anything else, and so does this.
  function wanted(key, text) {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error("the value of " + key + " must be JSON (e.g. 3 or \"decoy\"), got " + JSON.stringify(text));
    }
  }

  function same(have, want) {
    if (typeof have === "number" && typeof want === "number") return have === want;
    return JSON.stringify(have === undefined ? null : have) === JSON.stringify(want);
  }

  // Static copy: filtering, sorting and paging of the table happen here, over the list file.
  function matches(row, params) {
    if (params.status && row.status !== params.status) return false;
    if (params.item && !row.item_id.toLowerCase().includes(params.item.toLowerCase())) return false;
    for (const [key, level] of Object.entries(params)) {
      if (level === "" || !(key.startsWith("f.") || key.startsWith("m."))) continue;
      const have = key.startsWith("f.") ? row.cell[key.slice(2)] : (row.metrics || {})[key.slice(2)];
      if (!same(have, wanted(key, level))) return false;
    }
    if (params.q && !row._search.includes(params.q.toLowerCase())) return false;
    return true;
  }

  function sortKey(row, sort) {
    if (sort.startsWith("factor:")) return row.cell[sort.slice(7)];
    if (sort.startsWith("metric:")) return row.metrics[sort.slice(7)];
    return row[sort === undefined ? "position" : sort];
  }

  async function staticPage(run, params) {
    const list = await load("list/" + run, "data/r" + run + "/list.js");
    const sort = params.sort || "position";
    const desc = params.desc === "1";
    const rows = list.filter((r) => matches(r, params));
    rows.sort(function (a, b) {
      const x = sortKey(a, sort), y = sortKey(b, sort);
      const missing = (x === null || x === undefined) - (y === null || y === undefined);
      if (missing) return missing; // rows without a value come last in either direction
      const order = x < y ? -1 : x > y ? 1 : 0;
      return (desc ? -order : order) || a.position - b.position;
    });
    const offset = Number(params.offset || 0), limit = Number(params.limit || 50);
    return { total: rows.length, offset: offset, limit: limit, conversations: rows.slice(offset, offset + limit) };
  }

  async function staticConversation(run, id) {
    const list = await load("list/" + run, "data/r" + run + "/list.js");
    const row = list.find((r) => r.conversation_id === id);
    if (!row) throw new Error("the run has no conversation " + JSON.stringify(id));
    return load("conv/" + run + "/" + row._file, "data/r" + run + "/c" + row._file + ".js");
  }

  // The copy holds the page under the run's judge and, where it differs, under each other judge.
  async function staticPage_(run, id, judge) {
    const data = await staticConversation(run, id);
    const page = judge && data.pages && data.pages[judge] ? data.pages[judge] : data.page;
    return Object.assign({}, data, { page: page });
  }

  BC.api = {
    staticMode: staticMode,
    runs: () => (staticMode ? load("runs", "data/runs.js") : get("runs")),
    page: (run, params) => (staticMode ? staticPage(run, params) : get("runs/" + run + "/conversations", params)),
    conversation: (run, id, judge) => (staticMode ? staticPage_(run, id, judge) : get("runs/" + run + "/conversation", judge ? { id: id, judge: judge } : { id: id })),
    event: async function (run, id, seq) {
      if (!staticMode) return get("runs/" + run + "/event", { id: id, seq: seq });
      const data = await staticConversation(run, id);
      const found = data.events.find((e) => e.seq === Number(seq));
      if (!found) throw new Error("conversation has no event " + seq);
      return found;
    },
    metrics: (run) => (staticMode ? load("metrics/" + run, "data/r" + run + "/metrics.js") : get("runs/" + run + "/metrics")),
    divergent: (run) => (staticMode ? load("divergent/" + run, "data/r" + run + "/divergent.js") : get("runs/" + run + "/divergent")),
  };
})();
