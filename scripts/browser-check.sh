#!/usr/bin/env bash
# Render report.html files in a real headless browser (Chromium) and check what a reader sees:
# every chart (<svg>/<img>) has a non-zero rendered size and visible drawn content, no SVG
# rectangle has a negative size (browsers skip those), and where the folder holds a
# recommendation.json the page shows its recommendation section.
#
#   scripts/browser-check.sh DIR...     check DIR/report.html for each folder
#   scripts/browser-check.sh            make a run (scenarios/payments-brownout.ron, which has a
#                                       decide section) and a sweep (scenarios/sweeps/sweep-demo.ron)
#                                       in a temporary folder and check both
#
# BROWNOUT names the binary (default: brownout on PATH, else target/ci or target/debug);
# CHROMIUM the browser (default: chromium, chromium-browser or google-chrome on PATH).
# Exit 0 when every page passes, 1 when one fails, 2 when the browser is missing.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
browser="${CHROMIUM:-}"
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser="$b"; break; fi
  done
fi
if [ -z "$browser" ]; then
  echo "browser-check: no chromium on PATH (apt-get install chromium)" >&2
  exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  bin="${BROWNOUT:-}"
  if [ -z "$bin" ]; then
    if command -v brownout >/dev/null 2>&1; then bin=brownout
    elif [ -x "$here/target/ci/brownout" ]; then bin="$here/target/ci/brownout"
    else bin="$here/target/debug/brownout"; fi
  fi
  "$bin" run "$here/scenarios/payments-brownout.ron" --replications 2 --out "$work/run" >/dev/null
  "$bin" sweep "$here/scenarios/sweeps/sweep-demo.ron" -j 2 -q --out "$work/sweep" >/dev/null
  dirs=("$work/run" "$work/sweep")
fi

# Appended to a copy of the page: measures every chart once the page has laid out, and writes
# one line per chart and a summary into <pre id="browser-check"> for --dump-dom.
probe='<script>
window.addEventListener("load", () => {
  const out = [];
  let bad = 0;
  const charts = [...document.querySelectorAll("figure svg, figure img, body > svg, img")];
  const seen = new Set();
  for (const el of charts) {
    if (seen.has(el)) continue;
    seen.add(el);
    const box = el.getBoundingClientRect();
    const name = (el.closest("figure") && el.closest("figure").id) || el.getAttribute("src") || "chart";
    let drawn = 0, hidden = 0;
    if (el.tagName.toLowerCase() === "svg") {
      for (const s of el.querySelectorAll("rect, path, polyline, polygon, line, circle")) {
        const w = parseFloat(s.getAttribute("width")), h = parseFloat(s.getAttribute("height"));
        if (w < 0 || h < 0) { hidden++; continue; }
        const b = s.getBoundingClientRect();
        if (b.width > 0 || b.height > 0) drawn++;
      }
    } else {
      drawn = el.naturalWidth > 0 ? 1 : 0;
    }
    const ok = box.width > 0 && box.height > 0 && drawn > 0 && hidden === 0;
    if (!ok) bad++;
    out.push(`${ok ? "ok  " : "FAIL"} chart ${name}: ${Math.round(box.width)}x${Math.round(box.height)} px, ${drawn} drawn shapes, ${hidden} negative-size`);
  }
  const rec = document.getElementById("recommendation") ||
    [...document.querySelectorAll("h2")].find(h => /^Recommend/.test(h.textContent));
  const recText = rec ? (rec.closest("section") || rec.parentElement).textContent : "";
  out.push(`recommendation-section: ${rec ? "present" : "absent"} (${recText.includes("Recommended") ? "names a choice" : "no choice named"})`);
  out.push(`charts: ${seen.size}, failing: ${bad}`);
  const pre = document.createElement("pre");
  pre.id = "browser-check";
  pre.textContent = out.join("\n");
  document.body.appendChild(pre);
});
</script>'

status=0
for d in "${dirs[@]}"; do
  page="$d/report.html"
  if [ ! -f "$page" ]; then
    echo "FAIL $page: no such file"; status=1; continue
  fi
  copy="$work/$(basename "$d")-$RANDOM.html"
  { cat "$page"; printf '%s\n' "$probe"; } >"$copy"
  dom="$("$browser" --headless --no-sandbox --disable-gpu --window-size=1280,2000 \
    --virtual-time-budget=5000 --dump-dom "file://$copy" 2>/dev/null)"
  report="$(printf '%s' "$dom" | sed -n '/<pre id="browser-check">/,/<\/pre>/p' \
    | sed -e 's/<pre id="browser-check">//' -e 's/<\/pre>.*//')"
  echo "== $page"
  if [ -z "$report" ]; then
    echo "FAIL the page did not run the probe"; status=1; continue
  fi
  printf '%s\n' "$report"
  charts="$(printf '%s\n' "$report" | sed -n 's/^charts: \([0-9]*\), failing: \([0-9]*\)$/\1 \2/p')"
  read -r count failing <<<"${charts:-0 1}"
  if [ "$count" -eq 0 ] || [ "$failing" -ne 0 ]; then
    echo "FAIL $page: $count chart(s), $failing without visible content"; status=1
  fi
  if [ -f "$d/recommendation.json" ] && ! printf '%s\n' "$report" | grep -q '^recommendation-section: present (names a choice)'; then
    echo "FAIL $page: recommendation.json exists but the page shows no recommendation"; status=1
  fi
done
exit $status
