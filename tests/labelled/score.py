#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""score.py: precision and recall of latsnap's "latency" on a labelled program (README.md).

  score.py --name NAME --gt LOG [--gt LOG...] --out OUT --err ERR [--snaps DIR] [--min-ms MS]
           [--result FILE]

LOG: ground truth lines "latency|idle TID START END WHAT", "window START END", "thread TID ROLE"
(CLOCK_MONOTONIC ns). OUT: `latsnap record --json`'s stdout; ERR: its stderr under -v (the
"record: idle, not latency: ..." lines); DIR: its snapshots (summary.json: the outliers `latsnap
report` counts, and each snapshot's idle list).

A latency wait of at least MS (default 65) is found (true positive) when an outlier of its thread
overlaps it (by half the shorter of the two at least); otherwise it is a false negative, "filed
idle" when idle lines of its thread fit in it (a fifth of it to 20 ms more: a wait may be cut in
pieces), "missed" when none does.
Every outlier (one per thread and start: a wait reported while it lasted and again is one) that
overlaps the window and no latency wait of its thread is a false positive: in the window the
programs do nothing but the labelled work, so any other wait is one for work. An outlier that
waited for a CPU more than it was blocked (or for Ruby's GVL after its timeslice: flag ruby-gvl-yield), or whose cause is the disk (Direct I/O, a read from disk,
writeback, the journal: a background thread writing pages), is not scored (listed apart): it says
how busy the machine was, not what the thread waited for. Idle threads in the report: the threads of the false
positives among the outliers of the complete snapshots (what `latsnap report` counts, stalls
included).

