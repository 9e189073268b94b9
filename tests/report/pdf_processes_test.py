#!/usr/bin/env python3
"""`llmcap report --out X.pdf` run four times, in four processes, on one run document writes the same
bytes apart from the /CreationDate entry (Qt's hash seed is fixed in report/pdf_writer.cpp;
with Qt's default per-process seed the embedded font objects came in a different order).

Usage: pdf_processes_test.py LLMCAP RUN_DOCUMENT WORK_DIR
"""
import os
import re
import subprocess
import sys


def render(llmcap, document, out):
    subprocess.run([llmcap, "report", "--document", document, "--out", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out, "rb") as f:
        return re.sub(rb"/CreationDate ?\([^)]*\)", b"", f.read())


def main():
    llmcap, document, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    # Four runs: under a per-process seed two runs happened to agree about half the time.
    a = render(llmcap, document, os.path.join(work, "0.pdf"))
    for k in range(1, 4):
        b = render(llmcap, document, os.path.join(work, f"{k}.pdf"))
        if a != b:
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print(f"run {k} differs from run 0 ({len(b)} and {len(a)} bytes; first at byte {first})")
            return 1
    print(f"four PDFs are identical apart from /CreationDate ({len(a)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
