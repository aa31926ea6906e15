# Writes etom-files-2.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) before any rule for one's own files was built, and committed before it was measured: the
# check of such a rule on words it was not built on. Groups as in make_files.py.
from set_writer import named, write
MOVE = named("Filesystem MCP Server/move_items", "Model Context Protocol TypeScript Implementation/rename")
COPY = named("Filesystem MCP Server/copy_items")
DELETE = named("Model Context Protocol TypeScript Implementation/delete", "MCP-Delete/delete_file")
STAT = named("Filesystem MCP Server/stat_items", "DAV MCP Server/get_file_or_folder_details")
LIST = named("Model Context Protocol TypeScript Implementation/ls", "Filesystem MCP Server/list_files",
             "DAV MCP Server/list_my_files_and_folders", "Coding Assistant Server/list_dir", "mcp-editor/view")
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
