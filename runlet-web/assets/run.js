// The run page: draws the snapshot the server sends (nodes, states, edges, iteration ranges,
// regions never materialised) with dagre's layout, and redraws it from the `graph` messages of
// the run's event stream. Which nodes exist and what state they are in is the server's model;
// the page only draws it and keeps the stream's records, each once and in order.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  // How many of the latest records the event log keeps in the page.
  const LOG_KEPT = 500;
  // The most iterations of a loop the server draws in full on request (`?detail=`).
  const MOST_DETAIL = 1024;
  const runId = decodeURIComponent(location.pathname.replace(/^\/runs\//, ""));
  const page = {
    runId,
    startSeq: 0,
    lastSeq: 0,
    records: 0,
    duplicates: 0,
    gaps: 0,
    redraws: 0,
    ended: false,
    source: "",
    snapshot: null,
    failures: [],
    stream: null,
    selected: null,
    // Loops of up to this many items are drawn in full (null: the server's default, 32).
    detail: null,
    reconnect,
  };
  window.runletPage = page;
  document.getElementById("title").textContent = "run " + runId;

  const el = (tag, attrs, text) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text != null) node.textContent = text;
    return node;
  };
  const svg = (tag, attrs) => {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    return node;
  };
  const snake = (text) => text.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  const time = (ms) => (ms == null ? "-" : new Date(ms).toISOString().slice(11, 23));

  function setConnection(state) {
    const badge = document.getElementById("connection");
    badge.dataset.connection = state;
    badge.textContent = state;
  }

  // The drawn items of a snapshot: its nodes, then one item per iteration range and per region
  // never materialised, each with the attributes of INTERFACES.md §4.4.
  function items(snapshot) {
    const labels = new Map(snapshot.nodes.map((node) => [node.id, node.label]));
    const drawn = snapshot.nodes.map((node) => {
      const attrs = { "data-node": node.id, "data-kind": snake(node.kind), "data-state": node.state };
      const lines = [node.label];
      const badges = [];
      if (node.tool) {
        attrs["data-tool"] = node.tool.name;
        const tool = node.tool.name === node.label ? "" : node.tool.name;
        const attempt = node.attempt > 1 ? "attempt " + node.attempt : "";
        if (tool || attempt) lines.push([tool, attempt].filter(Boolean).join(" · "));
      }
      if (node.blocked_on && node.blocked_on.data) {
        attrs["data-blocked"] = "data";
        const names = node.blocked_on.data.producers.map((id) => labels.get(id) || id);
        badges.push("waits for " + names.join(", "));
      }
      if (node.blocked_on && node.blocked_on.permits) {
        attrs["data-blocked"] = "permit";
        badges.push("waits for a permit: " + node.blocked_on.permits.resources.join(", "));
      }
      if (node.failure) {
        if (node.failure.uncertain) {
          attrs["data-uncertain"] = "true";
          badges.push("uncertain outcome " + node.failure.code);
        } else {
          badges.push("failed " + node.failure.code + (node.failure.retryable ? " (retryable)" : ""));
        }
      }
      if (node.reused_from) {
        attrs["data-reused"] = "true";
        badges.push("reused result");
      }
      if (node.retry) {
        const retry = node.retry;
        if (retry.backoff) {
          attrs["data-retry"] = "scheduled";
          const deadline = retry.backoff.deadline_unix_ms;
          badges.push("retry in " + retry.backoff.delay_ms + " ms" + (deadline ? " at " + time(deadline) : ""));
        }
        if (retry.scheduled_attempts.length) attrs["data-retries"] = String(retry.scheduled_attempts.length);
        lines.push("attempt " + retry.attempt + " of " + (retry.retries_allowed + 1));
        if (retry.catch_selected) {
          attrs["data-catch"] = "selected";
          badges.push("catch selected");
        }
      }
      if (node.state === "pruned") badges.push("pruned: never eligible");
      if (node.state === "cancelled" && node.cancellation && node.cancellation.orphaned_completions) {
        badges.push(node.cancellation.orphaned_completions + " answer(s) after cancel");
      }
      if (node.selected_arm) lines.push("took " + node.selected_arm);
      if (node.loop) lines.push(node.loop.iterations_started + " of " + node.loop.items + " iterations");
      return { id: node.id, attrs, lines, badges, shape: shapeOf(node.kind), node };
    });
    for (const range of snapshot.iteration_ranges) {
      const counts = range.iteration_states;
      const state = counts.failed ? "failed" : counts.running || counts.planned || counts.blocked || counts.ready ? "running" : counts.cancelled ? "cancelled" : "succeeded";
      const summary = Object.entries(counts).map(([name, count]) => count + " " + name).join(" · ");
      drawn.push({
        id: "range:" + range.loop + ":" + range.first + "-" + range.last,
        attrs: { "data-node": "range:" + range.loop + ":" + range.first + "-" + range.last, "data-kind": "iteration_range", "data-state": state, "data-iterations": String(range.iterations) },
        lines: ["iterations " + range.first + "–" + range.last + " (" + range.iterations + ")", summary],
        badges: [],
        shape: "stack",
        range,
        parent: range.loop,
      });
    }
    for (const region of snapshot.not_materialized) {
      const id = "region:" + region.owner + ":" + region.arm;
      drawn.push({
        id,
        attrs: { "data-node": id, "data-kind": "region", "data-state": "not_materialized" },
        lines: [region.arm + ": not materialized", excerpt(region.span)],
        badges: [],
        shape: "rect",
        region,
        parent: region.owner,
      });
    }
    return drawn;
  }

  function shapeOf(kind) {
    return { Call: "rect", Branch: "diamond", Loop: "stack", Iteration: "round", Boundary: "round", Root: "pill", External: "slant" }[kind] || "ellipse";
  }

  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  // The source text of a span (byte offsets into the UTF-8 source).
  function spanText(span) {
    const bytes = encoder.encode(page.source);
    return [decoder.decode(bytes.slice(0, span.start)), decoder.decode(bytes.slice(span.start, span.end)), decoder.decode(bytes.slice(span.end))];
  }
  function excerpt(span) {
    const text = spanText(span)[1].replace(/\s+/g, " ");
    return text.length > 40 ? text.slice(0, 39) + "…" : text;
  }

  function draw(snapshot, failures) {
    page.snapshot = snapshot;
    page.failures = failures;
    page.redraws += 1;
    // A run no process drives reads as running in its snapshot: its listing says how it stopped.
    const drawnState = snake(snapshot.run.state);
    const runState = page.halted && drawnState === "running" ? page.halted : drawnState;
    const runBadge = document.getElementById("run-state");
    runBadge.dataset.runState = runState;
    runBadge.textContent = runState + (snapshot.run.code ? " " + snapshot.run.code : "");
    const drawn = items(snapshot);
    const layout = new dagre.graphlib.Graph({ multigraph: true });
    layout.setGraph({ rankdir: "TB", nodesep: 18, ranksep: 34, marginx: 12, marginy: 12 });
    layout.setDefaultEdgeLabel(() => ({}));
    for (const item of drawn) {
      const longest = Math.max(...item.lines.concat(item.badges).map((line) => line.length), 6);
      item.width = Math.min(Math.max(longest * 6.4 + 24, 70), 320);
      item.height = 16 + 14 * (item.lines.length + item.badges.length);
      layout.setNode(item.id, { width: item.width, height: item.height });
    }
    // Containment is drawn by the scopes a node names (see its details), not as edges: a
    // boundary or loop owning every node of its body would cross the whole graph.
    const edges = snapshot.edges.filter((edge) => edge.kind !== "contains" && layout.hasNode(edge.from) && layout.hasNode(edge.to));
    edges.forEach((edge, index) => layout.setEdge(edge.from, edge.to, { edge }, "e" + index));
    drawn.filter((item) => item.parent && layout.hasNode(item.parent)).forEach((item, index) => {
      layout.setEdge(item.parent, item.id, { edge: { kind: item.region ? "control" : "contains" } }, "p" + index);
    });
    dagre.layout(layout);

    const root = document.getElementById("graph");
    root.replaceChildren();
    const size = layout.graph();
    // Scaled down to the pane's width when wider, never up.
    const width = Math.ceil(size.width || 100);
    const height = Math.ceil(size.height || 100);
    root.setAttribute("viewBox", "0 0 " + width + " " + height);
    root.style.width = "100%";
    root.style.maxWidth = width + "px";
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto" });
    marker.appendChild(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#6b7280" }));
    const defs = svg("defs");
    defs.appendChild(marker);
    root.appendChild(defs);
    for (const key of layout.edges()) {
      const { points, edge } = layout.edge(key);
      const d = points.map((point, index) => (index ? "L" : "M") + point.x.toFixed(1) + "," + point.y.toFixed(1)).join(" ");
      const attrs = { d, class: "edge", "data-edge": edge.kind, "marker-end": "url(#arrow)", "data-from": key.v, "data-to": key.w };
      if (edge.reused) attrs["data-reused"] = "true";
      root.appendChild(svg("path", attrs));
    }
    for (const item of drawn) {
      const box = layout.node(item.id);
      const group = svg("g", Object.assign({ class: "node", transform: "translate(" + (box.x - item.width / 2).toFixed(1) + "," + (box.y - item.height / 2).toFixed(1) + ")" }, item.attrs));
      group.appendChild(shape(item.shape, item.width, item.height));
      const title = svg("title");
      title.textContent = item.id;
      group.appendChild(title);
      item.lines.concat(item.badges).forEach((line, index) => {
        const text = svg("text", { x: item.width / 2, y: 20 + 14 * index, "text-anchor": "middle" });
        if (index >= item.lines.length) text.setAttribute("class", "badge");
        text.textContent = line;
        group.appendChild(text);
      });
      group.addEventListener("click", () => select(item.id));
      if (item.id === page.selected) group.classList.add("selected");
      root.appendChild(group);
    }
    drawFailures(failures, snapshot);
    drawRanges(snapshot);
    if (page.selected) showDetails(page.selected);
  }

  function shape(kind, width, height) {
    switch (kind) {
      case "diamond":
        return svg("polygon", { class: "shape", points: `${width / 2},0 ${width},${height / 2} ${width / 2},${height} 0,${height / 2}` });
      case "ellipse":
        return svg("ellipse", { class: "shape", cx: width / 2, cy: height / 2, rx: width / 2, ry: height / 2 });
      case "pill":
        return svg("rect", { class: "shape", width, height, rx: height / 2 });
      case "round":
        return svg("rect", { class: "shape", width, height, rx: 10 });
      case "slant":
        return svg("polygon", { class: "shape", points: `8,0 ${width},0 ${width - 8},${height} 0,${height}` });
      case "stack": {
        const group = svg("g");
        group.appendChild(svg("rect", { class: "shape", x: 4, y: -4, width, height, rx: 3 }));
        group.appendChild(svg("rect", { class: "shape", width, height, rx: 3 }));
        return group;
      }
      default:
        return svg("rect", { class: "shape", width, height, rx: 2 });
    }
  }

  function select(id) {
    page.selected = id;
    document.querySelectorAll("#graph .node.selected").forEach((node) => node.classList.remove("selected"));
    const drawn = [...document.querySelectorAll("#graph .node")].find((node) => node.dataset.node === id);
    if (drawn) drawn.classList.add("selected");
    showDetails(id);
  }

  function labelOf(id) {
    const node = page.snapshot.nodes.find((candidate) => candidate.id === id);
    return node ? node.label : id;
  }

  function row(list, name, value) {
    if (value == null || value === "") return;
    list.appendChild(el("dt", {}, name));
    list.appendChild(el("dd", {}, typeof value === "string" ? value : JSON.stringify(value)));
  }

  function showDetails(id) {
    const box = document.getElementById("details");
    box.replaceChildren();
    const node = page.snapshot.nodes.find((candidate) => candidate.id === id);
    const range = page.snapshot.iteration_ranges.find((candidate) => "range:" + candidate.loop + ":" + candidate.first + "-" + candidate.last === id);
    const region = page.snapshot.not_materialized.find((candidate) => "region:" + candidate.owner + ":" + candidate.arm === id);
    const list = el("dl");
    let span = null;
    if (node) {
      box.appendChild(el("h2", {}, node.label));
      row(list, "node", node.id);
      row(list, "kind", snake(node.kind));
      row(list, "state", node.state);
      if (node.tool) {
        row(list, "tool", node.tool.name);
        row(list, "execution", node.tool.execution);
        row(list, "schema version", node.tool.schema_version);
      }
      row(list, "attempt", String(node.attempt));
      const since = (ms) => (ms == null ? null : "+" + ms + " ms");
      row(list, "planned", since(node.timestamps.planned_at_ms));
      row(list, "started", since(node.timestamps.started_at_ms));
      row(list, "finished", since(node.timestamps.finished_at_ms));
      node.input_schemas.forEach((schema, index) => row(list, "input " + (index + 1), schema));
      row(list, "output", node.output_schema);
      row(list, "value", node.value);
      row(list, "blocked on", node.blocked_on);
      row(list, "retry", node.retry);
      row(list, "reused from", node.reused_from);
      row(list, "progress", node.progress);
      row(list, "cancellation", node.cancellation);
      row(list, "inside", node.scopes.map((scope) => labelOf(scope.owner) + " (" + scope.segment + ")").join(" › "));
      span = node.span;
    } else if (range) {
      box.appendChild(el("h2", {}, "iterations " + range.first + "–" + range.last));
      row(list, "loop", range.loop);
      row(list, "iterations", String(range.iterations));
      row(list, "iteration states", range.iteration_states);
      row(list, "node states", range.node_states);
      // Failed iterations are never folded: they are drawn in full beside the range.
      const failed = page.snapshot.nodes.filter((node) => node.state === "failed" && node.scopes.some((scope) => scope.owner === range.loop));
      row(list, "failed in this loop", failed.map((node) => node.label).join(", ") || "none");
      if (page.detail == null) {
        const expand = el("button", { "data-expand": range.loop }, "draw every iteration (loops of up to " + MOST_DETAIL + " items)");
        expand.addEventListener("click", () => {
          page.detail = MOST_DETAIL;
          if (page.stream) page.stream.close();
          load();
        });
        box.appendChild(expand);
      }
    } else if (region) {
      box.appendChild(el("h2", {}, region.arm + ": not materialized"));
      row(list, "owner", region.owner);
      span = region.span;
    }
    box.appendChild(list);
    const failure = page.failures.find((candidate) => candidate.node === id);
    if (failure) box.appendChild(failureView(failure));
    if (span) {
      const [before, inside, after] = spanText(span);
      const pre = el("pre", { class: "source" });
      pre.appendChild(document.createTextNode(before));
      pre.appendChild(el("mark", {}, inside));
      pre.appendChild(document.createTextNode(after));
      box.appendChild(pre);
      const mark = pre.querySelector("mark");
      if (mark.scrollIntoView) mark.scrollIntoView({ block: "nearest" });
    }
  }

  function failureView(failure) {
    const section = el("div", { class: "failure", "data-failure": failure.node });
    section.appendChild(el("h3", {}, (failure.uncertain ? "Uncertain outcome " : "Failed ") + failure.code));
    const list = el("dl");
    const local = failure.node.split("/").slice(2).join("/");
    const attempt = /^a(\d+)\|/.exec(local);
    row(list, "what failed", (failure.tool || labelOf(failure.node)) + (attempt ? ", boundary attempt " + attempt[1] : ""));
    row(list, "message", failure.message);
    row(list, "retry", failure.uncertain ? "not safe: the effect may have happened" : failure.retryable ? "reasonable (retryable)" : "not reasonable (not retryable)");
    const labels = new Map(page.snapshot.nodes.map((node) => [node.id, node.label]));
    row(list, "path from output", failure.path_from_output.map((id) => labels.get(id) || id).join(" → "));
    row(list, "inputs never resolved", failure.unresolved_inputs.map((id) => labels.get(id) || id).join(", ") || "none");
    row(list, "what to do", failure.remediation);
    section.appendChild(list);
    return section;
  }

  function drawFailures(failures) {
    const box = document.getElementById("failures");
    box.replaceChildren();
    if (!failures.length) return;
    box.appendChild(el("h2", {}, "Failures"));
    for (const failure of failures) {
      const item = failureView(failure);
      item.addEventListener("click", () => select(failure.node));
      box.appendChild(item);
    }
  }

  function drawRanges(snapshot) {
    const box = document.getElementById("ranges");
    box.replaceChildren();
    if (!snapshot.iteration_ranges.length) return;
    box.appendChild(el("h2", {}, "Iteration ranges"));
    const list = el("ul");
    for (const range of snapshot.iteration_ranges) {
      const counts = Object.entries(range.iteration_states).map(([name, count]) => count + " " + name).join(", ");
      list.appendChild(el("li", { "data-range": range.loop }, range.first + "–" + range.last + ": " + counts));
    }
    box.appendChild(list);
  }

  function legend() {
    const states = ["planned", "blocked", "ready", "running", "succeeded", "failed", "cancelled", "pruned", "not_materialized"];
    const colours = { planned: "#f3f4f6", blocked: "#fde68a", ready: "#dbeafe", running: "#93c5fd", succeeded: "#bbf7d0", failed: "#fca5a5", cancelled: "#d1d5db", pruned: "#fff", not_materialized: "none" };
    const box = document.getElementById("legend");
    for (const state of states) {
      const item = el("li", {});
      const swatch = el("span", { style: "background:" + colours[state] });
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(state));
      box.appendChild(item);
    }
    for (const [text, colour] of [["blocked on a permit", "#fdba74"], ["uncertain outcome", "#f0abfc"], ["reused result", "#d9f99d"]]) {
      const item = el("li", {});
      item.appendChild(el("span", { style: "background:" + colour }));
      item.appendChild(document.createTextNode(text));
      box.appendChild(item);
    }
  }

  function record(event) {
    const seq = Number(event.lastEventId);
    if (seq <= page.lastSeq) {
      page.duplicates += 1;
    } else {
      if (seq !== page.lastSeq + 1) page.gaps += 1;
      page.lastSeq = seq;
      // The journal moved on: a process drives the run again.
      page.halted = null;
      page.records += 1;
      const data = JSON.parse(event.data);
      const line = el("li", { value: String(seq), "data-seq": String(seq), "data-event": data.kind }, data.kind + (data.node ? " " + data.node : "") + (data.tool ? " (" + data.tool + ")" : ""));
      const log = document.getElementById("log");
      log.appendChild(line);
      if (log.childElementCount > LOG_KEPT) log.firstElementChild.remove();
      document.getElementById("log-count").textContent = String(page.records);
    }
    document.body.dataset.lastSeq = String(page.lastSeq);
  }

  function listen(after) {
    const detail = page.detail == null ? "" : "&detail=" + page.detail;
    const stream = new EventSource("/api/runs/" + encodeURIComponent(runId) + "/events?after=" + after + detail);
    page.stream = stream;
    stream.onopen = () => setConnection("live");
    stream.addEventListener("record", record);
    stream.addEventListener("graph", (event) => {
      const data = JSON.parse(event.data);
      draw(data.snapshot, data.failures);
    });
    stream.addEventListener("end", () => {
      stream.close();
      page.ended = true;
      document.body.dataset.ended = "true";
      setConnection("ended");
    });
    stream.addEventListener("resync", () => {
      stream.close();
      load();
    });
    stream.onerror = () => {
      if (!page.ended) setConnection("lost");
    };
  }

  // Drops the stream and opens a new one after the last record received.
  function reconnect() {
    if (page.stream) page.stream.close();
    page.ended = false;
    listen(page.lastSeq);
  }

  async function load() {
    const detail = page.detail == null ? "" : "?detail=" + page.detail;
    const response = await fetch("/api/runs/" + encodeURIComponent(runId) + detail);
    const data = await response.json();
    if (!response.ok) {
      document.getElementById("details").textContent = data.error.message;
      setConnection("failed");
      return;
    }
    page.source = data.source;
    page.halted = data.halted || null;
    draw(data.snapshot, data.failures);
    // The snapshot holds every record up to its seq: the stream continues from there, so a
    // long run's history is never sent again, and the log lists what came after.
    page.startSeq = data.snapshot.seq;
    page.lastSeq = data.snapshot.seq;
    listen(page.lastSeq);
  }

  legend();
  load();
})();
