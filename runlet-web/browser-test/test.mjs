// The run page in a real browser: the system Chromium, driven through the DevTools protocol by
// playwright-core, watches Appendix A run with slowed-down tools, then a 10,000-iteration loop,
// and writes the screenshots docs/graph-page-*.png. Usage: node test.mjs RUNLET_BINARY.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const binary = process.argv[2];
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";
const work = mkdtempSync(join(tmpdir(), "runlet-browser-"));
const example = (name) => JSON.parse(readFileSync(join(root, "examples", "appendix-a", name), "utf8"));

// Appendix A with its tools twenty times slower, the order service down (so the boundary
// retries, then its catch answers), and the three first calls sharing one permit.
function appendixFiles() {
  const registry = example("registry.json");
  registry.resource_groups = { crm: 1 };
  for (const tool of registry.tools) {
    if (["crm.customer", "billing.limits", "support.tickets"].includes(tool.name)) tool.resource_group = "crm";
  }
  const tools = example("tools-orders-failing.json");
  for (const answers of Object.values(tools)) for (const answer of answers) answer.delay_ms = (answer.delay_ms || 10) * 20;
  // The order service asks for a pause before each retry: the boundary's retry is scheduled.
  for (const answer of tools["shop.orders"]) if (answer.error) answer.error.retry_after_ms = 600;
  writeFileSync(join(work, "registry.json"), JSON.stringify(registry));
  writeFileSync(join(work, "tools.json"), JSON.stringify(tools));
  return ["run", join(root, "examples", "appendix-a", "main.run"), "--registry", join(work, "registry.json"), "--tools", join(work, "tools.json"), "--inputs", join(root, "examples", "appendix-a", "inputs.json")];
}

// A loop over 10,000 numbers.
function loopFiles() {
  writeFileSync(join(work, "loop.run"), "return for n in numbers() limit 64 {\n    return square(n)\n}\n");
  writeFileSync(join(work, "loop-registry.json"), JSON.stringify({ tools: [
    { name: "numbers", params: [], outputSchema: { type: "array", items: { type: "integer" } }, execution: "pure" },
    { name: "square", params: [{ name: "n", schema: { type: "integer" } }], outputSchema: { type: "integer" }, execution: "pure" },
  ] }));
  const numbers = Array.from({ length: 10000 }, (_, n) => n);
  writeFileSync(join(work, "loop-tools.json"), JSON.stringify({ numbers: [{ result: numbers }], square: [{ result: 1 }] }));
  return ["run", join(work, "loop.run"), "--registry", join(work, "loop-registry.json"), "--tools", join(work, "loop-tools.json")];
}

// Starts `runlet run … --serve` and resolves with the process and the page's address.
function serve(args, journal) {
  const child = spawn(binary, [...args, "--journal", "sqlite:" + join(work, journal), "--serve"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  const url = new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const found = /serving (http:\/\/\S+\/runs\/\S+)/.exec(stderr);
      if (found) resolve(found[1]);
    });
    child.on("exit", (code) => reject(new Error("runlet exited with " + code + ": " + stderr)));
  });
  return { child, url };
}

function stop(child) {
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    child.on("exit", (code) => resolve(code));
    child.kill("SIGINT");
  });
}

const ORDER = ["planned", "blocked", "ready", "dispatching", "running", "succeeded", "failed", "cancelling", "cancelled", "pruned"];
const drawn = () => [...document.querySelectorAll("#graph [data-node]")].map((node) => ({
  id: node.dataset.node, kind: node.dataset.kind, state: node.dataset.state, tool: node.dataset.tool || null,
  blocked: node.dataset.blocked || null, retries: node.dataset.retries || null, catch: node.dataset.catch || null,
  retry: node.dataset.retry || null, text: node.textContent,
}));

