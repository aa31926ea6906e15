# Shared by the generators of our routing sets (README.md): the catalog given as the first argument
# (ETOM's by default), every tool a set names checked against it, and the writing of a set.
import json
import os
import sys
C=sys.argv[1] if len(sys.argv)>1 else "../shared/routing-eval/etom/catalog.jsonl"
cat={(x['server'],x['name']) for x in map(json.loads,open(C))}
def t(s,n):
    assert (s,n) in cat,(s,n); return {"server":s,"name":n}
def named(*names):
    """Tools written "server/name", each checked against the catalog."""
    return [t(*n.split("/",1)) for n in names]
def write(name, prefix, requests):
    """Writes requests [(query, [group, ...])] to NAME next to this file, with ids PREFIX-001, …
    and each group's first tool as `relevant`."""
    out=os.path.join(os.path.dirname(os.path.abspath(__file__)),name)
    with open(out,"w") as f:
        for i,(q,groups) in enumerate(requests,1):
            rel=[grp[0] for grp in groups]
            f.write(json.dumps({"id":f"{prefix}-{i:03d}","query":q,"relevant":rel,"relevant_groups":groups})+"\n")
    print(len(requests),"requests ->",out)
