#!/usr/bin/env python3
"""snapview report: the page is well formed, self-contained and escaped.

usage: report.py check REPORT.html [PLANTED]
       report.py png SCREENSHOT.png MIN_SHARE
       report.py dom DOM.html
       report.py svg FILE.svg

check: Python's html.parser reads the page with every element closed in
order (void elements aside; SVG's self-closed ones count as closed); no
reference leaves the page: no "http", no src= at all, every href= is
"#id" of an element that exists; no <script> (nor on* event handler
attribute); an <svg> with at least one non-empty band path. With PLANTED,
that string must not appear raw, and its HTML-escaped form must.

png: the screenshot (decoded here with zlib and struct: 8-bit RGB or
RGBA, no interlace) has at least MIN_SHARE percent of pixels in colour
(their channels more than 60 apart): the timeline's bands were drawn,
not only the text.

dom: the DOM a browser built from the page has no <script.

svg: the viewer's w wrote a standalone SVG: well-formed XML (Python's
xml.etree), the svg element in the SVG namespace, at least one band path,
no script element and no reference out of the file.
"""
import html
import html.parser
import re
import struct
import sys
import zlib

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
        "meta", "source", "track", "wbr"}


class Strict(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.hrefs = [], [], set(), []
        self.bands = 0
        self.svg = 0

    def attrs(self, tag, attrs):
        for k, v in attrs:
            if k == "id":
                self.ids.add(v)
            if k == "href":
                self.hrefs.append(v)
            if k == "src":
                self.errors.append("src= on <%s>" % tag)
            if k.startswith("on"):
                self.errors.append("event handler %s on <%s>" % (k, tag))
        if tag == "svg":
            self.svg += 1
        if tag == "path" and dict(attrs).get("class") == "band" and \
                len(dict(attrs).get("d", "")) > 10:
            self.bands += 1
        if tag == "script":
            self.errors.append("<script>")

    def handle_starttag(self, tag, attrs):
        self.attrs(tag, attrs)
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.attrs(tag, attrs)

    def handle_endtag(self, tag):
        if not self.stack:
            self.errors.append("</%s> at %s closes nothing" %
                               (tag, self.getpos()))
            return
        top, pos = self.stack.pop()
        if top != tag:
            self.errors.append("</%s> at %s closes <%s> of %s" %
                               (tag, self.getpos(), top, pos))


def check(path, planted):
    text = open(path, encoding="utf-8").read()
    p = Strict()
    p.feed(text)
    p.close()
    errs = list(p.errors)
    if p.stack:
        errs.append("never closed: %s" % p.stack)
    if not text.startswith("<!DOCTYPE html>"):
        errs.append("no doctype")
    if "http" in text:
        errs.append("'http' in the page")
    if re.search(r"<script", text, re.I):
        errs.append("<script in the page")
    for h in p.hrefs:
        if not h.startswith("#") or h[1:] not in p.ids:
            errs.append("href %r leads nowhere on the page" % h)
    if p.svg == 0 or "<svg" not in text:
        errs.append("no <svg>")
    if p.bands == 0 and "No trace" not in text:
        errs.append("no band drawn")
    if planted is not None:
        if planted in text:
            errs.append("%r is in the page raw" % planted)
        if html.escape(planted, quote=True).replace("&#x27;", "&#39;") \
                not in text:
            errs.append("%r is not in the page escaped" % planted)
    for e in errs:
        print("FAIL: %s: %s" % (path, e))
    if not errs:
        print("ok: %s: well formed, %d bands, %d links, self-contained" %
              (path, p.bands, len(p.hrefs)))
    return 1 if errs else 0


def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG" % path)
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace != 0:
        raise SystemExit("%s: PNG kind %s not decoded here" % (path, hdr))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    i = 0
    for _ in range(h):
        ft = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def png(path, min_share):
    w, h, bpp, rows = png_pixels(path)
    # the bands are the page's only large areas of colour: text is black
    # or grey, and the links are a few words
    ink = sum(1 for row in rows for x in range(0, w * bpp, bpp)
              if max(row[x], row[x + 1], row[x + 2]) -
              min(row[x], row[x + 1], row[x + 2]) > 60)
    share = 100.0 * ink / (w * h)
    ok = share >= min_share
    print("%s: %s: %dx%d, %.1f%% of pixels in colour (want >= %.1f%%)" %
          ("ok" if ok else "FAIL", path, w, h, share, min_share))
    return 0 if ok else 1


def dom(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    bad = re.search(r"<script", text, re.I) is not None
    ok = not bad and "<svg" in text
    print("%s: %s: %s" % ("ok" if ok else "FAIL", path,
                          "no script, an svg" if ok else
                          "script in the DOM or no svg"))
    return 0 if ok else 1


def svg(path):
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    errs = []
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        errs.append("not XML: %s" % e)
        root = None
    if root is not None:
        if root.tag != ns + "svg":
            errs.append("root %s" % root.tag)
        bands = [e for e in root.iter(ns + "path")
                 if e.get("class") == "band" and len(e.get("d", "")) > 10]
        if not bands:
            errs.append("no band")
        for e in root.iter():
            if e.tag == ns + "script" or any(
                    k.startswith("on") or k.endswith("href") or k == "src"
                    for k in e.attrib):
                errs.append("script or reference on %s" % e.tag)
    for e in errs:
        print("FAIL: %s: %s" % (path, e))
    if not errs:
        print("ok: %s: SVG with %d bands" % (path, len(bands)))
    return 1 if errs else 0


def main():
    if sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else
                     None)
    if sys.argv[1] == "png":
        return png(sys.argv[2], float(sys.argv[3]))
    if sys.argv[1] == "dom":
        return dom(sys.argv[2])
    if sys.argv[1] == "svg":
        return svg(sys.argv[2])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