async function appendixA(browser) {
  const { child, url } = serve(appendixFiles(), "appendix-a.db");
  const page = await browser.newPage({ viewport: { width: 1900, height: 1100 } });
  await page.goto(await url);
  const seen = new Map(); // node id → the states it was seen in, in order
  const counts = [];
  let permitBlocked = null;
  let retryScheduled = null;
  let reconnected = false;
  for (let tick = 0; tick < 600; tick++) {
    const nodes = await page.evaluate(drawn);
    counts.push(nodes.length);
    for (const node of nodes) {
      const states = seen.get(node.id) || [];
      if (states[states.length - 1] !== node.state) states.push(node.state);
      seen.set(node.id, states);
      if (node.blocked === "permit" && !permitBlocked) permitBlocked = node;
      if (node.retry === "scheduled" && !retryScheduled) retryScheduled = node;
    }
    const status = await page.evaluate(() => ({ records: window.runletPage.records, ended: window.runletPage.ended }));
    if (!reconnected && status.records >= 20 && !status.ended) {
      await page.evaluate(() => window.runletPage.reconnect());
      reconnected = true;
    }
    if (status.ended) break;
    await page.waitForTimeout(40);
  }
  const final = await page.evaluate(drawn);
  const stream = await page.evaluate(() => ({
    records: window.runletPage.records, lastSeq: window.runletPage.lastSeq, startSeq: window.runletPage.startSeq, duplicates: window.runletPage.duplicates,
    gaps: window.runletPage.gaps, ended: window.runletPage.ended,
    logged: [...document.querySelectorAll("#log [data-seq]")].map((line) => Number(line.dataset.seq)),
  }));
  assert.ok(stream.ended, "the page saw the run end");
  assert.ok(reconnected, "the page reconnected mid-run");
  assert.equal(stream.duplicates, 0, "no record was delivered twice");
  assert.equal(stream.gaps, 0, "no record was skipped");
  assert.ok(stream.startSeq + 20 <= stream.lastSeq, `the page opened mid-run (at seq ${stream.startSeq} of ${stream.lastSeq})`);
  assert.equal(stream.records, stream.lastSeq - stream.startSeq, "every record after the snapshot arrived");
  const first = stream.lastSeq - stream.logged.length + 1;
  assert.deepEqual(stream.logged, Array.from({ length: stream.logged.length }, (_, index) => first + index), "the log holds the latest records once, in order");
  const ids = final.map((node) => node.id);
  assert.equal(new Set(ids).size, ids.length, "every node is drawn once");
  assert.ok(counts[0] < final.length, `nodes appear as the run goes (${counts[0]} first, ${final.length} at the end)`);

  // States change in the order of the state machine, and some calls were seen before they ended.
  for (const [id, states] of seen) {
    const ranks = states.filter((state) => ORDER.includes(state)).map((state) => ORDER.indexOf(state));
    assert.deepEqual(ranks, [...ranks].sort((a, b) => a - b), `${id} went ${states.join(" → ")}`);
  }
  const customer = final.find((node) => node.tool === "crm.customer");
  assert.ok(customer && customer.state === "succeeded", "crm.customer succeeded");
  const watchedCalls = [...seen.entries()].filter(([id, states]) => final.find((node) => node.id === id && node.tool) && states.length > 1);
  assert.ok(watchedCalls.length >= 3, "calls were seen waiting or running before they succeeded");

  assert.ok(permitBlocked, "a call waiting for its permit was drawn");
  assert.ok(["crm.customer", "billing.limits", "support.tickets"].includes(permitBlocked.tool), `the permit-blocked call is one of the group (${permitBlocked.tool})`);

  assert.ok(retryScheduled && retryScheduled.kind === "boundary", "the boundary was drawn with its retry scheduled");
  assert.match(retryScheduled.text, /retry in 600 ms/);

  const orders = final.filter((node) => node.tool === "shop.orders");
  assert.equal(orders.length, 3, "each attempt of shop.orders is drawn");
  assert.ok(orders.every((node) => node.state === "failed"), "every attempt failed");
  const boundary = final.find((node) => node.kind === "boundary");
  assert.ok(boundary && Number(boundary.retries) === 2, "the boundary shows its two retries");
  assert.equal(boundary.catch, "selected", "the boundary shows its catch");

  // A failure's view, and a call's details with its source span.
  await page.locator(`#graph [data-node="${orders[0].id}"]`).click();
  const details = await page.locator("#details").innerText();
  assert.match(details, /shop\.orders/);
  assert.match(details, /UNAVAILABLE/);
  assert.match(details, /path from output/);
  assert.equal(await page.locator("#details pre.source mark").innerText(), "shop.orders(customer.id)");
  await page.locator(`#graph [data-node="${customer.id}"]`).click();
  const html = await page.content();
  assert.ok(!html.includes("ada@example.com"), "the sensitive email is not in the DOM");
  assert.match(html, /redacted:sensitive/, "the page shows where it was redacted");
  await page.screenshot({ path: join(root, "docs", "graph-page-appendix-a.png"), fullPage: true });

  const runs = await browser.newPage();
  await runs.goto(new URL("/runs", await url).href);
  await runs.waitForSelector("#runs tbody tr");
  assert.equal(await runs.locator("#runs tbody tr").first().getAttribute("data-status"), "succeeded");
  assert.equal(await stop(child), 0, "SIGINT ends the server with the run's status");
  console.log(`appendix A: ${final.length} nodes, records ${stream.startSeq + 1}–${stream.lastSeq} streamed after the snapshot, reconnected mid-run`);
}

