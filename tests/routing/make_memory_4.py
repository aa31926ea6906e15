# Writes etom-memory-4.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) after the memory reading's final form and committed before it was measured: its figure on
# words no form was built on. Groups as in make_memory.py.
from catalog_groups import MEMORY_ADD as ADD, MEMORY_DELETE as DELETE, MEMORY_SEARCH as SEARCH
from set_writer import write
Q=[
 ("Hold on to this: my passport expires in March 2027", ADD),
 ("Keep track of the fact that Omar prefers morning meetings", ADD),
 ("FYI, I moved to Leeds last month", ADD),
 ("Have I ever told you which team I support?", SEARCH),
 ("What do you know about my sister?", SEARCH),
 ("Is my blood type something you have stored?", SEARCH),
 ("Delete whatever you remember about my ex", DELETE),
 ("I don't want you to remember my salary anymore", DELETE),
]
write("etom-memory-4.jsonl", "MH", [(q, [group]) for q, group in Q])
