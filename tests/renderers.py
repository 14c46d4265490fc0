#!/usr/bin/env python3
"""Checks of memprobe's renderers against the document they rendered
(tests/run-integration.sh's test_renderers). Each subcommand prints one
line per finding, "ok WHAT" or "bad WHAT: got ..., want ...", and exits 1
when anything was bad; the shell turns the lines into checks.

  csv DOC.json OUT.csv TABLE      the table's rows equal the document's
  markdown DOC.json OUT.md        one row per category, exact with --bytes
  folded DOC.json OUT.folded      lines sum to the stacks' net bytes
  png FILE.png                    a screenshot that is not blank
  dom DOC.json DUMP.html          the page's own DOM query (see PROBE_JS)
  inject PAGE.html OUT.html       the page with PROBE_JS in it
"""
import csv
import json
import re
import struct
import sys
import zlib

BAD = []

# The DOM query, run by chromium in the page: what the charts hold, whether
# the embedded document parses, errors thrown, and the page's width
# against the window's (a narrow screen must not scroll sideways).
PROBE_JS = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message)); });
document.addEventListener('DOMContentLoaded', function () {
  var q = function (s) { return Array.prototype.slice.call(document.querySelectorAll(s)); };
  var r = {
    series: q('svg .series').map(function (e) { return e.getAttribute('data-category'); }),
    bars: q('svg .bar').map(function (e) { return e.getAttribute('data-category'); }),
    bar_bytes: q('svg .bar').map(function (e) { return e.getAttribute('data-bytes'); }),
    limit_lines: q('svg .limit-line').length,
    oom_pids: q('svg .oom-mark').map(function (e) { return e.getAttribute('data-pid'); }),
    facts: q('[data-field]').map(function (e) {
      return [e.getAttribute('data-field'), e.getAttribute('data-value'),
              e.classList.contains('not-measured'), e.textContent];
    }),
    usage: q('svg.usage rect').map(function (e) {
      return [e.getAttribute('class'), e.getAttribute('data-part'),
              e.getAttribute('data-bytes'), e.getBBox().width];
    }),
    diverging: q('svg.chart[data-zero-x] g').map(function (e) {
      var b = e.querySelector('rect').getBBox();
      return [e.getAttribute('class'), e.getAttribute('data-category'),
              Number(e.getAttribute('data-bytes')), b.x, b.width,
              Number(e.ownerSVGElement.getAttribute('data-zero-x'))];
    }),
    labels: q('svg.chart').map(function (svg) {
      var vb = svg.viewBox.baseVal, cut = [], over = [], boxes = [];
      Array.prototype.forEach.call(svg.querySelectorAll('text'), function (t) {
        var b = t.getBBox();
        if (b.x < -0.5 || b.x + b.width > vb.width + 0.5 || b.y < -0.5 ||
            b.y + b.height > vb.height + 0.5)
          cut.push(t.textContent);
        boxes.forEach(function (o) {
          if (b.x < o.b.x + o.b.width - 1 && o.b.x < b.x + b.width - 1 &&
              b.y < o.b.y + o.b.height - 1 && o.b.y < b.y + b.height - 1)
            over.push(o.t + ' / ' + t.textContent);
        });
        boxes.push({ b: b, t: t.textContent });
      });
      // the OOM marks' triangles and the peak's dot: no text under them
      Array.prototype.forEach.call(svg.querySelectorAll('.oom-mark path, .peak-mark circle'),
        function (m) {
          var b = m.getBBox();
          boxes.forEach(function (o) {
            if (b.x < o.b.x + o.b.width - 1 && o.b.x < b.x + b.width - 1 &&
                b.y < o.b.y + o.b.height - 1 && o.b.y < b.y + b.height - 1)
              over.push(o.t + ' / a mark');
          });
        });
      return [svg.getAttribute('class'), cut, over];
    }),
    scroll_width: document.documentElement.scrollWidth,
    inner_width: window.innerWidth,
    errors: window.__errors,
  };
  try {
    var d = JSON.parse(document.getElementById('memprobe-report').textContent);
    r.kind = d.kind; r.created = d.created;
  } catch (x) { r.json_error = String(x); }
  var p = document.createElement('pre');
  p.id = 'test-result';
  p.textContent = JSON.stringify(r);
  document.body.appendChild(p);
});
</script>"""


def say(ok, what, got=None, want=None):
    if ok and got is not None and len(repr(got)) <= 100:
        print("ok %s: got %r, want %r" % (what, got, want))
    elif ok:
        print("ok", what)
    else:
        BAD.append(what)
        print("bad %s: got %r, want %r" % (what, got, want))


def eq(what, got, want):
    say(got == want, what, got, want)


def load(path):
    with open(path) as f:
        return json.load(f)


def sample_cat(s, cat):
    """A timeline figure as the renderers take it: stat, else bpf_growth."""
    if cat in s.get("stat", {}):
        return s["stat"][cat]
    return s.get("bpf_growth", {}).get(cat)


def overhead_rows(o, at, num):
    """The csv overhead table's rows of one overhead object."""
    rows = []
    for g in o.get("groups", []):
        for c in g["categories"]:
            rows.append([at, "group", g["comm"], g["role"], str(g["processes"]), num(g["pid"]),
                         c["category"], num(c["bytes"]),
                         num(g["copy_on_write_bytes"]) if c["category"] == "anon" else ""])
    for kind, key in (("reclaimed", "reclaimed_parts"), ("probe", "probe_kernel_parts")):
        rows += [[at, kind, "", "", "", "", c["category"], num(c["bytes"]), ""]
                 for c in o.get(key, [])]
    rows.append([at, "unexplained", "", "", "", "", "", num(o["unexplained_bytes"]), ""])
    rows.append([at, "total", "", "", "", "", "", num(o["bytes"]), ""])
    return rows