async function tenThousand(browser) {
  const { child, url } = serve(loopFiles(), "loop.db");
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  await page.goto(await url);
  await page.waitForFunction(() => window.runletPage.ended, null, { timeout: 120000 });
  await page.waitForTimeout(300);
  const final = await page.evaluate(drawn);
  assert.ok(final.length < 400, `the loop is drawn folded (${final.length} nodes)`);
  const ranges = await page.evaluate(() => [...document.querySelectorAll('#graph [data-kind="iteration_range"]')].map((node) => Number(node.dataset.iterations)));
  assert.ok(ranges.length >= 1, "the loop's iterations are drawn as ranges");
  const shown = final.filter((node) => node.kind === "iteration").length;
  assert.equal(shown + ranges.reduce((sum, count) => sum + count, 0), 10000, "ranges and shown iterations add up to every item");
  await page.screenshot({ path: join(root, "docs", "graph-page-10000-iterations.png") });
  assert.equal(await stop(child), 0);
  console.log(`10,000 iterations: ${final.length} nodes drawn, ranges of ${ranges.join(", ")}`);
}

// The runs page of `runlet serve` over the journal of Appendix A once its run's header is
// overwritten (with Python's sqlite3): the run is listed as damaged, with the journal's words.
async function damagedRun(browser) {
  const journal = join(work, "appendix-a.db");
  const damage = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE runs SET header = 'not JSON'\"); c.commit()";
  execFileSync("python3", ["-c", damage, journal]);
  const child = spawn(binary, ["serve", "--journal", "sqlite:" + journal, "--addr", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  const url = await new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      const found = /serving (http:\/\/\S+\/runs)/.exec(stderr);
      if (found) resolve(found[1]);
    });
    child.on("exit", (code) => reject(new Error("runlet serve exited with " + code + ": " + stderr)));
  });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector("#runs tbody tr");
    const row = page.locator("#runs tbody tr").first();
    assert.equal(await row.getAttribute("data-status"), "damaged");
    assert.match(await row.getAttribute("title"), /^RL7008: .*header/);
    assert.equal(await row.locator("td").nth(2).innerText(), "-", "no program digest without a header");
  } finally {
    await stop(child);
  }
  console.log("a damaged run: listed as damaged with RL7008");
}

const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] });
try {
  await appendixA(browser);
  await tenThousand(browser);
  await damagedRun(browser);
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
