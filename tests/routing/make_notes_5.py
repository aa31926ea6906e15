# Writes etom-notes-5.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the note reading's final form and committed before it was measured: the figure of
# that form on words no form was built on. Groups as in make_notes_4.py.
from set_writer import named, write
NOTE = named("HackMD MCP Server/create_note", "NotePlan MCP Server/create_note", "Bear MCP Server/create_note",
             "Obsidian Local REST API MCP Server/create_note", "Basic Memory/write_note")
FIND = named("NotePlan MCP Server/search_notes", "NotePlan MCP Server/get_notes",
             "Obsidian MCP Server/search_vault", "Obsidian MCP Server/get_note_content",
             "Obsidian Local REST API MCP Server/get_note", "Obsidian Local REST API MCP Server/list_notes",
             "Bear MCP Server/get_note", "HackMD MCP Server/get_note",
             "Basic Memory/search", "Basic Memory/read_note")
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
