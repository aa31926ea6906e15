# Writes etom-notes.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (twelfth
# round, at its end) and committed before it was measured, to find the next gap, not to build on:
# putting something in one's notes in everyday words ("jot down", "write this up", "stash this
# idea"), each with one group: every tool of the catalog's note apps that makes a note (HackMD,
# NotePlan, Bear, Obsidian, Basic Memory's write_note), or the named app's where one is named.
from catalog_groups import NOTE_MAKE as NOTE
from set_writer import named, write
BEAR = named("Bear MCP Server/create_note")
OBSIDIAN = named("Obsidian Local REST API MCP Server/create_note")
Q = [
    ("Jot down: the wifi password at the cabin is 'pinecone42'", [NOTE]),
    ("Write up what we decided about the launch date as a note", [NOTE]),
    ("Stash this idea somewhere: a podcast about old maps", [NOTE]),
    ("Put the three book recommendations from Tom in my notes", [NOTE]),
    ("Start a new note called 'Garden plans' with a list of seeds to buy", [NOTE]),
    ("Capture these meeting takeaways in Bear: budget approved, hire two engineers", [BEAR]),
    ("Save this recipe to my Obsidian vault as 'Lentil soup'", [OBSIDIAN]),
    ("Can you keep a written record of my blood pressure reading: 120 over 80", [NOTE]),
    ("Draft a note with the packing list for the ski trip", [NOTE]),
    ("Log today's reading: finished chapter 4 of Dune", [NOTE]),
]
write("etom-notes.jsonl", "NT", Q)
