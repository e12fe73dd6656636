# SPDX-License-Identifier: BSD-2-Clause-Patent
"""report.html: one static page, no server and no network. The plots are inside it (SVG as
data: URIs, so their ids cannot collide), the tables sort on a click of their header (a few
lines of inline script), and every number shown is in report.json too."""

import base64
import html
import time
import urllib.parse

from . import VERSION

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}
td:first-child,th:first-child{text-align:left}th{background:#f3f3f3;cursor:pointer;user-select:none}
th.asc::after{content:" \\25B2"}th.desc::after{content:" \\25BC"}
tr.off td{color:#a33}.note{color:#a60}.bad{color:#b00}.good{color:#070}
img.plot{max-width:100%;border:1px solid #eee;margin:.4em 0}.meta{color:#666}
"""

# click a header: sort the rows by that column (numbers by value, then text), again: reverse
SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var asc = !th.classList.contains('asc');
      table.querySelectorAll('th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(asc ? 'asc' : 'desc');
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var key = function (r) { var c = r.cells[col]; var v = c.getAttribute('data-v');
        return v === null ? c.textContent : v; };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b), nx = parseFloat(x), ny = parseFloat(y);
        var bx = isNaN(nx), by = isNaN(ny), d;
        if (bx !== by) return bx ? 1 : -1;
        d = bx ? x.localeCompare(y) : nx - ny;
        return asc ? d : -d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def e(v):
    return html.escape("" if v is None else str(v))


def num(v, digits=3, suffix=""):
    """A cell with its exact value in data-v (the sort key) and a rounded text."""
    if v is None:
        return '<td data-v="">n/a</td>'
    return '<td data-v="%r">%s%s</td>' % (float(v), ("%%.%df" % digits) % v, suffix)


def _pct(v):
    if v is None:
        return '<td data-v="">n/a</td>'
    cls = "good" if v < 0 else "bad" if v > 0 else ""
    return '<td data-v="%r" class="%s">%+.2f %%</td>' % (float(v), cls, v)


def data_uri(svg):
    """The SVG as a data: URI, percent-encoded text or base64, whichever is shorter."""
    b64 = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    txt = "data:image/svg+xml;charset=utf-8," + urllib.parse.quote(svg, safe=" /=:;,.-_!*'()[]{}+?@$~")
    return txt if len(txt) < len(b64) else b64


def img(plot, what):
    links = " ".join('<a href="%s">%s</a>' % (e(plot[k]), k.upper()) for k in ("png", "svg") if plot.get(k))
    return ('<figure><img class="plot" data-plot="%s" alt="%s" src="%s">%s</figure>' % (
        e(what), e(what), e(data_uri(plot["svg_text"])),
        '<figcaption class="meta">%s</figcaption>' % links if links else ""))


def worst_of(t, pool):
    m, best, worst = t["primary"], None, None
    for r in t["renditions"]:
        v = (r["pooled"].get(m) or {}).get(pool) if m else None
        if v is None:
            continue
        if worst is None or v < worst[1]:
            worst = (r["name"], v)
        if best is None or v > best:
            best = v
    return worst, best


def titles_table(rep, pool):
    rows = []
    for i, t in enumerate(rep["titles"]):
        m = t["primary"]
        worst, best = worst_of(t, pool)
        done = sum(1 for r in t["renditions"] if r["frames"])
        br = (t["bd_rate"].get(m) or {}) if m else {}
        bq = (t["bd_quality"].get(m) or {}) if m else {}
        rows.append("<tr><td><a href=\"#t%d\">%s</a></td><td>%s</td><td data-v=\"%d\">%d / %d</td>%s<td>%s</td>"
                    "<td>%s</td>%s%s<td data-v=\"%d\">%d / %d</td>%s%s%s<td data-v=\"%d\">%d</td></tr>" % (
                        i, e(t["title"]), e(t["status"]), done, done, len(t["renditions"]),
                        num(max([r["frames"] for r in t["renditions"]] or [0]), 0), e(m),
                        e(worst[0] if worst else None), num(worst[1] if worst else None), num(best),
                        len(t["hull"].get(m, [])), len(t["hull"].get(m, [])), len(t["renditions"]),
                        _pct(br.get("pchip")), _pct(br.get("cubic")), num(bq.get("pchip"), 3),
                        len(t["notes"]), len(t["notes"])))
    head = ("title", "status", "renditions done", "frames", "metric", "worst rendition", "its %s" % pool,
            "best %s" % pool, "on the hull", "BD-rate pchip", "BD-rate cubic", "BD-quality pchip", "notes")
    return ('<table class="sortable" id="titles"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (
        "".join("<th>%s</th>" % e(h) for h in head), "".join(rows)))


def renditions_table(t, key, rends, hull, pool):
    """A run's renditions: the primary metric's pools, the other metrics' quality. A title
    without scores in this run shows the other run's metrics (its rows have scores)."""
    metrics = t["metrics"] or ((t.get("_against") or {}).get("metrics") or [])
    m = metrics[0] if metrics else None
    others = [x for x in metrics if x != m]
    head = ["rendition", "size", "bitrate (kbit/s)", "frames"] + \
        (["%s %s" % (m, p) for p in ("mean", "harmonic_mean", "min", "perc1", "perc5")] if m else
         ["score %s" % p for p in ("mean", "harmonic_mean", "min", "perc1", "perc5")]) + \
        ["%s %s" % (x, pool) for x in others] + ["on the hull of"]
    rows = []
    for r in rends:
        on = [x for x, names in hull.items() if r["name"] in names]
        pm = r["pooled"].get(m) or {}
        cells = ["<td>%s</td>" % e(r["name"]),
                 '<td data-v="%s">%s</td>' % ((r["width"] or 0) * (r["height"] or 0),
                                              "%sx%s" % (r["width"], r["height"]) if r["width"] else "n/a"),
                 num(r["bitrate_kbps"], 1), num(r["frames"], 0)]
        cells += [num(pm.get(p)) for p in ("mean", "harmonic_mean", "min", "perc1", "perc5")]
        cells += [num((r["pooled"].get(x) or {}).get(pool)) for x in others]
        cells.append("<td>%s</td>" % e(", ".join(on)))
        off = m and r["frames"] and hull.get(m) is not None and m not in on
        rows.append('<tr class="%s">%s</tr>' % ("off" if off else "", "".join(cells)))
    return '<table class="sortable" id="%s"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (
        key, "".join("<th>%s</th>" % e(h) for h in head), "".join(rows))


def bd_table(t):
    rows = []
    for m in t["metrics"]:
        br, bq = t["bd_rate"].get(m) or {}, t["bd_quality"].get(m) or {}
        rows.append("<tr><td>%s</td><td>%s</td><td>%s</td>%s%s%s%s</tr>" % (
            e(m), e(", ".join(t["hull"].get(m, []))), e(", ".join(t["not_on_hull"].get(m, []))),
            _pct(br.get("pchip")), _pct(br.get("cubic")), num(bq.get("pchip")), num(bq.get("cubic"))))
    head = ("metric", "hull (bitrate order)", "not on the hull", "BD-rate pchip", "BD-rate cubic",
            "BD-quality pchip", "BD-quality cubic")
    return '<table class="sortable"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (
        "".join("<th>%s</th>" % e(h) for h in head), "".join(rows))


def page(rep, plots, pool):
    """The page's text; plots: per title plot_title()'s result."""
    out = ["<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
           "<title>vmaf-cuda report</title><style>%s</style></head><body>" % CSS,
           "<h1>vmaf-cuda report</h1><p class=\"meta\">%s%s; qualities pooled by %s; written %s by "
           "vmaf-cuda-report %s. Negative BD-rate: this run needs fewer bits for the same quality.</p>" % (
               e(rep.get("source") or "logs"),
               " against " + e(rep["against_source"]) if rep.get("against_source") else "", e(pool),
               time.strftime("%Y-%m-%d %H:%M"), VERSION),
           "<h2>Titles</h2>", titles_table(rep, pool)]
    for n in rep.get("notes") or []:
        out.append('<p class="note">%s</p>' % e(n))
    if rep.get("only_in_against"):
        out.append('<h2>Only in the other run</h2><p>Titles of the other run that this run lacks (not '
                   'compared):</p><ul id="only-in-against">%s</ul>' % "".join(
                       "<li>%s</li>" % e(x) for x in rep["only_in_against"]))
    for i, (t, p) in enumerate(zip(rep["titles"], plots)):
        out.append('<section id="t%d"><h2>%s <span class="meta">(%s)</span></h2>' % (i, e(t["title"]), e(t["status"])))
        if t.get("error"):
            out.append('<p class="bad">%s</p>' % e(t["error"]))
        out.append(renditions_table(t, "r%d" % i, t["renditions"], t["hull"], pool))
        if t.get("against"):
            out.append("<p>The other run's renditions:</p>")
            out.append(renditions_table(t, "a%d" % i, t["against"]["renditions"], t.get("against_hull") or {}, pool))
        if t["metrics"]:
            out.append(bd_table(t))
        for n in t["notes"]:
            out.append('<p class="note">%s</p>' % e(n))
        ws = t["worst_seconds"]
        if ws:
            items = []
            for name, rows in ws.items():
                txt = ", ".join("%s (%.2f)" % ("%g-%g s" % (w["start_s"], w["end_s"]) if w["start_s"] is not None
                                                else "frames %d-%d" % (w["first_frame"], w["last_frame"]), w["mean"])
                                for w in rows)
                items.append("<li>%s: %s</li>" % (e(name), e(txt)))
            out.append("<p>Worst seconds (%s):</p><ul>%s</ul>" % (e(t["primary"]), "".join(items)))
        for m, pl in p["rate_quality"].items():
            out.append(img(pl, "%s rate-quality %s" % (t["title"], m)))
        if p["frames"]:
            out.append(img(p["frames"], "%s frames %s" % (t["title"], t["primary"])))
        out.append("</section>")
    out.append("<script>%s</script></body></html>\n" % SCRIPT)
    return "\n".join(out)
