#!/usr/bin/python3
"""Parses a report file back for tests/report: prints one JSON object on stdout.

  parse_report.py html FILE  -> {"title", "svg_count", "tables": {id: [[cell text]]}, "text",
                                 "external_refs": [...]}  (strict XML parse, then html.parser)
  parse_report.py xlsx FILE  -> {"sheets": [names], "cells": {sheet: [[value]]}}  (openpyxl)
"""
import json
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser


class Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables, self.current, self.row, self.cell = {}, None, None, None
        self.svg_count, self.title, self.in_title, self.text = 0, "", False, []
        self.external_refs = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg_count += 1
        if tag == "title" and self.svg_count == 0:
            self.in_title = True
        if tag == "table":
            self.current = a.get("id", "")
            self.tables[self.current] = []
        if tag == "tr" and self.current is not None:
            self.row = []
        if tag in ("td", "th") and self.row is not None:
            self.cell = []
        for k in ("src", "href"):
            if k in a and not a[k].startswith("#"):
                self.external_refs.append(a[k])
        if tag in ("script", "link", "iframe", "object"):
            self.external_refs.append(tag)

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        if tag == "tr" and self.row is not None:
            self.tables[self.current].append(self.row)
            self.row = None
        if tag == "table":
            self.current = None

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        if self.cell is not None:
            self.cell.append(data)
        self.text.append(data)


def parse_html(path):
    text = open(path, encoding="utf-8").read()
    ET.fromstring(text.split("\n", 1)[1])  # after <!DOCTYPE html>: well-formed XML or raises
    p = Tables()
    p.feed(text)
    p.close()
    return {"title": p.title, "svg_count": p.svg_count, "tables": p.tables,
            "text": " ".join(" ".join(p.text).split()), "external_refs": p.external_refs}


def parse_xlsx(path):
    import openpyxl
    wb = openpyxl.load_workbook(path, data_only=True)
    cells = {}
    for ws in wb.worksheets:
        cells[ws.title] = [[v for v in row] for row in ws.iter_rows(values_only=True)]
    return {"sheets": wb.sheetnames, "cells": cells}


if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    out = parse_html(path) if kind == "html" else parse_xlsx(path)
    json.dump(out, sys.stdout, default=str)