def check_csv(doc, path, table):
    with open(path, newline="") as f:
        raw = f.read()
    rows = list(csv.reader(raw.splitlines(True)))
    # a newline inside a quoted field is the field's own
    eq("csv: every line ends with CRLF", raw.count("\n") - raw.count("\r\n"),
       sum(c.count("\n") for r in rows for c in r))
    head, body = rows[0], rows[1:]
    a = doc["attribution"]
    num = lambda v: "" if v is None else str(v)
    if table == "categories":
        flag = lambda c, k: "true" if c.get(k) else ""
        want = [[c["name"], str(c["available"]).lower(), c.get("source", ""),
                 num(c["growth_bytes"]), num(c.get("retained_bytes")), flag(c, "estimated"),
                 num(c.get("bound_bytes")), flag(c, "below_floor")] for c in a["categories"]]
        eq("csv categories: header", head,
           ["category", "available", "source", "growth_bytes", "retained_bytes", "estimated",
            "bound_bytes", "below_floor"])
    elif table == "tasks":
        want = [[c["name"], num(t["pid"]), t["comm"], num(t["bytes"])]
                for c in a["categories"] for t in c.get("tasks", [])]
        eq("csv tasks: header", head, ["category", "pid", "comm", "bytes"])
    elif table == "kernel_paths":
        want = [[p["path"], "true", num(p["bytes"]), num(p["alloc_bytes"])]
                for p in a["kernel_paths"]]
        want += [[p["path"], "false", "", num(p["alloc_bytes"])] for p in a["not_charged"]]
    elif table == "hooks":
        want = [[h["concern"], h["name"], h["kind"] or "", h["target"] or "", h["hook"] or "",
                 str(h["polled"]).lower(), h.get("missing_reason", ""), h.get("missing", "")]
                for h in a["hooks"]]
    elif table == "timeline":
        cats = list(doc["category_sources"])
        eq("csv timeline: header", head,
           ["t_ms", "usage_bytes", "limit_bytes", "faults_per_sec"] + cats +
           ["resolution_ms", "samples", "usage_min_bytes", "usage_max_bytes"])
        iv = doc["run"]["interval_ms"]
        # a folded row: its last sample's figures, its resolution, samples
        # and usage min and max; a sample: the interval, 1, its usage twice
        want = [[str(s["t_ms"]), str(s["usage_bytes"]), num(s.get("limit_bytes")),
                 str(s["faults_per_sec"])] +
                [num(sample_cat(s, c)) for c in cats] +
                [str(s.get("resolution_ms", iv)), str(s.get("samples", 1)),
                 str(s.get("min", s)["usage_bytes"]), str(s.get("max", s)["usage_bytes"])]
                for s in doc["timeline"]]
    elif table == "overhead":
        eq("csv overhead: header", head, ["at", "kind", "comm", "role", "processes", "pid",
                                          "category", "bytes", "copy_on_write_bytes"])
        o = doc.get("overhead") or (doc.get("probe") or {}).get("overhead")
        want = overhead_rows(o, "peak", num) if o else []
        if o and o.get("left_after"):
            want += overhead_rows(o["left_after"], "left_after", num)
    elif table == "copy_on_write":
        eq("csv copy_on_write: header", head, ["pid", "comm", "bytes"])
        want = [[num(t["pid"]), t["comm"], num(t["bytes"])]
                for t in a.get("copy_on_write", {}).get("by_task", [])]
    elif table == "oom_kills":
        eq("csv oom_kills: header", head,
           ["t_ms", "pid", "comm", "usage_bytes", "usage_at_kill", "limit_bytes"])
        # a victim not known (pid null; 0 in older documents): both empty
        want = [[num(k["t_ms"]), num(k["pid"] or None), k["comm"] if k["pid"] else "",
                 num(k["usage_bytes"] if k.get("usage_bytes") is not None
                     else k["sample"]["usage_bytes"]),
                 "true" if k.get("usage_bytes") is not None else "false",
                 num(k.get("limit_bytes"))] for k in doc["oom_kills"]]
    else:
        raise SystemExit("no table " + table)
    eq("csv %s: %d rows, equal to the document's" % (table, len(want)), body, want)


