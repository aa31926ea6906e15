# Writes etom-files-3.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (fourteenth
# round) before any rule for listing a folder was built, and committed before it was measured:
# half asks what a folder holds (no rule yet), half does the operations the file reading knows in
# words it was not built on. Groups as in make_files_2.py.
from set_writer import named, write
MOVE = named("Filesystem MCP Server/move_items", "Model Context Protocol TypeScript Implementation/rename")
COPY = named("Filesystem MCP Server/copy_items")
DELETE = named("Model Context Protocol TypeScript Implementation/delete", "MCP-Delete/delete_file")
STAT = named("Filesystem MCP Server/stat_items", "DAV MCP Server/get_file_or_folder_details")
LIST = named("Model Context Protocol TypeScript Implementation/ls", "Filesystem MCP Server/list_files",
             "DAV MCP Server/list_my_files_and_folders", "Coding Assistant Server/list_dir", "mcp-editor/view")
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
