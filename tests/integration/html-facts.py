#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# html-facts.py DOM.html [PAGE.html]: what a user sees on a latsnap HTML page, as one JSON
# object, read from the DOM a real browser rendered (chromium --dump-dom) and, given the page
# file itself, the data it carries. Used by tests/integration/83-html.t.
import json
import sys
from html.parser import HTMLParser


class Facts(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.facts = {"render": None, "errors": None, "scripts": 0, "script_srcs": 0,
                      "rows": [], "lanes": [], "wakeups": {}, "links": [], "hist_bars": 0,
                      "groups": [], "sections": [], "drawn": [], "text": ""}
        self.stack = []          # (tag, attrs) of the open elements
        self.row = None          # the index row being read
        self.cell = None         # the class of the cell being read, and its text
        self.group = None        # a row of a groups table
        self.section = None      # the id of the outlier section we are in
        self.lane = None
        self.texts = []

    def attr(self, attrs, name):
        for k, v in attrs:
            if k == name:
                return v
        return None

    def handle_starttag(self, tag, attrs):
        cls = (self.attr(attrs, "class") or "").split()
        if tag == "body":
            self.facts["render"] = self.attr(attrs, "data-render")
            self.facts["errors"] = self.attr(attrs, "data-errors")
            self.facts["draw_ms"] = self.attr(attrs, "data-draw-ms")
        if tag == "script":
            self.facts["scripts"] += 1
            if self.attr(attrs, "src"):
                self.facts["script_srcs"] += 1
        if tag == "tr" and "outlier-row" in cls:
            self.row = {"index": self.attr(attrs, "data-index")}
        if tag == "td" and self.row is not None:
            self.cell = [cls[0] if cls else "", ""]
        if tag == "table" and "groups" in cls:
            self.group = []
        if tag == "td" and self.group is not None and self.row is None:
            self.cell = ["group", ""]
        if tag == "details" and "outlier" in cls:
            self.section = self.attr(attrs, "id")
            self.facts["sections"].append(self.section)
            if self.attr(attrs, "data-drawn"):
                self.facts["drawn"].append(self.section)
        if tag == "g" and "lane" in cls:
            self.lane = {"section": self.section, "tid": self.attr(attrs, "data-tid"),
                         "role": self.attr(attrs, "data-role"), "rects": {}}
            self.facts["lanes"].append(self.lane)
        if tag == "rect" and self.lane is not None:
            for c in cls:
                self.lane["rects"][c] = self.lane["rects"].get(c, 0) + 1
        if tag == "line" and "wakeup" in cls:
            self.facts["wakeups"][self.section] = self.facts["wakeups"].get(self.section, 0) + 1
        if tag == "a" and "snapshot-link" in cls:
            self.facts["links"].append(self.attr(attrs, "href"))
        if tag == "span" and "bar" in cls and any(t == "table" and "hist" in (self.attr(a, "class") or "")
                                                 for t, a in self.stack):
            self.facts["hist_bars"] += 1
        if tag not in ("br", "img", "meta", "link", "input", "rect", "line", "path", "col"):
            self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            if self.row is not None:
                self.row[self.cell[0]] = self.cell[1].strip()
            elif self.group is not None:
                self.group.append(self.cell[1].strip())
            self.cell = None
        if tag == "tr" and self.row is not None:
            self.facts["rows"].append(self.row)
            self.row = None
        if tag == "tr" and self.group:
            self.facts["groups"].append(self.group)
            self.group = []
        if tag == "table":
            self.group = None
        if tag == "g":
            self.lane = None
        if tag == "details":
            self.section = None
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[1] += data
        if not any(t in ("script", "style") for t, _ in self.stack):
            self.texts.append(data)


def page_data(path):
    text = open(path, encoding="utf-8").read()
    start = text.index('<script type="application/json" id="latsnap-data">')
    start = text.index(">", start) + 1
    end = text.index("</script>", start)
    return json.loads(text[start:end])


def main():
    p = Facts()
    p.feed(open(sys.argv[1], encoding="utf-8", errors="replace").read())
    p.close()
    p.facts["text"] = " ".join(" ".join(p.texts).split())
    if len(sys.argv) > 2:
        p.facts["data"] = page_data(sys.argv[2])
    json.dump(p.facts, sys.stdout)


main()
