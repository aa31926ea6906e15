# Writes dev52-phrasings.jsonl (tests/routing/README.md): requests over the 52-tool dev catalog
# (../shared/routing-eval/catalog.jsonl, given as the first argument), in other words than its
# own queries, checking that every tool named exists. Written 2026-11-28 (eleventh round) and
# committed before it was measured, to see whether the dev set's figure carries to phrasings
# nobody tuned on: the held-out "other phrasings of the 52 tools" is measured from outside only.
# Casual and indirect wording, questions, the user's own vocabulary ("undo", "forget", "stash"),
# no tool names. Each group holds every tool that does the request.
import json
import os
import sys
C=sys.argv[1] if len(sys.argv)>1 else "../shared/routing-eval/catalog.jsonl"
cat={(x['server'],x['name']) for x in map(json.loads,open(C))}
def g(*names):
    out=[]
    for n in names:
        s,t=n.split("/")
        assert (s,t) in cat,(s,t); out.append({"server":s,"name":t})
    return out
Q=[
 ("is my working tree clean?", [g("git/git_status")]),
 ("what have I changed that isn't staged yet", [g("git/git_diff_unstaged")]),
 ("show me what's about to go into the next commit", [g("git/git_diff_staged")]),
 ("undo my git add, nothing should be staged", [g("git/git_reset")]),
 ("which branches exist in this repo?", [g("git/git_branch")]),
 ("hop over to the release-2.1 branch", [g("git/git_checkout")]),
 ("who touched the code in the last ten commits and why", [g("git/git_log")]),
 ("stage src/main.rs for me", [g("git/git_add")]),
 ("commit what's staged with the message 'fix typo in README'", [g("git/git_commit")]),
 ("what exactly did commit 3f2a9c1 change?", [g("git/git_show")]),
 ("start a feature/login branch off main", [g("git/git_create_branch")]),
 ("how does develop differ from main", [g("git/git_diff")]),
 ("rename notes.txt to notes-old.txt", [g("filesystem/move_file")]),
 ("make me a folder build/out", [g("filesystem/create_directory")]),
 ("how much space does each file in ~/Downloads take?", [g("filesystem/list_directory_with_sizes")]),
 ("find every .env file anywhere under the project", [g("filesystem/search_files")]),
 ("when was report.pdf last modified?", [g("filesystem/get_file_info")]),
 ("which folders are you allowed to touch?", [g("filesystem/list_allowed_directories")]),
 ("in app.py change the line 'debug = True' to 'debug = False'", [g("filesystem/edit_file")]),
 ("replace everything in todo.md with: buy milk, call mom", [g("filesystem/write_file")]),
 ("draw the folder structure of src as a tree", [g("filesystem/directory_tree")]),
 ("what's inside the docs folder?", [g("filesystem/list_directory","filesystem/list_directory_with_sizes","filesystem/directory_tree")]),
 ("let me see the photo holiday.jpg", [g("filesystem/read_media_file")]),
 ("open README.md, CHANGELOG.md and LICENSE together", [g("filesystem/read_multiple_files")]),
 ("print the text of notes.txt", [g("filesystem/read_text_file","filesystem/read_file")]),
 ("remember that Alice works at Acme as a designer", [g("memory/create_entities","memory/add_observations")]),
 ("note that Bob is Alice's manager", [g("memory/create_relations")]),
 ("forget everything you know about Carol", [g("memory/delete_entities")]),
 ("what do you remember about Alice?", [g("memory/search_nodes","memory/open_nodes")]),
 ("dump your whole memory for me", [g("memory/read_graph")]),
 ("Alice doesn't drink coffee anymore, drop that fact", [g("memory/delete_observations")]),
 ("Alice and Bob aren't colleagues anymore", [g("memory/delete_relations")]),
 ("also remember that Alice speaks French", [g("memory/add_observations")]),
 ("what's the time in Sydney", [g("time/get_current_time")]),
 ("if it's 9am in London, what time is it in Los Angeles?", [g("time/convert_time")]),
 ("grab https://example.com/blog and give me its text", [g("fetch/fetch")]),
 ("what's 17 plus 25", [g("everything/get-sum")]),
 ("say back exactly what I type: hello there", [g("everything/echo")]),
 ("which environment variables does the server see?", [g("everything/get-env")]),
 ("gzip /tmp/server.log for me", [g("everything/gzip-file-as-resource")]),
 ("turn the fake log messages on", [g("everything/toggle-simulated-logging")]),
 ("kick off a long job that reports its progress", [g("everything/trigger-long-running-operation")]),
 ("let's reason through this tricky scheduling problem one thought at a time", [g("seqthink/sequentialthinking")]),
 ("send me the little logo picture", [g("everything/get-tiny-image")]),
]
out=os.path.join(os.path.dirname(os.path.abspath(__file__)),"dev52-phrasings.jsonl")
with open(out,"w") as f:
    for i,(q,groups) in enumerate(Q,1):
        rel=[x for grp in groups for x in grp[:1]]
        f.write(json.dumps({"id":f"DP-{i:03d}","query":q,"relevant":rel,"relevant_groups":groups})+"\n")
print(len(Q),"requests ->",out)
