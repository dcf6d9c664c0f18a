// The router: #/ (runs), #/run/N (conversations), #/conv/N?id=... (one), #/divergent/N
// (the divergent turns), #/compare?a=&b=.
"use strict";
(function () {
  const BC = window.BC;

  BC.render = async function () {
    const container = document.getElementById("app");
    const route = BC.route();
    const parts = route.path.split("/").filter(Boolean);
    try {
      if (parts.length === 0) await BC.pages.run(container);
      else if (parts[0] === "run" && parts.length === 2) await BC.pages.list(container, Number(parts[1]), route.params);
      else if (parts[0] === "conv" && parts.length === 2) await BC.pages.conversation(container, Number(parts[1]), route.params);
      else if (parts[0] === "divergent" && parts.length === 2) await BC.pages.divergent(container, Number(parts[1]), route.params);
      else if (parts[0] === "compare") await BC.pages.compare(container, route.params);
      else throw new Error("there is no page " + JSON.stringify(route.path));
    } catch (error) {
      BC.errorPage(container, error.message);
    }
    document.body.dataset.ready = String(Date.now());
  };

  window.addEventListener("hashchange", BC.render);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") document.getElementById("detail").hidden = true; });
  BC.render();
})();
