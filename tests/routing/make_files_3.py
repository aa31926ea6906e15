# Writes etom-files-3.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (fourteenth
# round) before any rule for listing a folder was built, and committed before it was measured:
# half asks what a folder holds (no rule yet), half does the operations the file reading knows in
# words it was not built on. Groups in catalog_groups.py.
from set_writer import write
from catalog_groups import FILE_LIST as LIST, FILE_MOVE as MOVE, FILE_COPY as COPY, FILE_DELETE as DELETE, FILE_STAT as STAT
Q = [
    ("Show me everything inside ~/Downloads", [LIST]),
    ("Which files are in /var/log/nginx?", [LIST]),
    ("List the contents of the folder ~/projects/api", [LIST]),
    ("What's stored under /srv/backups right now?", [LIST]),
    ("Clone report-final.docx as report-v2.docx", [COPY]),
    ("Rename draft.md to README.md", [MOVE]),
    ("Wipe /tmp/cache.bin", [DELETE]),
    ("How large is dump.sql?", [STAT]),
]
write("etom-files-3.jsonl", "FN", Q)
