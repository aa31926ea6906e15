# Writes etom-notes-4.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the note reading's last form (making a note, and looking one up) and committed
# before it was measured: both halves in other words. Groups as in make_notes.py (making a note)
# and make_notes_3.py (looking one up).
from catalog_groups import NOTE_FIND as FIND, NOTE_MAKE as NOTE, OBSIDIAN_FIND as OBSIDIAN
from set_writer import write
Q = [
    ("Could you find what I jotted about the boiler service?", [FIND]),
    ("Note this down: the locker combination is 12-34-08", [NOTE]),
    ("Scribble this somewhere: call the vet about Max's shots", [NOTE]),
    ("Where's that thought I saved about a standing desk?", [FIND]),
    ("Write down that the car's tyre pressure is 32 psi", [NOTE]),
    ("Which recipe did I stash in Obsidian last week?", [OBSIDIAN]),
    ("Keep a log of my runs this week: Monday 5k, Wednesday 8k", [NOTE]),
    ("Hang on to this for me: the office guest wifi is Corp-Guest", [NOTE]),
    ("Look up what we jotted down during the sprint retro", [FIND]),
    ("Make a record of today's mileage: 42 miles", [NOTE]),
]
write("etom-notes-4.jsonl", "NM", Q)
