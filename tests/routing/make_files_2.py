# Writes etom-files-2.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) before any rule for one's own files was built, and committed before it was measured: the
# check of such a rule on words it was not built on. Groups in catalog_groups.py.
from set_writer import write
from catalog_groups import FILE_LIST as LIST, FILE_MOVE as MOVE, FILE_COPY as COPY, FILE_DELETE as DELETE, FILE_STAT as STAT
Q = [
    ("Duplicate slides.pptx so I have a backup", [COPY]),
    ("Trash the screenshot ~/Desktop/shot-01.png", [DELETE]),
    ("Move song.mp3 into my Music folder", [MOVE]),
    ("When was contract.pdf last modified?", [STAT]),
    ("Delete the old CSV export in ~/exports/users-2023.csv", [DELETE]),
    ("Shift the photos from ~/Camera to ~/Pictures/2026", [MOVE]),
    ("What files are sitting in ~/projects/site?", [LIST]),
    ("What's the size of backup.zip?", [STAT]),
]
write("etom-files-2.jsonl", "FM", Q)
