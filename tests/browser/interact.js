// Drives report.html's interactive panels in headless Chromium (playwright-core, pinned in
// package.json) with real mouse events, and prints what a reader would see as one JSON object;
// tests/cli/browser_interactive.rs makes the run and judges the answers against timeseries.csv.
//
//   node interact.js REPORT.html CLASS COLUMN HOVER_T ZOOM_FROM_T ZOOM_TO_T
//
// CHROMIUM names the browser (default /usr/bin/chromium). Every request that is not the page's
// own file is refused and listed in "requests", so a page that needed the network shows it.
"use strict";
const { chromium } = require("playwright-core");
const path = require("path");

async function main() {
  const [file, cls, column, hoverT, zoomFrom, zoomTo] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const out = { errors: [], requests: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (e) => out.errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") out.errors.push(m.text()); });
    const url = "file://" + path.resolve(file);
    await page.route("**/*", (r) => {
      if (r.request().url() === url) return r.continue();
      out.requests.push(r.request().url());
      return r.abort();
    });
    await page.goto(url);
    await page.waitForFunction(() => window.brownoutPlots && window.brownoutPlots.length > 0, null, { timeout: 20000 });
    out.panels = await page.evaluate(() => window.brownoutPlots.length);
    // The panel of (class, column) and the page position of time t in it.
    const locate = (t) =>
      page.evaluate(
        ([cls, column, t]) => {
          const k = window.brownoutPlots.findIndex(
            (u) => u.root.parentNode.dataset.class === cls && u.root.parentNode.dataset.column === column
          );
          if (k < 0) return null;
          const u = window.brownoutPlots[k];
          u.root.scrollIntoView({ block: "center" });
          const box = u.over.getBoundingClientRect();
          return { k, x: box.left + u.valToPos(t, "x"), y: box.top + box.height / 2 };
        },
        [cls, column, t]
      );
    const legend = (k) =>
      page.evaluate((k) => {
        const u = window.brownoutPlots[k];
        return [...u.root.querySelectorAll(".u-legend .u-series")].map((tr) => ({
          label: tr.querySelector(".u-label").textContent,
          value: tr.querySelector(".u-value").textContent,
          off: tr.classList.contains("u-off"),
        }));
      }, k);

    // Hover: the mouse over the window that starts at hoverT.
    const at = await locate(Number(hoverT));
    if (!at) throw new Error(`no panel for class ${cls}, column ${column}`);
    await page.mouse.move(at.x - 40, at.y);
    await page.mouse.move(at.x, at.y, { steps: 4 });
    out.hover = { legend: await legend(at.k), idx: await page.evaluate((k) => window.brownoutPlots[k].cursor.idx, at.k) };
    // Every other panel's cursor follows (synchronised) to the same window.
    out.hover.synced = await page.evaluate(() => window.brownoutPlots.map((u) => u.cursor.idx));

    // Toggle: untick the last policy set's checkbox.
    const boxes = await page.$$(".policy-toggles input[type=checkbox]");
    const last = boxes.length - 1;
    await boxes[last].click();
    out.toggle = {
      policy: last,
      shown: await page.evaluate((i) => window.brownoutPlots.map((u) => u.series[i + 1].show), last),
      legend: await legend(at.k),
    };
    // And back on through a legend entry of the hovered panel.
    await page.evaluate((k) => window.brownoutPlots[k].root.scrollIntoView({ block: "center" }), at.k);
    const entry = (await page.$$(`#${await page.evaluate((k) => window.brownoutPlots[k].root.parentNode.id, at.k)} .u-legend .u-series`))[last + 1];
    await entry.click();
    out.toggle.back = await page.evaluate((i) => window.brownoutPlots.map((u) => u.series[i + 1].show), last);
    out.toggle.checkbox = await boxes[last].isChecked();

    // Zoom: drag across the panel from zoomFrom to zoomTo.
    const range = () => page.evaluate(() => window.brownoutPlots.map((u) => [u.scales.x.min, u.scales.x.max]));
    out.zoom = { before: await range() };
    const a = await locate(Number(zoomFrom));
    const b = await locate(Number(zoomTo));
    await page.mouse.move(a.x, a.y);
    await page.mouse.down();
    await page.mouse.move(b.x, b.y, { steps: 8 });
    await page.mouse.up();
    out.zoom.after = await range();
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
