// The connection graph: nodes and edges from /api/graph drawn with Cytoscape.js (vendored,
// static/vendor/cytoscape). The server caps what it sends, so the browser lays out at most
// a thousand memories; a big space is explored by filtering or expanding from one memory.
(function () {
  "use strict";

  const PALETTE = ["#3557d4", "#1a7f4b", "#d98c1f", "#7a52c7", "#c0362c", "#0e8a9a", "#b0487e", "#6b7d1c", "#8a5a2b", "#4a6fa5"];
  const OTHER = "#a3acbb";
  // cose (force-directed) reads best but costs O(n²) a step; above this, a concentric layout.
  const FORCE_LAYOUT_UP_TO = 350;

  let cy = null;
  let selected = null;
  let form, statusLine, tip, side, actions;

  function params() {
    const data = new FormData(form);
    const out = new URLSearchParams();
    for (const [key, value] of data.entries()) {
      if (value && key !== "color") out.set(key, value);
    }
    return out;
  }

  function colourBy() { return form.elements.color.value === "source" ? "source" : "topic"; }

  function recolour() {
    if (!cy) return;
    const key = colourBy();
    const counts = new Map();
    cy.nodes("[kind = 'memory']").forEach((n) => {
      const g = n.data(key) || "";
      counts.set(g, (counts.get(g) || 0) + 1);
    });
    const groups = Array.from(counts.entries()).filter(([g]) => g).sort((a, b) => b[1] - a[1]).slice(0, PALETTE.length);
    const colours = new Map(groups.map(([g], i) => [g, PALETTE[i]]));
    cy.batch(() => {
      cy.nodes("[kind = 'memory']").forEach((n) => n.data("colour", colours.get(n.data(key) || "") || OTHER));
    });
    const legend = document.getElementById("graph-legend");
    legend.replaceChildren();
    groups.forEach(([g, n]) => {
      const li = document.createElement("li");
      const dot = document.createElement("span");
      dot.className = "swatch";
      dot.style.background = colours.get(g);
      li.append(dot, document.createTextNode(g + " (" + n + ")"));
      legend.append(li);
    });
    if (counts.size > groups.length) {
      const li = document.createElement("li");
      const dot = document.createElement("span");
      dot.className = "swatch";
      dot.style.background = OTHER;
      li.append(dot, document.createTextNode("other"));
      legend.append(li);
    }
  }

  function elements(data) {
    const nodes = data.nodes.map((n) => ({ group: "nodes", data: Object.assign({}, n, {
      size: n.kind === "insight" ? 18 + Math.min(n.sources || 2, 10) * 2 : 12 + (n.importance || 0) * 34,
      colour: OTHER,
    }) }));
    const edges = data.edges.map((e) => ({ group: "edges", data: e }));
    return nodes.concat(edges);
  }

  function style() {
    return [
      { selector: "node", style: { "width": "data(size)", "height": "data(size)", "background-color": "data(colour)",
        "border-width": 1, "border-color": "#ffffff" } },
      { selector: "node[kind = 'insight']", style: { "shape": "diamond", "background-color": "#17213a", "border-color": "#cdd6f4" } },
      { selector: "node[?stale]", style: { "background-color": "#b26b00" } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#17213a" } },
      { selector: "node.focus", style: { "border-width": 4, "border-color": "#c0362c" } },
      { selector: "edge", style: { "width": 1.5, "line-color": "#9aa5b8", "curve-style": "straight", "opacity": 0.8 } },
      { selector: "edge[kind = 'consolidation'], edge[kind = 'link']", style: { "line-color": "#6f7f9c" } },
      { selector: "edge[kind = 'insight']", style: { "width": 1, "line-color": "#cbd2de", "opacity": 0.7 } },
      { selector: "edge[kind = 'duplicate']", style: { "line-style": "dashed", "line-color": "#d98c1f", "width": 2 } },
      { selector: "edge[kind = 'updates']", style: { "line-color": "#c0362c", "width": 2, "target-arrow-shape": "triangle",
        "target-arrow-color": "#c0362c" } },
      { selector: "edge.hover", style: { "width": 4, "opacity": 1 } },
    ];
  }

  function layout(eles, fit) {
    const many = eles.nodes().length > FORCE_LAYOUT_UP_TO;
    const options = many
      ? { name: "concentric", concentric: (n) => (n.data("kind") === "insight" ? 2 : n.data("importance") || 0), levelWidth: () => 0.15,
          minNodeSpacing: 4, animate: false, fit: fit }
      : { name: "cose", animate: false, fit: fit, randomize: true, nodeRepulsion: () => 9000, idealEdgeLength: () => 60,
          numIter: 800, padding: 20 };
    eles.layout(options).run();
    // A handful of nodes fitted to the box would be drawn huge.
    if (fit && cy.zoom() > 1.6) { cy.zoom(1.6); cy.center(); }
  }

  function say(text) { statusLine.textContent = text; }

  function describe(data, how) {
    const insights = data.nodes.filter((n) => n.kind === "insight").length;
    let text = how + " " + data.shown + " memor" + (data.shown === 1 ? "y" : "ies");
    if (data.truncated) text += " of " + data.total.toLocaleString() + " (the most important; filter or expand from a memory to see others)";
    text += ", " + insights + " insight" + (insights === 1 ? "" : "s") + ", " + data.edges.length + " connection" + (data.edges.length === 1 ? "" : "s") + ".";
    return text;
  }

  async function fetchGraph(query) {
    const response = await fetch(form.dataset.api + "?" + query.toString(), { headers: { Accept: "application/json" }, credentials: "same-origin" });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.detail || "The graph could not be loaded (" + response.status + ").");
    return body;
  }

  async function load() {
    say("Loading the graph…");
    tip.hidden = true;
    let data;
    try {
      data = await fetchGraph(params());
    } catch (err) {
      say(err.message);
      return;
    }
    cy.elements().remove();
    cy.add(elements(data));
    recolour();
    layout(cy.elements(), true);
    say(data.shown ? describe(data, "Showing") : "No ready memory matches these filters.");
    document.body.dataset.graphNodes = String(cy.nodes().length);
  }

  async function expand(onlyThis) {
    if (!selected) return;
    const memoryId = selected.data("memory_id");
    const query = new URLSearchParams({ focus: memoryId, depth: onlyThis ? 2 : 1, limit: form.elements.limit.value || 200 });
    say("Expanding from memory " + memoryId + "…");
    tip.hidden = true;
    let data;
    try {
      data = await fetchGraph(query);
    } catch (err) {
      say(err.message);
      return;
    }
    if (onlyThis) cy.elements().remove();
    const fresh = elements(data).filter((el) => cy.getElementById(el.data.id).empty());
    const added = cy.add(fresh.filter((el) => el.group === "nodes"));
    cy.add(fresh.filter((el) => el.group === "edges" && !cy.getElementById(el.data.source).empty() && !cy.getElementById(el.data.target).empty()));
    recolour();
    const centre = cy.getElementById("m" + memoryId);
    cy.nodes().removeClass("focus");
    centre.addClass("focus");
    if (onlyThis) {
      layout(cy.elements(), true);
    } else if (added.length) {
      // Place only what is new, around the node it came from; the rest of the picture stays put.
      const around = added.union(centre).union(added.connectedEdges());
      const p = centre.position();
      added.positions(() => ({ x: p.x + (Math.random() - 0.5) * 80, y: p.y + (Math.random() - 0.5) * 80 }));
      around.layout({ name: "concentric", concentric: (n) => (n.same(centre) ? 2 : 1), levelWidth: () => 1, animate: false, fit: false,
        boundingBox: { x1: p.x - 160, y1: p.y - 160, w: 320, h: 320 } }).run();
    }
    say(describe(data, onlyThis ? "Neighbourhood of memory " + memoryId + ":" : "Added " + added.length + " around memory " + memoryId + "; its neighbourhood has") +
      (onlyThis ? "" : " Now " + cy.nodes("[kind = 'memory']").length + " memories on screen."));
    document.body.dataset.graphNodes = String(cy.nodes().length);
  }

  function showCard(node) {
    selected = node;
    const card = document.getElementById("graph-card");
    if (node.data("kind") === "insight") {
      actions.hidden = true;
      const article = document.createElement("article");
      article.className = "card insight-card";
      const head = document.createElement("a");
      head.className = "card-id";
      head.href = form.dataset.insights + "#consolidation-" + node.data("consolidation_id");
      head.textContent = "Insight " + node.data("consolidation_id");
      const text = document.createElement("p");
      text.className = "summary";
      text.textContent = node.data("label");
      const meta = document.createElement("p");
      meta.className = "meta";
      meta.textContent = node.data("sources") + " of its sources shown" + (node.data("stale") ? " · stale" : "");
      article.append(head, text, meta);
      card.replaceChildren(article);
      return;
    }
    actions.hidden = false;
    const url = form.dataset.card.replace("/0/", "/" + node.data("memory_id") + "/");
    // htmx wires up the card's own buttons (delete, retry) as it swaps it in.
    window.htmx.ajax("GET", url, { target: "#graph-card", swap: "innerHTML" }).then(() => {
      if (window.matchMedia("(max-width: 860px)").matches) side.scrollIntoView({ behavior: "smooth", block: "start" });
    });
  }

  function setup() {
    form = document.getElementById("graph-filters");
    if (!form || !window.cytoscape) return;
    statusLine = document.getElementById("graph-status");
    tip = document.getElementById("graph-tip");
    side = document.getElementById("graph-side");
    actions = document.getElementById("graph-actions");
    cy = window.cytoscape({
      container: document.getElementById("graph"),
      style: style(),
      minZoom: 0.1,
      maxZoom: 4,
      // Cheaper drawing while the picture moves: a thousand nodes stay smooth on a phone.
      textureOnViewport: true,
      hideEdgesOnViewport: true,
      pixelRatio: 1,
    });
    window.memoryGraph = cy; // for the browser tests and the curious

    cy.on("tap", "node", (e) => showCard(e.target));
    cy.on("mouseover", "edge", (e) => {
      e.target.addClass("hover");
      tip.textContent = e.target.data("relationship");
      tip.hidden = false;
      const p = e.renderedPosition;
      tip.style.left = p.x + 12 + "px";
      tip.style.top = p.y + 12 + "px";
    });
    cy.on("mouseover", "node", (e) => {
      const n = e.target;
      tip.textContent = (n.data("kind") === "insight" ? "Insight: " : "Memory " + n.data("memory_id") + ": ") + n.data("label");
      tip.hidden = false;
      const p = e.renderedPosition;
      tip.style.left = p.x + 12 + "px";
      tip.style.top = p.y + 12 + "px";
    });
    cy.on("mouseout", "edge, node", (e) => { e.target.removeClass("hover"); tip.hidden = true; });

    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const query = new URLSearchParams(new FormData(form));
      for (const [key, value] of Array.from(query.entries())) if (!value) query.delete(key);
      history.replaceState(null, "", "?" + query.toString());
      load();
    });
    form.elements.color.addEventListener("change", recolour);
    ["topic", "source", "limit"].forEach((name) => form.elements[name].addEventListener("change", () => form.requestSubmit()));
    document.getElementById("graph-expand").addEventListener("click", () => expand(false));
    document.getElementById("graph-focus").addEventListener("click", () => expand(true));
    load();
  }

  document.addEventListener("DOMContentLoaded", setup);
})();
