# Writes etom-notes-2.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) before any note-taking reading was built, and committed before it was measured: the
# measure of that reading on words it was not built on (the reading is built on etom-notes.jsonl
# only). Groups as in make_notes.py.
from catalog_groups import NOTE_MAKE as NOTE
from set_writer import named, write
BEAR = named("Bear MCP Server/create_note")
NOTEPLAN = named("NotePlan MCP Server/create_note")
HACKMD = named("HackMD MCP Server/create_note")
Q = [
    ("Write this down for me: the gate code is 4471", [NOTE]),
    ("Make a quick note that the plumber comes on the 3rd", [NOTE]),
    ("Scribble down these gift ideas for mum: scarf, teapot, a novel", [NOTE]),
    ("Add this to my notes: the hotel in Lisbon was Casa Amora", [NOTE]),
    ("Can you save these lecture points as a note in NotePlan?", [NOTEPLAN]),
    ("Keep this thought somewhere safe: offer a student discount", [NOTE]),
    ("Pop the recipe for banana bread into Bear", [BEAR]),
    ("File away these interview impressions in HackMD: strong on SQL, weak on testing", [HACKMD]),
    ("I want a note of my bike's serial number, WTU123", [NOTE]),
    ("Record in my notebook that the tomato seedlings sprouted today", [NOTE]),
    ("Journal entry for today: long walk by the river, felt good", [NOTE]),
    ("Take notes on this: the quarterly numbers are up 8%", [NOTE]),
]
write("etom-notes-2.jsonl", "NS", Q)
