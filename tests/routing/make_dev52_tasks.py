# Writes dev52-tasks.jsonl (tests/routing/README.md): requests of two or three steps over the
# 52-tool dev catalog (../shared/routing-eval/catalog.jsonl, the first argument), as a developer
# asks an agent with the reference servers (git, filesystem, memory, fetch, time) connected,
# checking that every tool named exists. Written 2026-11-28 (eleventh round) and committed before
# it was measured. One group per step, holding every tool that does it.
from set_writer import named as g, write
READ=g("filesystem/read_text_file","filesystem/read_file")
WRITE=g("filesystem/write_file")
LIST=g("filesystem/list_directory","filesystem/list_directory_with_sizes","filesystem/directory_tree")
REMEMBER=g("memory/create_entities","memory/add_observations")
Q=[
 ("Check what I changed since the last commit, then commit it with the message 'wip: parser'", [g("git/git_diff_unstaged","git/git_status","git/git_diff"), g("git/git_commit")]),
 ("Read config.yaml and remember the database host it names", [READ, REMEMBER]),
 ("Fetch https://example.com/changelog, save it to notes/changelog.md and stage that file", [g("fetch/fetch"), WRITE, g("git/git_add")]),
 ("What time is it in Tokyo? Write it into tokyo.txt", [g("time/get_current_time"), WRITE]),
 ("Create a branch called fix/login, switch to it and show me the status", [g("git/git_create_branch"), g("git/git_checkout"), g("git/git_status")]),
 ("List what's in the src folder and tell me how big each file is", [LIST]),
 ("Look up what you remember about the billing service and put it in docs/billing.md", [g("memory/search_nodes","memory/open_nodes"), WRITE]),
 ("Find every TODO.md under the repo and open them all at once", [g("filesystem/search_files"), g("filesystem/read_multiple_files")]),
 ("Show me the last five commits, then the full diff of the newest one", [g("git/git_log"), g("git/git_show")]),
 ("Make a folder called reports and move summary.pdf into it", [g("filesystem/create_directory"), g("filesystem/move_file")]),
 ("Unstage everything and show me what's left changed in the working tree", [g("git/git_reset"), g("git/git_diff_unstaged","git/git_status")]),
 ("Grab the page at https://example.com/pricing and remember the price of the Pro plan", [g("fetch/fetch"), REMEMBER]),
 ("Convert 3pm Berlin time to New York time and note it in meeting.md", [g("time/convert_time"), WRITE]),
 ("In main.py change 'DEBUG = True' to 'DEBUG = False', then stage main.py", [g("filesystem/edit_file"), g("git/git_add")]),
 ("Forget what you know about the old staging server and remember that staging now runs on k8s-2", [g("memory/delete_entities","memory/delete_observations"), REMEMBER]),
 ("When was package.json last modified, and what does it contain?", [g("filesystem/get_file_info"), READ]),
 ("Show the folder tree of docs and write it into docs/TREE.md", [g("filesystem/directory_tree"), WRITE]),
 ("Which branches do we have, and how does feature/search differ from main?", [g("git/git_branch"), g("git/git_diff")]),
 ("Read the whole knowledge graph and save it as graph.json", [g("memory/read_graph"), WRITE]),
 ("Show me the photo at screenshots/bug.png and list the other files in that folder", [g("filesystem/read_media_file"), LIST]),
]
write("dev52-tasks.jsonl", "DT", Q)