def unspan(cell):
    return cell.strip().strip("`").replace("\\|", "|")


def check_markdown(doc, path):
    with open(path) as f:
        text = f.read()
    rows = {}
    in_cats = False
    for line in text.splitlines():
        if line.startswith("| category | growth"):
            in_cats = True
            continue
        if in_cats and not line.startswith("|"):
            break
        if in_cats and line.startswith("| `"):
            cells = line.strip("|").split(" | ")
            rows[unspan(cells[0])] = [c.strip() for c in cells[1:3]]
    cats = [c for c in doc["attribution"]["categories"]
            if c["growth_bytes"] or c.get("retained_bytes")]
    eq("markdown: one table row per category that grew or is left",
       sorted(rows), sorted(c["name"] for c in cats))
    # an estimate is marked "~" and says its bound in the same cell (not the
    # top tasks'), a count below the kernel's floor is "n/a"
    bound = lambda c: " \u00b1%d" % c["bound_bytes"] \
        if c.get("estimated") and c.get("bound_bytes") is not None else ""
    growth = lambda c: "n/a" if c.get("below_floor") else \
        ("~" if c.get("estimated") else "") + str(c["growth_bytes"]) + bound(c)
    eq("markdown --bytes: growth and left-after exact",
       {k: v for k, v in rows.items()},
       {c["name"]: [growth(c), "n/a" if c.get("retained_below_floor") else
                    str(c.get("retained_bytes", ""))] for c in cats})
    if doc["kind"] == "probe":
        m = re.search(r"\| \*\*overhead\*\* \| \*\*(-?\d+)\*\*", text)
        eq("markdown --bytes: the overhead row exact", m and m.group(1), str(doc["overhead_bytes"]))
    else:
        m = re.search(r"\| peak \| (\d+) at", text)
        eq("markdown --bytes: the peak row exact", m and m.group(1), str(doc["peak"]["usage_bytes"]))


def check_folded(doc, path):
    cats = {c["name"] for c in doc["attribution"]["categories"]}
    total, n, roots_ok = 0, 0, True
    with open(path) as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            total += int(count)
            n += 1
            roots_ok &= stack.split(";")[0] in cats and ";" in stack
    want = sum(s["bytes"] for c in doc["attribution"]["categories"]
               for s in c.get("top_stacks", []) if s["bytes"] > 0)
    eq("folded: the lines' bytes sum to the stacks' net bytes", total, want)
    say(roots_ok, "folded: every line is category;frames...", roots_ok, True)
    say(n > 0 or want == 0, "folded: lines written", n, ">0")


def png_pixels(path):
    """RGB(A) 8-bit non-interlaced PNG, as chromium writes it: rows of pixels."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and not interlace, "unexpected PNG type"
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, out = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return w, h, bpp, out


def pil_pixels(path):
    """Debian's python3-pil where installed: the same rows, faster."""
    try:
        from PIL import Image
    except ImportError:
        return None
    im = Image.open(path).convert("RGB")
    w, h = im.size
    data = im.tobytes()
    return w, h, 3, [data[y * w * 3:(y + 1) * w * 3] for y in range(h)]


