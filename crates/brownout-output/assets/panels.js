// report.html's interactive time-series panels (brownout's own code, inlined after uPlot).
// Reads the run's series from the JSON element #brownout-series, draws one
// uPlot panel per (class, column) and per fleet-wide column, every policy set a series. Hover
// shows each set's value for the window under the cursor (cursors synchronised across panels);
// dragging across a panel zooms every panel to that time range (double-click resets); a
// policy's checkbox, or its legend entry in any panel, hides or shows it in every panel.
// Without JavaScript nothing here runs and the static charts below carry the same series.
(function () {
  "use strict";
  var root = document.getElementById("brownout-panels");
  var source = document.getElementById("brownout-series");
  if (!root || !source || typeof uPlot === "undefined") return;
  var data = JSON.parse(source.textContent);
  var plots = [];
  // For the browser test and for a reader's console: every panel's uPlot instance.
  window.brownoutPlots = plots;
  var boxes = [];
  var syncing = false;

  function text(v) {
    return v == null ? "\u2013" : String(v);
  }

  // Show or hide policy set `i` in every panel and tick its checkbox to match.
  function setShown(i, show) {
    if (syncing) return;
    syncing = true;
    plots.forEach(function (u) {
      if (u.series[i + 1].show !== show) u.setSeries(i + 1, { show: show });
    });
    if (boxes[i]) boxes[i].checked = show;
    syncing = false;
  }

  // Zoom every panel to the same time range.
  function setRange(min, max) {
    if (syncing) return;
    syncing = true;
    plots.forEach(function (u) {
      if (u.scales.x.min !== min || u.scales.x.max !== max) u.setScale("x", { min: min, max: max });
    });
    syncing = false;
  }

  var bar = document.createElement("div");
  bar.className = "policy-toggles";
  bar.appendChild(document.createTextNode("Policy sets: "));
  data.policies.forEach(function (name, i) {
    var label = document.createElement("label");
    var box = document.createElement("input");
    box.type = "checkbox";
    box.checked = true;
    box.dataset.policy = String(i);
    box.addEventListener("change", function () {
      setShown(i, box.checked);
    });
    var swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = data.colors[i];
    label.appendChild(box);
    label.appendChild(swatch);
    label.appendChild(document.createTextNode(name));
    bar.appendChild(label);
    boxes.push(box);
  });
  root.appendChild(bar);

  // Warm-up and phases as shaded bands behind the series.
  function shade(u) {
    var ctx = u.ctx;
    ctx.save();
    data.bands.forEach(function (b, k) {
      var x0 = u.valToPos(b.from, "x", true);
      var x1 = u.valToPos(b.to, "x", true);
      var left = Math.max(x0, u.bbox.left);
      var right = Math.min(x1, u.bbox.left + u.bbox.width);
      if (right <= left) return;
      ctx.fillStyle = b.warmup ? "rgba(0,0,0,0.06)" : k % 2 ? "rgba(255,190,60,0.10)" : "rgba(255,190,60,0.18)";
      ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
    });
    ctx.restore();
  }

  var width = Math.max(360, Math.min(root.clientWidth || 1100, 1100));
  var heading = null;
  data.panels.forEach(function (p, n) {
    if (p.group !== heading) {
      heading = p.group;
      var h = document.createElement("h3");
      h.textContent = p.group;
      root.appendChild(h);
    }
    var fig = document.createElement("figure");
    fig.className = "panel";
    fig.id = "panel-" + n;
    fig.dataset.column = p.column;
    fig.dataset.class = p.class;
    root.appendChild(fig);
    var series = [{ label: data.x_label, value: function (u, v) { return text(v); } }];
    data.policies.forEach(function (name, i) {
      series.push({
        label: name,
        stroke: data.colors[i],
        width: 1.5,
        points: { show: true, size: 4 },
        value: function (u, v) { return text(v); },
      });
    });
    var opts = {
      title: p.title,
      width: width,
      height: 220,
      cursor: { sync: { key: "brownout", setSeries: false }, drag: { x: true, y: false } },
      scales: { x: { time: false, range: function (u, min, max) { return [min, max]; } } },
      axes: [{ label: data.x_label }, { label: p.unit, size: 60 }],
      series: series,
      hooks: {
        drawClear: [shade],
        setSeries: [function (u, i, o) { if (i != null && o && "show" in o) setShown(i - 1, o.show); }],
        setScale: [function (u, key) { if (key === "x") setRange(u.scales.x.min, u.scales.x.max); }],
      },
    };
    plots.push(new uPlot(opts, [data.t].concat(p.series), fig));
  });
  var note = document.createElement("p");
  note.className = "panel-help";
  note.textContent =
    "Hover a panel for every set's value in the window under the cursor; drag across a panel to zoom all " +
    "panels to that time range (double-click resets); untick a set, or click its name in a legend, to hide it.";
  root.insertBefore(note, bar.nextSibling);
})();
