#!/usr/bin/env python3
"""Statement merging, measured by hand (docs/benchmark.md, "Merging statements").

Takes the general log of a paraply target that applied a MIXED sysbench
write_only backlog and writes two SQL files for one client, the target
transactions in commit order:

  orig.sql    the packets paraply sent, as they were
  merged.sql  the same, with each compound statement's sysbench statements
              merged: every statement gets a level one above the last
              statement of the packet that touched the same row (table, id);
              within a level, statements of one table and shape become one
              (DELETE ... WHERE id IN (...), a multi-row INSERT,
              UPDATE ... SET k=k+1 WHERE id IN (...), UPDATE ... SET
              c=CASE id WHEN ... END WHERE id IN (...)), levels in order.
              Statements of a level touch distinct rows, so any order of
              them leaves the same rows. The clock's SET is kept only
              before the first statement: sysbench's statements read no
              clock. A compound with any other statement is left as it is.

usage: statement-merge.py general.log orig.sql merged.sql

Then, on targets started from the same snapshot as paraply's (with the
paraply schema created, `mariadb-dump --no-data --databases paraply` of a
target paraply ran on), run each file through
`mariadb --default-character-set=utf8mb4 --max-allowed-packet=256M < FILE`,
read the target's CPU from /proc/PID/stat before and after, and compare
`CHECKSUM TABLE` of the sbtest tables with the source's.
"""
import re, sys
from collections import defaultdict
hdr = re.compile(r'^(?:\d{6} [\d:]+)?\t\s+(\d+) (\w+)\t?(.*)$')
entries = []  # (conn, cmd, text)
cur = None
for line in open(sys.argv[1], encoding='utf-8', errors='surrogateescape'):
    line = line.rstrip('\n')
    m = hdr.match(line)
    if m:
        cur = [int(m.group(1)), m.group(2), m.group(3)]
        entries.append(cur)
    elif cur is not None:
        cur[2] += '\n' + line
open_tx = defaultdict(list); txns = []
for conn, cmd, text in entries:
    if cmd != 'Query': continue
    if text == 'START TRANSACTION':
        open_tx[conn] = [text]
    elif conn in open_tx and open_tx[conn]:
        open_tx[conn].append(text)
        if text == 'COMMIT':
            txns.append(open_tx.pop(conn))
sys.stderr.write(f"{len(txns)} target transactions\n")

upd = re.compile(r"^UPDATE (sbtest\d+) SET (\w+)=(.*) WHERE id=(\d+)$", re.S)
dele = re.compile(r"^DELETE FROM (sbtest\d+) WHERE id=(\d+)$")
ins = re.compile(r"^INSERT INTO (sbtest\d+) \(id, k, c, pad\) VALUES \((\d+), (.*)\)$", re.S)
stats = defaultdict(int)
def merge(body):
    # body: statements of a compound, separated by "\n;"
    stmts = [s.strip() for s in body.split('\n;') if s.strip()]
    head, items = [], []
    for s in stmts:
        while s.startswith('SET @@session.'):
            setpart, _, s = s.partition(';\n')
            if not items: head.append(setpart)  # sysbench's statements read no clock
            s = s.strip()
        if not s: continue
        m = upd.match(s)
        if m: items.append(('U', m.group(1), m.group(2), m.group(3), int(m.group(4)), s)); continue
        m = dele.match(s)
        if m: items.append(('D', m.group(1), None, None, int(m.group(2)), s)); continue
        m = ins.match(s)
        if m: items.append(('I', m.group(1), None, m.group(3), int(m.group(2)), s)); continue
        return None  # not a known shape: leave the compound as it is
    # levels: one more than the last statement that touched the same row
    level_of = {}; levels = defaultdict(list)
    for it in items:
        key = (it[1], it[4])
        lv = level_of.get(key, -1) + 1
        level_of[key] = lv
        levels[lv].append(it)
    out = list(head)
    for lv in sorted(levels):
        groups = defaultdict(list)
        for it in levels[lv]:
            g = (it[0], it[1], it[2]) if it[0] != 'U' or it[2] != 'k' else ('U', it[1], 'k', it[3])
            groups[g].append(it)
        for g, its in groups.items():
            kind, tbl = g[0], g[1]
            ids = ','.join(str(i[4]) for i in its)
            if kind == 'D':
                out.append(f"DELETE FROM {tbl} WHERE id IN ({ids})")
            elif kind == 'I':
                out.append(f"INSERT INTO {tbl} (id, k, c, pad) VALUES " + ','.join(f"({i[4]}, {i[3]})" for i in its))
            elif g[2] == 'k' and len(g) == 4:
                out.append(f"UPDATE {tbl} SET k={g[3]} WHERE id IN ({ids})")
            else:
                col = g[2]
                out.append(f"UPDATE {tbl} SET {col}=CASE id " + ' '.join(f"WHEN {i[4]} THEN {i[3]}" for i in its) + f" ELSE {col} END WHERE id IN ({ids})")
            stats['out'] += 1
    stats['in'] += len(items)
    return '\n;'.join(out) + '\n;'
with open(sys.argv[2], 'w') as o, open(sys.argv[3], 'w') as m:
    o.write('DELIMITER $$\n'); m.write('DELIMITER $$\n')
    for t in txns:
        for q in t:
            o.write(q + '$$\n')
            mq = q
            if 'BEGIN NOT ATOMIC\n' in q and q.endswith(';END'):
                pre, rest = q.split('BEGIN NOT ATOMIC\n', 1)
                body = rest[:-len('END')]
                mb = merge(body)
                if mb is not None:
                    mq = pre + 'BEGIN NOT ATOMIC\n' + mb + 'END'
            m.write(mq + '$$\n')
sys.stderr.write(f"statements {stats['in']} -> {stats['out']}\n")