def check_png(path):
    w, h, bpp, rows = pil_pixels(path) or png_pixels(path)
    nonwhite = anon = 0
    for r in rows:
        for i in range(0, len(r), bpp):
            px = r[i], r[i + 1], r[i + 2]
            nonwhite += px != (255, 255, 255)
            # the anon colour, #4e79a7, as drawn (with some opacity)
            anon += abs(px[0] - 0x4e) < 40 and abs(px[1] - 0x79) < 40 and abs(px[2] - 0xa7) < 40
    print("# screenshot %dx%d: %d non-white pixels, %d in the anon colour" %
          (w, h, nonwhite, anon))
    say(nonwhite > w * h // 50, "screenshot: not blank (over 2% non-white)", nonwhite, w * h // 50)
    say(anon > 500, "screenshot: the chart's anon colour is drawn", anon, ">500")


def dom_result(path):
    with open(path) as f:
        m = re.search(r'<pre id="test-result">(.*?)</pre>', f.read(), re.S)
    if not m:
        return None
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&amp;", "&"))


def check_dom(doc, path, narrow):
    r = dom_result(path)
    say(r is not None, "dom: the page ran the query", r, "a result")
    if r is None:
        return
    eq("dom: the embedded document parses, the same document", [r.get("kind"), r.get("created"),
       r.get("json_error")], [doc["kind"], doc["created"], None])
    eq("dom: no error thrown in the page", r["errors"], [])
    cats = doc["attribution"]["categories"]
    # a count below the kernel's floor is no figure: no bar
    drawn = [c for c in cats if c["growth_bytes"] and not c.get("below_floor")]
    eq("dom: one bar per category that grew", r["bars"], [c["name"] for c in drawn])
    eq("dom: the bars' bytes are the document's", r["bar_bytes"],
       [str(c["growth_bytes"]) for c in drawn])
    if doc["kind"] == "probe":
        check_usage_bar(doc, r["usage"])
        eq("dom: a limit line", r["limit_lines"], 1)
    if doc["kind"] == "record":
        want = [c for c in ("anon", "shmem", "file", "kernel", "sock")
                if any(timeline_series(s, c) > 0 for s in doc["timeline"])]
        eq("dom: the timeline has one series per non-zero category", r["series"], want)
        eq("dom: a limit line", r["limit_lines"], 1)
        eq("dom: an OOM mark per OOM kill (no data-pid: the victim not known)", r["oom_pids"],
           [str(k["pid"]) if k["pid"] else None for k in doc["oom_kills"]])
    check_facts(doc, r["facts"])
    eq("dom: the growth bars drawn about a zero line, shrinks included",
       [(c, b) for cls, c, b, x, w, z in r["diverging"] if cls.split()[0] == "bar"],
       [(c["name"], c["growth_bytes"]) for c in cats if c["growth_bytes"]])
    check_diverging(r["diverging"])
    for cls, cut, over in r["labels"]:
        eq("dom: svg.%s: no label cut at the chart's edge" % cls.replace(" ", "."), cut, [])
        eq("dom: svg.%s: no label over another" % cls.replace(" ", "."), over, [])
    if narrow:
        say(r["scroll_width"] <= r["inner_width"],
            "dom: at a %dpx window the page does not scroll sideways" % r["inner_width"],
            r["scroll_width"], "<= %d" % r["inner_width"])


def timeline_series(s, cat):
    """The timeline's stacked figure: file without its shmem (drawn apart)."""
    v = sample_cat(s, cat) or 0
    if cat == "file":
        v -= sample_cat(s, "shmem") or 0
    return max(v, 0)


def doc_path(doc, path):
    """A data-field's member: "pinned.shared_segments.0.resident_bytes"."""
    v = doc
    for k in path.split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
    return v


# the facts the text report says that the page must say too, where the
# document has them (older documents lack some)
WANT_FACTS = {
    "probe": ["target.headroom_bytes", "target.soft_headroom_bytes", "probe.margin_bytes",
              "probe.aim", "probe.stop_reason", "attribution.page_faults.total",
              "pinned.unevictable_bytes", "pinned.shmem_bytes", "pinned.shmem_unmapped_bytes",
              "pinned.drivers", "attribution.events_lost.total", "attribution.not_charged"],
    "record": ["attribution.page_faults.total", "attribution.events_lost.total",
               "attribution.not_charged"],
}


def check_facts(doc, facts):
    """Every data-field the page shows is the document's own value; null
    reads "not measured", never a number."""
    seen = {f[0] for f in facts}
    for path in WANT_FACTS[doc["kind"]]:
        try:
            doc_path(doc, path)
        except (KeyError, IndexError, TypeError):
            continue
        say(any(f == path or f.startswith(path + ".") for f in seen),
            "dom: the page shows %s" % path, sorted(seen), path)
    if doc["kind"] == "record":
        for i, k in enumerate(doc["oom_kills"]):
            for key in ("rss_bytes", "shmem_unmapped_bytes", "page_cache_unmapped_bytes",
                        "kernel_bytes", "sock_bytes"):
                p = "oom_kills.%d.charged.%s" % (i, key)
                say(p in seen, "dom: the page shows %s" % p, None, p)
    bad = []
    for path, value, nm, text in facts:
        try:
            want = doc_path(doc, path)
        except (KeyError, IndexError, TypeError):
            want = None  # an OOM's charged: null, its members read as not measured
        if isinstance(want, list):
            want = len(want)  # "none" lists: their length
        if path == "attribution.not_charged" and nm:  # no page allocation hook
            want = doc["attribution"].get("page_alloc", {}).get("kernel_pages_by_order", 0)
        if want is None:
            ok = nm and value is None and "not measured" in text.lower()
        else:
            ok = not nm and value == (str(want) if not isinstance(want, bool) else str(want).lower())
        if not ok:
            bad.append((path, value, nm, want))
    eq("dom: %d facts, each the document's value (null: not measured)" % len(facts), bad, [])


def check_usage_bar(doc, segs):
    """The peak's bar: the usage before, the probe's allocation, then the
    overhead's pieces, each its own segment, at least 3 px wide."""
    got = {(c.split()[0], p): int(float(b)) for c, p, b, w in segs}
    o = doc.get("overhead")
    want = {("base", None): doc["usage_before_bytes"], ("alloc", None): doc["allocated_bytes"]}
    if o:
        pieces = {"workload": sum(p["bytes"] for p in o["parts"]),
                  "probe-kernel": o["probe_kernel_bytes"], "unexplained": o["unexplained_bytes"]}
        if "reclaimed_bytes" in o:
            pieces["reclaimed"] = o["reclaimed_bytes"]
    else:
        pieces = {"overhead": doc["overhead_bytes"]}
    want.update({("overhead", k): v for k, v in pieces.items() if v})
    eq("dom: the usage bar: before, allocation and the overhead's pieces, exact", got, want)
    eq("dom: the overhead's pieces sum to overhead_bytes",
       sum(v for (c, p), v in got.items() if c == "overhead"), doc["overhead_bytes"])
    thin = [(c, p, w) for c, p, b, w in segs if float(b) and w < 2.99]
    eq("dom: every non-zero segment of the usage bar at least 3 px wide", thin, [])


def check_diverging(rows):
    """A shrink's bar left of zero, growth's right of it, none thinner than 3."""
    wrong = [(cls, cat, b, round(x, 1), round(w, 1), z) for cls, cat, b, x, w, z in rows
             if (b < 0 and x + w > z + 0.5) or (b > 0 and x < z - 0.5) or (b and w < 2.99)]
    neg = [(cat, b) for cls, cat, b, x, w, z in rows if b < 0]
    print("# %d diverging bars, %d negative: %r" % (len(rows), len(neg), neg[:4]))
    eq("dom: %d bars, each on its side of zero (%d negative drawn left)" % (len(rows), len(neg)),
       wrong, [])


def inject(page, out):
    with open(page) as f:
        html = f.read()
    with open(out, "w") as f:
        f.write(html.replace("<head>", "<head>" + PROBE_JS, 1))


def main(argv):
    cmd = argv[1]
    if cmd == "csv":
        check_csv(load(argv[2]), argv[3], argv[4])
    elif cmd == "markdown":
        check_markdown(load(argv[2]), argv[3])
    elif cmd == "folded":
        check_folded(load(argv[2]), argv[3])
    elif cmd == "png":
        check_png(argv[2])
    elif cmd == "dom":
        check_dom(load(argv[2]), argv[3], len(argv) > 4)
    elif cmd == "inject":
        inject(argv[2], argv[3])
        return 0
    return 1 if BAD else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