Prints one line of numbers, then one line per misjudged wait; --result writes them as JSON.
"""
import argparse
import glob
import json
import os
import re
import sys

# Causes of a wait on the machine's storage (classify/rules-builtin.c).
DISK_CAUSE_RE = re.compile(r"disk|Block I/O|ext4 journal")
# "MS ms so far (still-blocked: ...)", "MS ms (ended)": which report of its wait the line is.
IDLE_RE = re.compile(r"record: idle, not latency: (.*)\[(\d+)\] (\S+) ([0-9.]+) ms"
                     r"(?: so far)?(?: \([^)]*\))?: (.*)$")


def read_gt(paths):
    spans, window, roles = [], None, {}
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                w = line.split()
                if len(w) >= 4 and w[0] in ("latency", "idle", "work"):
                    spans.append({"label": w[0], "tid": int(w[1]), "start": int(w[2]),
                                  "end": int(w[3]), "what": w[4] if len(w) > 4 else "?"})
                elif len(w) == 3 and w[0] == "window":
                    window = (int(w[1]), int(w[2]))
                elif len(w) >= 3 and w[0] == "thread":
                    roles[int(w[1])] = " ".join(w[2:])
    return spans, window, roles


def read_ndjson(path):
    out = []
    if not path or not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def read_idle_lines(path):
    idle = []
    if not path or not os.path.exists(path):
        return idle
    with open(path, errors="replace") as f:
        for line in f:
            m = IDLE_RE.search(line)
            if m:
                idle.append({"comm": m.group(1), "tid": int(m.group(2)), "syscall": m.group(3),
                             "ms": float(m.group(4)), "why": m.group(5)})
    return idle


def read_snapshots(snaps):
    """The outliers of the complete snapshots (summary.json present) and their idle lists."""
    outliers, idle = [], []
    if not snaps:
        return outliers, idle
    for path in sorted(glob.glob(os.path.join(snaps, "*", "summary.json"))):
        try:
            with open(path) as f:
                s = json.load(f)
        except (OSError, ValueError):
            continue
        outliers.extend(s.get("outliers") or [])
        idle.extend(s.get("idle") or [])
    return outliers, idle


def frames_text(frames, n=12):
    names = []
    for fr in (frames or [])[:n]:
        sym = fr.get("symbol")
        mod = fr.get("module") or "?"
        names.append("%s (%s)" % (sym, os.path.basename(mod)) if sym else
                     "%s (%s)" % (fr.get("addr"), os.path.basename(mod)))
    return " < ".join(names)


def overlaps(o, s):
    """Whether outlier @o is (part of) wait @s: same thread, and at least half of the shorter of
    the two in common (a wait for the next statement that ends as the client's clock starts a
    statement touches it, and is not it)."""
    if o["tid"] != s["tid"]:
        return False
    common = min(o["end_ns"], s["end"]) - max(o["start_ns"], s["start"])
    return common >= 0.5 * min(o["end_ns"] - o["start_ns"], s["end"] - s["start"])


def unique(outliers):
    seen, out = set(), []
    for o in outliers:
        key = (o.get("tid"), o.get("start_ns"))
        if key in seen or o.get("kind") == "request":
            continue
        seen.add(key)
        out.append(o)
    return out


def in_window(o, window):
    return window is None or (o["start_ns"] <= window[1] and o["end_ns"] >= window[0])


def describe(o, roles):
    return {"tid": o["tid"], "comm": o.get("comm"), "role": roles.get(o["tid"]),
            "syscall": o.get("syscall"), "ms": round(o["duration_ns"] / 1e6, 1),
            "cause": o.get("cause"), "flags": o.get("flags"),
            "user": frames_text((o.get("user_stack") or {}).get("frames")),
            "kernel": frames_text(((o.get("kernel_stacks") or [{}])[0]).get("frames"), 6)}


def interpreter_run_queue(o):
    # Ruby's GVL given up at the end of a timeslice (flag ruby-gvl-yield): the thread was
    # running and waits to run again, as in a CPU's run queue.
    return any(f.startswith("ruby-gvl-yield:") for f in o.get("flags", []))


def waits_on_disk(o):
    return bool(DISK_CAUSE_RE.search(o.get("cause") or ""))


def score(args):
    spans, window, roles = read_gt(args.gt)
    outliers = unique(read_ndjson(args.out))
    idle_lines = read_idle_lines(args.err)
    snap_outliers, snap_idle = read_snapshots(args.snaps)
    min_ns = int(args.min_ms * 1e6)
    latency = [s for s in spans if s["label"] == "latency"]
    # A request's span: any wait in it is latency, none need be (a computation holds none).
    work = [s for s in spans if s["label"] == "work"]
    res = {"name": args.name, "tp": 0, "fn": 0, "filed_idle": 0, "missed": 0, "fp": 0,
           "correct_outliers": 0, "misjudged": [], "report_idle_threads": [],
           "machine_outliers": [], "found": []}
    for s in latency:
        if s["end"] - s["start"] < min_ns:
            continue
        hits = [o for o in outliers if overlaps(o, s)]
        if hits:
            res["tp"] += 1
            res["found"].append({"tid": s["tid"], "role": roles.get(s["tid"]), "what": s["what"],
                                 "ms": round((s["end"] - s["start"]) / 1e6, 1),
                                 "outliers": [describe(o, roles) for o in hits]})
            continue
        res["fn"] += 1
        ms = (s["end"] - s["start"]) / 1e6
        # The idle lines have no times: those of its thread that fit in it (a wait cut in pieces,
        # as a JVM monitor's timed parks, gives several).
        match = [i for i in idle_lines if i["tid"] == s["tid"] and
                 0.2 * ms <= i["ms"] <= ms + 20.0]
        entry = {"verdict": "latency filed idle" if match else "latency missed",
                 "tid": s["tid"], "role": roles.get(s["tid"]), "what": s["what"],
                 "ms": round(ms, 1)}
        if match:
            res["filed_idle"] += 1
            entry["idle_lines"] = sorted({"%s %.1f ms: %s" % (i["syscall"], i["ms"], i["why"])
                                          for i in match})
            sites = sorted({e.get("site") for e in snap_idle if e.get("tid") == s["tid"]})
            if sites:
                entry["idle_sites"] = sites
        else:
            res["missed"] += 1
        res["misjudged"].append(entry)
    for o in outliers:
        if not in_window(o, window):
            continue
        if any(overlaps(o, s) for s in latency + work):
            res["correct_outliers"] += 1
            continue
        if o.get("runqueue_ns", 0) > o.get("blocked_ns", 0) or interpreter_run_queue(o):
            # Mostly a wait for a CPU of the machine (or of its interpreter: Ruby's GVL given up
            # at a timeslice's end): not what the thread waited for.
            d = describe(o, roles)
            d["verdict"] = "waiting for CPU (not scored)"
            res["machine_outliers"].append(d)
            continue
        if waits_on_disk(o):
            # A background thread's write to a disk that other work keeps busy (InnoDB's
            # page flush under a guest's I/O, 215 ms seen): work, not a wait for work.
            d = describe(o, roles)
            d["verdict"] = "waiting for the disk (not scored)"
            res["machine_outliers"].append(d)
            continue
        res["fp"] += 1
        d = describe(o, roles)
        d["verdict"] = "idle reported as latency"
        d["labelled_idle"] = any(overlaps(o, s) for s in spans if s["label"] == "idle")
        res["misjudged"].append(d)
    threads = {}
    for o in unique(snap_outliers):
        if (in_window(o, window) and not any(overlaps(o, s) for s in latency + work) and
                o.get("runqueue_ns", 0) <= o.get("blocked_ns", 0) and not waits_on_disk(o) and
                not interpreter_run_queue(o)):
            threads.setdefault(o["tid"], o.get("comm"))
    res["report_idle_threads"] = [{"tid": t, "comm": c, "role": roles.get(t)}
                                  for t, c in sorted(threads.items())]
    reported = res["correct_outliers"] + res["fp"]
    res["precision"] = res["correct_outliers"] / reported if reported else 1.0
    res["recall"] = res["tp"] / (res["tp"] + res["fn"]) if res["tp"] + res["fn"] else 0.0
    res["idle_waits_logged"] = sum(1 for s in spans if s["label"] == "idle" and
                                   s["end"] - s["start"] >= min_ns)
    return res


def summary_line(r):
    return ("%s: precision %.3f recall %.3f (latency waits %d: found %d, filed idle %d, missed %d;"
            " outliers %d: right %d, idle %d); idle threads in report %d" %
            (r["name"], r["precision"], r["recall"], r["tp"] + r["fn"], r["tp"], r["filed_idle"],
             r["missed"], r["correct_outliers"] + r["fp"], r["correct_outliers"], r["fp"],
             len(r["report_idle_threads"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--gt", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--err")
    ap.add_argument("--snaps")
    ap.add_argument("--min-ms", type=float, default=65.0)
    ap.add_argument("--result")
    ap.add_argument("--found", action="store_true",
                    help="print the outliers found for each latency wait too (their frames)")
    args = ap.parse_args()
    r = score(args)
    print(summary_line(r))
    for m in r["misjudged"] + r["machine_outliers"]:
        print("  " + json.dumps(m, sort_keys=True))
    if args.found:
        for m in r["found"]:
            print("  found: " + json.dumps(m, sort_keys=True))
    if args.result:
        with open(args.result, "w") as f:
            json.dump(r, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
