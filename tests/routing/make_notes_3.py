# Writes etom-notes-3.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the note-taking reading (registry/src/routing/notes.rs) was built, and committed
# before it was measured: looking something up in one's notes in everyday words ("what did I jot
# down about …", "pull up my notes on …"), the other half of note-taking, which shares its verbs.
# Each has one group: every tool of the catalog's note apps that finds or reads a note by its
# words or its title, or the named app's.
from catalog_groups import NOTE_FIND as FIND, OBSIDIAN_FIND as OBSIDIAN
from set_writer import named, write
BEAR = named("Bear MCP Server/get_note")
NOTEPLAN = named("NotePlan MCP Server/search_notes", "NotePlan MCP Server/get_notes",
                 "NotePlan MCP Server/get_note_by_id")
Q = [
    ("What did I jot down about the lease renewal?", [FIND]),
    ("Where did I write down the gate code?", [FIND]),
    ("Pull up my notes on the Q3 offsite", [FIND]),
    ("Find the idea I stashed about old maps", [FIND]),
    ("Show me what I saved in Bear about sourdough", [BEAR]),
    ("Did I ever make a note of the plumber's number?", [FIND]),
    ("Look through my Obsidian vault for anything on Kubernetes", [OBSIDIAN]),
    ("Read me back what I scribbled down after the dentist visit", [FIND]),
    ("What's in my NotePlan note called 'Garden plans'?", [NOTEPLAN]),
    ("Remind me what I noted about the car insurance", [FIND]),
]
write("etom-notes-3.jsonl", "NL", Q)
