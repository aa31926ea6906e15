# Writes etom-files.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round, at its end) and committed before it was measured, to find the next gap, not to build on:
# one's own files in everyday words ("what's in my Downloads folder?", "get rid of the old log",
# "make a copy of … before I edit it"). Each has one group: every tool of the catalog's local
# file servers that does the step (read from the descriptions).
from set_writer import named, write
from catalog_groups import FILE_LIST as LIST, FILE_MOVE as MOVE, FILE_COPY as COPY, FILE_DELETE as DELETE, FILE_STAT as STAT
FIND = named("SkyDeckAI Code/search_files", "Coding Assistant Server/find_file", "Code Index MCP/find_files")
READ = named("SkyDeckAI Code/read_file", "Terminal Controller for MCP/read_file", "Coding Assistant Server/read_file",
             "FileScopeMCP (Model Context Protocol) Server/read_file_content", "mcp-editor/view")
MKDIR = named("SkyDeckAI Code/create_directory")
Q = [
    ("What's in my Downloads folder?", [LIST]),
    ("Tidy up: put all the PDFs from ~/Desktop into ~/Documents/pdfs", [MOVE]),
    ("Make a copy of budget.xlsx before I edit it", [COPY]),
    ("Get rid of the old log file at /tmp/app.log", [DELETE]),
    ("Where's the file called invoice-march? I can't find it", [FIND]),
    ("Open up ~/plans/todo.txt and tell me what it says", [READ]),
    ("Make a new folder called 'taxes 2026' in my home directory", [MKDIR]),
    ("How big is ~/Videos/holiday.mp4 and when was it last changed?", [STAT]),
    ("Rename report_final_v2.docx to report.docx", [MOVE]),
    ("Show me everything inside /var/www", [LIST]),
]
write("etom-files.jsonl", "FL", Q)
