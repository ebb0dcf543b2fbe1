// The runs page: lists the journal's runs from /api/runs.
"use strict";
(async function () {
  const body = document.querySelector("#runs tbody");
  const message = document.getElementById("message");
  const time = (ms) => (ms == null ? "-" : new Date(ms).toISOString());
  const duration = (run) => {
    if (run.started_ms == null || run.last_event_ms == null) return "-";
    return ((run.last_event_ms - run.started_ms) / 1000).toFixed(2) + " s";
  };
  try {
    const response = await fetch("/api/runs");
    const data = await response.json();
    if (!response.ok) throw new Error(data.error.message);
    if (data.runs.length === 0) message.textContent = "no runs";
    for (const run of data.runs) {
      const row = document.createElement("tr");
      row.dataset.run = run.run_id;
      row.dataset.status = run.status;
      // A damaged run's header may be what is damaged: no digest, and the journal's words.
      const digest = run.program_digest == null ? "-" : run.program_digest.slice(0, 19);
      if (run.damage) row.title = run.damage.code + ": " + run.damage.message;
      const cells = [run.run_id, run.status, digest, time(run.started_ms), duration(run), String(run.last_seq)];
      cells.forEach((text, index) => {
        const cell = document.createElement("td");
        if (index === 0) {
          const link = document.createElement("a");
          link.href = "/runs/" + encodeURIComponent(run.run_id);
          link.textContent = text;
          cell.appendChild(link);
        } else {
          cell.textContent = text;
        }
        row.appendChild(cell);
      });
      body.appendChild(row);
    }
  } catch (error) {
    message.textContent = "the runs could not be read: " + error.message;
  }
})();
