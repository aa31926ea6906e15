# Writes etom-notes-5.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the note reading's final form and committed before it was measured: the figure of
# that form on words no form was built on. Groups as in make_notes_4.py.
from catalog_groups import NOTE_FIND as FIND, NOTE_MAKE as NOTE
from set_writer import named, write
BEAR = named("Bear MCP Server/create_note")
Q = [
    ("Write this up for me somewhere I can find it later: the boiler was serviced on the 4th", [NOTE]),
    ("Quickly jot the names of the three venues we saw", [NOTE]),
    ("What did we write down about the budget at Monday's sync?", [FIND]),
    ("Throw this into Bear: ideas for the garden party", [BEAR]),
    ("I had a thought about onboarding earlier, can you find where I put it?", [FIND]),
    ("Save this thought for later: a loyalty card for regulars", [NOTE]),
    ("Dig up whatever I jotted about the Lisbon trip", [FIND]),
    ("Log tonight's workout: 3 sets of squats, 20 minutes of rowing", [NOTE]),
]
write("etom-notes-5.jsonl", "NO", Q)
