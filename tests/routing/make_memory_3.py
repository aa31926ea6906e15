# Writes etom-memory-3.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the memory reading was widened on etom-memory-2.jsonl, and committed before it was
# measured: its figure on words no form was built on. Groups as in make_memory.py.
from catalog_groups import MEMORY_ADD as ADD, MEMORY_DELETE as DELETE, MEMORY_SEARCH as SEARCH
from set_writer import write
Q=[
 ("For future reference, my shoe size is 44", ADD),
 ("Please take note: the kids' school starts at 8:15", ADD),
 ("Did I ever tell you my wife's name?", SEARCH),
 ("What have I told you about my knee injury?", SEARCH),
 ("Do you still have my old address on file?", SEARCH),
 ("Erase everything you remember about the Zephyr deal", DELETE),
 ("Stop remembering my work schedule", DELETE),
 ("Just so you know, I'm allergic to penicillin", ADD),
]
write("etom-memory-3.jsonl", "MG", [(q, [group]) for q, group in Q])
