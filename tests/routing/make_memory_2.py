# Writes etom-memory-2.jsonl (tests/routing/README.md) from the requests below, checking that every
# tool named exists in the ETOM catalog given as the first argument. Written 2026-11-28 (thirteenth
# round) and committed before it was measured: other everyday words to the assistant's memory than
# the memory reading (registry/src/routing/memory.rs) lists, to find its next gap. Groups as in
# make_memory.py.
from catalog_groups import MEMORY_ADD as ADD, MEMORY_DELETE as DELETE, MEMORY_SEARCH as SEARCH
from set_writer import write
Q=[
 ("Make a mental note that Priya is vegetarian", ADD),
 ("Bear in mind that the office closes early on Fridays", ADD),
 ("What did I tell you about the boiler?", SEARCH),
 ("Have I mentioned my peanut allergy to you before?", SEARCH),
 ("From now on, know that I go by Sam", ADD),
 ("Store this fact for later: the router is in the hallway cupboard", ADD),
 ("Wipe what you know about my old job", DELETE),
 ("Where did I say I parked last time?", SEARCH),
 ("You can drop the stuff about my ex-landlord from memory", DELETE),
 ("Learn that my manager is called Ingrid", ADD),
]
write("etom-memory-2.jsonl", "MF", [(q, [group]) for q, group in Q])
