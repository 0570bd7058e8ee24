#!/usr/bin/env bash
# Regenerates the committed pictures and golden reports from the grocery scenarios:
#   bash docs/regen.sh
# A change in behaviour then shows up in review as a diff of docs/golden/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
for s in grocery grocery-overload; do
  ./target/release/brownout run "scenarios/$s.ron" --out "output/$s" > /dev/null
  mkdir -p "docs/golden/$s"
  cp "output/$s/summary.json" "output/$s/report.md" "docs/golden/$s/"
done
cp output/grocery/charts/goodput_checkout.png docs/img/grocery-goodput-checkout.png
cp output/grocery/charts/resources.png docs/img/grocery-resources.png
cp output/grocery-overload/charts/breaker.png docs/img/grocery-overload-breaker.png
echo "regenerated docs/img and docs/golden"
